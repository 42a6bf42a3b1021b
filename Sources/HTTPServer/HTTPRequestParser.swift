/// The limits ``HTTPRequestParser`` enforces on one request (``HTTPServerConfiguration`` sets them).
package struct HTTPRequestLimits: Sendable, Hashable {
    /// Largest request head (request line and header fields, up to the empty line); beyond it, `431`.
    package var maximumHeaderSize: Int
    /// Most header fields; beyond it, `431`.
    package var maximumHeaderCount: Int
    /// Largest body, declared or chunked; beyond it, `413`.
    package var maximumBodySize: Int

    /// Creates limits.
    package init(maximumHeaderSize: Int, maximumHeaderCount: Int, maximumBodySize: Int) {
        self.maximumHeaderSize = maximumHeaderSize
        self.maximumHeaderCount = maximumHeaderCount
        self.maximumBodySize = maximumBodySize
    }

    /// The limits of a server configuration.
    package init(_ configuration: HTTPServerConfiguration) {
        self.init(
            maximumHeaderSize: configuration.maximumHeaderSize, maximumHeaderCount: configuration.maximumHeaderCount,
            maximumBodySize: configuration.maximumBodySize)
    }

    /// The longest chunk-size line (size and extensions) of a chunked body; longer is `400`.
    package static let maximumChunkLineSize = 1024
}

/// What one call of ``HTTPRequestParser/parse(_:)`` found.
package enum HTTPParseStep: Sendable {
    /// The buffer ends inside the request: append the bytes that arrive next and call again.
    case needMoreBytes
    /// The head is complete and asked for `Expect: 100-continue`, and none of the body has arrived
    /// yet: answer `100 Continue`, then go on as for ``needMoreBytes``.
    case sendContinue
    /// A complete request. Its `consumed` bytes (head and body) have been removed from the front
    /// of the buffer, which now starts with whatever followed the request (pipelining); the
    /// parser is ready for the next request.
    case request(HTTPRequest, consumed: Int)
    /// The request cannot be served: answer with the error's status and close the connection.
    /// The parser stays failed: further calls return the same error.
    case failed(HTTPRequestError)
}

/// The HTTP/1.1 request parser of ``HTTPServer``: a state machine over the connection's buffer of
/// received bytes, with no sockets and no clocks. The connection appends what it receives and
/// calls ``parse(_:)`` until it gets a request or an error; the fuzz target `http` calls it on
/// whole inputs and on the same inputs in pieces.
///
/// - Head: request line and header fields up to the first empty line (lines end in CRLF or LF),
///   at most ``HTTPRequestLimits/maximumHeaderSize`` bytes (`431`), checked by the head parser.
/// - Body: Content-Length or chunked, never both; chunk-size lines are hex digits then only
///   RFC 9112 chunk extensions, every line of a chunked body ends in CRLF with no other CR, chunk
///   data is followed by CRLF, trailer fields are checked and dropped; the body never exceeds
///   ``HTTPRequestLimits/maximumBodySize`` (`413`).
///
/// The outcome depends only on the bytes, never on how they were split into pieces. Work is
/// linear in the bytes received: a search resumes where the previous call stopped, and bytes
/// of a chunked body already read are dropped from the buffer in large steps.
package struct HTTPRequestParser: Sendable {
    enum Phase: Sendable {
        /// Looking for the empty line that ends the head; the buffer was searched up to `from`.
        case head(from: Int)
        case contentLength(Int)
        case chunkSize
        /// Waiting for a chunk's data and its CRLF.
        case chunkData(Int)
        case trailer
        case failed(HTTPRequestError)
    }

    /// The limits this parser enforces.
    package let limits: HTTPRequestLimits
    var phase = Phase.head(from: 0)
    var head: HTTPRequestHead?
    var body: [UInt8] = []
    /// Bytes of the current request already removed from the front of the buffer.
    var removed = 0
    /// In a chunked body: bytes at the front of the buffer already read (not removed yet).
    var position = 0
    /// In a chunked body: bytes after `position` already searched for the LF of the current line.
    var lineSearched = 0
    /// Bytes of trailer fields so far.
    var trailerBytes = 0

    /// Bytes of a chunked body already read that are dropped from the buffer at once.
    static let compactionThreshold = 64 << 10

    /// A parser at the start of a request.
    package init(limits: HTTPRequestLimits) {
        self.limits = limits
    }

    /// Whether the head is complete and the body is being read (a timeout now is the body's).
    package var isReadingBody: Bool {
        switch phase {
        case .head, .failed: false
        case .contentLength, .chunkSize, .chunkData, .trailer: true
        }
    }

    /// Removes the empty lines (any CR and LF bytes) a client may send before a request
    /// (RFC 9112 section 2.2). Returns whether a request byte now starts the buffer; call it
    /// only between requests.
    package static func dropEmptyLines(_ buffer: inout [UInt8]) -> Bool {
        guard let start = buffer.firstIndex(where: { $0 != 0x0D && $0 != 0x0A }) else {
            buffer.removeAll(keepingCapacity: true)
            return false
        }
        buffer.removeSubrange(0..<start)
        return true
    }

    /// Parses as far as `buffer` allows. `buffer` holds the received bytes not consumed yet,
    /// starting with the request (see ``dropEmptyLines(_:)``); between calls, append to it only.
    /// The parser removes bytes of the current request from its front, never any byte after it.
    package mutating func parse(_ buffer: inout [UInt8]) -> HTTPParseStep {
        do throws(HTTPRequestError) {
            while true {
                switch phase {
                case .failed(let error):
                    return .failed(error)
                case .head(let from):
                    if let step = try parseHead(&buffer, from: from) { return step }
                case .contentLength(let length):
                    guard buffer.count >= length else { return .needMoreBytes }
                    if buffer.count == length {
                        // The usual case: the body is all the buffer holds; take it without a copy.
                        swap(&body, &buffer)
                        buffer.reserveCapacity(16 << 10)
                    } else {
                        body = Array(buffer[0..<length])
                        buffer.removeSubrange(0..<length)
                    }
                    removed += length
                    return complete(&buffer)
                case .chunkSize:
                    guard let line = try chunkedLine(buffer, limit: HTTPRequestLimits.maximumChunkLineSize) else {
                        return .needMoreBytes
                    }
                    let size = try HTTPChunk.size(line, maximum: limits.maximumBodySize - body.count)
                    phase = size == 0 ? .trailer : .chunkData(size)
                case .chunkData(let size):
                    // `size` is at most Int.max / 32 (HTTPChunk.size), so these sums cannot overflow.
                    guard buffer.count - position >= size + 2 else { return .needMoreBytes }
                    body.append(contentsOf: buffer[position..<(position + size)])
                    guard buffer[position + size] == 0x0D, buffer[position + size + 1] == 0x0A else {
                        throw HTTPRequestError(400, "chunk data not followed by CRLF")
                    }
                    position += size + 2
                    if position >= Self.compactionThreshold {
                        buffer.removeSubrange(0..<position)
                        removed += position
                        position = 0
                    }
                    phase = .chunkSize
                case .trailer:
                    // Trailer fields, checked as header fields and then ignored, up to the empty line.
                    guard let line = try chunkedLine(buffer, limit: limits.maximumHeaderSize) else { return .needMoreBytes }
                    if line.isEmpty {
                        buffer.removeSubrange(0..<position)
                        removed += position
                        return complete(&buffer)
                    }
                    trailerBytes += line.count
                    guard trailerBytes <= limits.maximumHeaderSize else { throw HTTPRequestError(431, "trailer fields too large") }
                    guard HTTPChunk.isFieldLine(line) else { throw HTTPRequestError(400, "malformed trailer field") }
                }
            }
        } catch {
            phase = .failed(error)
            body = []
            return .failed(error)
        }
    }

    /// Looks for the end of the head from `from` on; parses the head when it is complete. Returns
    /// the step to report, or nil to go on with the body.
    mutating func parseHead(_ buffer: inout [UInt8], from: Int) throws(HTTPRequestError) -> HTTPParseStep? {
        guard let (end, bodyStart) = Self.headEnd(buffer, from: from) else {
            // A head within the limit ends (LF, optional CR, LF) before index maximumHeaderSize + 3:
            // a buffer that long without one will never hold an acceptable head, however the bytes
            // arrive. (Written so that a limit of Int.max cannot overflow.)
            guard buffer.count - 3 < limits.maximumHeaderSize else {
                throw HTTPRequestError(431, "the request head is larger than \(limits.maximumHeaderSize) bytes")
            }
            // The end is LF, optional CR, LF: it may straddle the last two bytes.
            phase = .head(from: max(1, buffer.count - 2))
            return .needMoreBytes
        }
        guard end <= limits.maximumHeaderSize else {
            throw HTTPRequestError(431, "the request head is larger than \(limits.maximumHeaderSize) bytes")
        }
        let head = try HTTPRequestHead.parse(
            buffer[0..<end], maximumHeaders: limits.maximumHeaderCount, maximumBody: limits.maximumBodySize)
        buffer.removeSubrange(0..<bodyStart)
        removed = bodyStart
        self.head = head
        switch head.framing {
        case .none: return complete(&buffer)
        case .contentLength(let length): phase = .contentLength(length)
        case .chunked: phase = .chunkSize
        }
        return head.expectsContinue && buffer.isEmpty ? .sendContinue : nil
    }

    /// The end of the head in `buffer`, searching from `from`: the index where the head's bytes
    /// end (its last line's LF, which the head parser does not need) and where the body starts.
    static func headEnd(_ buffer: [UInt8], from: Int) -> (end: Int, bodyStart: Int)? {
        var index = max(from, 1)
        while index < buffer.count {
            if buffer[index] == 0x0A {
                if buffer[index - 1] == 0x0A { return (index - 1, index + 1) }
                if index >= 2, buffer[index - 1] == 0x0D, buffer[index - 2] == 0x0A { return (index - 2, index + 1) }
            }
            index += 1
        }
        return nil
    }

    /// The next line of a chunked body, without its CRLF, or nil when it has not fully arrived. It
    /// must end in CRLF, and hold no other CR (a proxy that read such a line differently would
    /// frame the body differently), and at most `limit` bytes before the CRLF.
    mutating func chunkedLine(_ buffer: [UInt8], limit: Int) throws(HTTPRequestError) -> ArraySlice<UInt8>? {
        let start = position
        guard let newline = buffer[(start + lineSearched)...].firstIndex(of: 0x0A) else {
            lineSearched = buffer.count - start
            // Without its LF the line is already longer than `limit` + CR: the same answer as
            // once the LF arrives.
            guard lineSearched - 1 <= limit else { throw HTTPRequestError(400, "chunk line too long") }
            return nil
        }
        // The length is checked first, so that the answer does not depend on whether the LF has
        // arrived yet.
        guard newline - start - 1 <= limit else { throw HTTPRequestError(400, "chunk line too long") }
        guard newline > start, buffer[newline - 1] == 0x0D else {
            throw HTTPRequestError(400, "a chunked-body line not ended by CRLF")
        }
        let line = buffer[start..<(newline - 1)]
        guard !line.contains(0x0D) else { throw HTTPRequestError(400, "a CR inside a chunked-body line") }
        position = newline + 1
        lineSearched = 0
        return line
    }

    /// Ends the current request: hands it out and resets the parser for the next one.
    mutating func complete(_ buffer: inout [UInt8]) -> HTTPParseStep {
        guard let head else {
            let error = HTTPRequestError(500, "no request head")
            phase = .failed(error)
            return .failed(error)
        }
        let request = HTTPRequest(
            method: head.method, target: head.target, minorVersion: head.minorVersion, headers: head.headers, body: body)
        let consumed = removed
        self = HTTPRequestParser(limits: limits)
        return .request(request, consumed: consumed)
    }
}

/// The chunked transfer coding's line grammar (RFC 9112 section 7.1), strictly.
package enum HTTPChunk {
    /// The size of a chunk-size line (without its CRLF): `1*HEXDIG` then only chunk extensions,
    /// `*( BWS ";" BWS token [ BWS "=" BWS ( token / quoted-string ) ] )`. A sign, inner spaces,
    /// `0x` or anything else is 400; a size over `maximum` is 413 (found while the digits are read,
    /// so before the extensions are checked).
    package static func size(_ line: ArraySlice<UInt8>, maximum: Int) throws(HTTPRequestError) -> Int {
        // Bounded well below Int.max, so that `value * 16 + 15` and `size + 2` cannot overflow.
        let maximum = min(maximum, Int.max / 32)
        var index = line.startIndex
        var value = 0
        while index < line.endIndex, let digit = hexValue(line[index]) {
            value = value * 16 + digit
            guard value <= maximum else { throw HTTPRequestError(413, "the body is larger than the limit") }
            index += 1
        }
        guard index > line.startIndex else { throw HTTPRequestError(400, "malformed chunk size") }
        func skipWhitespace() {
            while index < line.endIndex, line[index] == 0x20 || line[index] == 0x09 { index += 1 }
        }
        func token() -> Bool {
            let start = index
            while index < line.endIndex, HTTPRequestHead.isTokenCharacter(line[index]) { index += 1 }
            return index > start
        }
        while index < line.endIndex {
            skipWhitespace()
            guard index < line.endIndex, line[index] == UInt8(ascii: ";") else { throw HTTPRequestError(400, "malformed chunk size") }
            index += 1
            skipWhitespace()
            guard token() else { throw HTTPRequestError(400, "malformed chunk extension") }
            let beforeValue = index
            skipWhitespace()
            guard index < line.endIndex, line[index] == UInt8(ascii: "=") else {
                index = beforeValue
                continue
            }
            index += 1
            skipWhitespace()
            if index < line.endIndex, line[index] == UInt8(ascii: "\"") {
                guard quotedString(line, &index) else { throw HTTPRequestError(400, "malformed chunk extension") }
            } else {
                guard token() else { throw HTTPRequestError(400, "malformed chunk extension") }
            }
        }
        return value
    }

    static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A")) + 10
        default: nil
        }
    }

    /// Moves `index` past a quoted-string that starts at it; false when it is malformed.
    static func quotedString(_ line: ArraySlice<UInt8>, _ index: inout Int) -> Bool {
        index += 1
        while index < line.endIndex {
            let byte = line[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return true
            case UInt8(ascii: "\\"):
                guard index + 1 < line.endIndex, isTextCharacter(line[index + 1]) else { return false }
                index += 2
            default:
                guard isTextCharacter(byte) else { return false }
                index += 1
            }
        }
        return false
    }

    /// HTAB, SP, visible ASCII and obs-text: what a field value or a quoted-pair may hold.
    static func isTextCharacter(_ byte: UInt8) -> Bool { byte == 0x09 || (byte >= 0x20 && byte != 0x7F) }

    /// A trailer field line: `token ":" value` with no control character in the value.
    static func isFieldLine(_ line: ArraySlice<UInt8>) -> Bool {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else { return false }
        return line[..<colon].allSatisfy(HTTPRequestHead.isTokenCharacter) && line[(colon + 1)...].allSatisfy(isTextCharacter)
    }
}
