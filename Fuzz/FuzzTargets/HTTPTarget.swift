import HTTPServer
import Internals

#if canImport(Glibc)
    import Glibc
#endif

/// The `http` target: the request parser of `receipt-tool serve`'s HTTP server
/// (``HTTPRequestParser``, the state machine the connection runs on received bytes) over the input
/// as a stream of pipelined requests, as the connection drives it (empty lines dropped between
/// requests), under the server's default limits and under small ones the fuzzer can reach.
/// Oracles:
/// - the parser removes only a prefix of the bytes it was given, and a request's `consumed` is
///   exactly what it removed (never past the input); a failure stays the same when asked again,
///   and is a 4xx or 5xx;
/// - the input split into pieces (every byte apart, or in pseudo-random pieces of at most 32
///   bytes; in two at every position of short inputs or at a few pseudo-random ones; at several
///   pseudo-random positions) gives the same requests, offsets and ending as the whole input;
/// - an accepted request keeps every limit (body size, field count, head size), has one Host in
///   HTTP/1.1, never both Content-Length and Transfer-Encoding, a body of its Content-Length, and a
///   `100 Continue` only when it asked for one and none of its body had arrived;
/// - its bytes re-read by a reference written here (head end, Content-Length body, or a chunked
///   body de-chunked with a separate grammar) give the same body and end at the same byte;
/// - re-serialised canonically (request line, fields, Content-Length body), it parses back to the
///   same method, target, version, fields and body;
/// - a chunk-size line's size (against small and large maximums) agrees with a reference: the
///   value of its leading hex digits, 413 past the maximum, 400 when anything but chunk
///   extensions follows them.
enum HTTPRequestFuzz {
    /// The server's default limits, and small ones so that every limit is within the fuzzer's reach.
    static let limitSets = [
        HTTPRequestLimits(maximumHeaderSize: 16 << 10, maximumHeaderCount: 100, maximumBodySize: 4 << 20),
        HTTPRequestLimits(maximumHeaderSize: 160, maximumHeaderCount: 6, maximumBodySize: 200),
    ]

    /// One request as parsed, and where it was in the input.
    struct Parsed: Equatable {
        let method: String
        let target: String
        let minorVersion: Int
        let headers: [HTTPHeader]
        let body: [UInt8]
        /// The input offsets of its first byte (after empty lines) and of the byte after it.
        let start: Int
        let end: Int

        init(_ request: HTTPRequest, start: Int, end: Int) {
            method = request.method
            target = request.target
            minorVersion = request.minorVersion
            headers = request.headers
            body = request.body
            self.start = start
            self.end = end
        }
    }

    /// How the input ended.
    enum End: Equatable {
        /// Every byte was consumed (at most empty lines after the last request).
        case idle
        /// A request began at `start` and has not fully arrived.
        case incomplete(start: Int, readingBody: Bool)
        /// A request was refused.
        case failed(HTTPRequestError)
    }

    struct Outcome: Equatable {
        var requests: [Parsed] = []
        var end = End.idle
    }

    static func run(_ bytes: [UInt8]) {
        chunkSizeOracle(bytes)
        var generator = SplitMix64(seed: bytes.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 })
        for limits in limitSets {
            let whole = feed(bytes, cuts: bytes.isEmpty ? [] : [bytes.count], limits: limits)
            for request in whole.requests {
                referenceOracle(request, bytes, limits: limits)
                roundTrip(request, limits: limits)
            }
            // Pieces: every byte apart (short inputs), two pieces at every position (very short
            // inputs) or at a few pseudo-random ones, and a few pseudo-random cuts into many pieces.
            var schedules: [[Int]] = []
            if bytes.count >= 2 {
                if bytes.count <= 1024 {
                    schedules.append(Array(1...bytes.count))
                } else if bytes.count <= 64 << 10 {
                    var cuts: [Int] = []
                    var cut = 0
                    while cut < bytes.count {
                        cut = min(bytes.count, cut + Int(generator.next() % 32) + 1)
                        cuts.append(cut)
                    }
                    schedules.append(cuts)
                }
                let positions =
                    bytes.count <= 48
                    ? Array(1..<bytes.count) : (0..<4).map { _ in Int(generator.next() % UInt64(bytes.count - 1)) + 1 }
                for cut in positions { schedules.append([cut, bytes.count]) }
                for _ in 0..<3 {
                    let count = Int(generator.next() % 16) + 2
                    let cuts = Set((0..<count).map { _ in Int(generator.next() % UInt64(bytes.count - 1)) + 1 })
                    schedules.append(cuts.sorted() + [bytes.count])
                }
            }
            for cuts in schedules where !bytes.isEmpty {
                let pieces = feed(bytes, cuts: cuts, limits: limits)
                guard pieces == whole else {
                    FuzzTargets.violated(
                        "the input in pieces (\(cuts.prefix(8))…) parsed differently: \(String(describing: pieces).prefix(1500)) vs \(String(describing: whole).prefix(1500))"
                    )
                }
            }
        }
    }

    /// Feeds `input` to a parser in pieces ending at `cuts` (increasing, the last one
    /// `input.count`), as a connection does with what each receive brings, and checks the
    /// parser's own promises on the way.
    static func feed(_ input: [UInt8], cuts: [Int], limits: HTTPRequestLimits) -> Outcome {
        var outcome = Outcome()
        var buffer: [UInt8] = []
        var parser = HTTPRequestParser(limits: limits)
        var fed = 0
        var nextCut = 0
        var start: Int?
        var continueSent = false

        /// The buffer must be what was fed minus a prefix (cheap form: count and first byte).
        func checkSuffix(_ buffer: [UInt8], full: Bool) {
            guard buffer.count <= fed else { FuzzTargets.violated("the buffer holds more than was fed") }
            let tail = input[(fed - buffer.count)..<fed]
            if full {
                guard same(buffer[...], tail) else { FuzzTargets.violated("the parser changed bytes other than a prefix") }
            } else {
                guard buffer.first == tail.first else { FuzzTargets.violated("the parser changed bytes other than a prefix") }
            }
        }

        while true {
            if start == nil {
                let before = buffer.count
                if HTTPRequestParser.dropEmptyLines(&buffer) {
                    guard input[(fed - before)..<(fed - buffer.count)].allSatisfy({ $0 == 0x0D || $0 == 0x0A }) else {
                        FuzzTargets.violated("dropEmptyLines dropped a request byte")
                    }
                    start = fed - buffer.count
                } else {
                    guard input[(fed - before)..<fed].allSatisfy({ $0 == 0x0D || $0 == 0x0A }) else {
                        FuzzTargets.violated("dropEmptyLines dropped a request byte")
                    }
                    guard nextCut < cuts.count else { return outcome }
                    buffer += input[fed..<cuts[nextCut]]
                    fed = cuts[nextCut]
                    nextCut += 1
                    continue
                }
            }
            guard let begin = start else { continue }
            let step = parser.parse(&buffer)
            switch step {
            case .needMoreBytes:
                checkSuffix(buffer, full: false)
                guard nextCut < cuts.count else {
                    checkSuffix(buffer, full: true)
                    outcome.end = .incomplete(start: begin, readingBody: parser.isReadingBody)
                    return outcome
                }
                buffer += input[fed..<cuts[nextCut]]
                fed = cuts[nextCut]
                nextCut += 1
            case .sendContinue:
                guard buffer.isEmpty, !continueSent, parser.isReadingBody else {
                    FuzzTargets.violated("100 Continue promised twice, or with body bytes already there")
                }
                continueSent = true
            case .request(let request, let consumed):
                checkSuffix(buffer, full: true)
                guard consumed > 0, begin + consumed == fed - buffer.count else {
                    FuzzTargets.violated("consumed \(consumed) is not what the parser removed")
                }
                checkRequest(request, limits: limits, continueSent: continueSent)
                outcome.requests.append(Parsed(request, start: begin, end: begin + consumed))
                start = nil
                continueSent = false
            case .failed(let error):
                checkSuffix(buffer, full: true)
                guard (400...599).contains(error.status) else { FuzzTargets.violated("status \(error.status) from the parser") }
                guard case .failed(let again) = parser.parse(&buffer), again == error else {
                    FuzzTargets.violated("a failed parser did not stay failed")
                }
                outcome.end = .failed(error)
                return outcome
            }
        }
    }

    /// Byte equality (memcmp: the fuzz build is unoptimised).
    static func same(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in
                guard let left = x.baseAddress, let right = y.baseAddress else { return true }
                return memcmp(left, right, x.count) == 0
            }
        }
    }

    static func isToken(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    static func values(_ request: HTTPRequest, _ name: String) -> [String] {
        request.headers.filter { $0.name.lowercased() == name }.map(\.value)
    }

    /// What every accepted request must be.
    static func checkRequest(_ request: HTTPRequest, limits: HTTPRequestLimits, continueSent: Bool) {
        guard request.body.count <= limits.maximumBodySize else { FuzzTargets.violated("a body over the limit") }
        guard request.headers.count <= limits.maximumHeaderCount else { FuzzTargets.violated("more fields than the limit") }
        guard request.minorVersion == 0 || request.minorVersion == 1 else { FuzzTargets.violated("HTTP/1.\(request.minorVersion)") }
        guard !request.method.isEmpty, request.method.utf8.allSatisfy(isToken) else { FuzzTargets.violated("a method that is no token") }
        guard request.target.hasPrefix("/") || request.target == "*" else { FuzzTargets.violated("target \(request.target)") }
        for header in request.headers {
            guard !header.name.isEmpty, header.name.utf8.allSatisfy(isToken) else { FuzzTargets.violated("a field name that is no token") }
            let scalars = header.value.unicodeScalars
            guard scalars.allSatisfy({ $0.value < 0x100 && ($0.value == 0x09 || ($0.value >= 0x20 && $0.value != 0x7F)) }),
                scalars.first.map({ $0 != " " && $0 != "\t" }) ?? true, scalars.last.map({ $0 != " " && $0 != "\t" }) ?? true
            else { FuzzTargets.violated("a field value with a control character or surrounding space") }
        }
        let hosts = values(request, "host")
        guard request.minorVersion == 0 ? hosts.count <= 1 : hosts.count == 1 else { FuzzTargets.violated("\(hosts.count) Host fields") }
        let lengths = values(request, "content-length").flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
        let encodings = values(request, "transfer-encoding")
        guard lengths.isEmpty || encodings.isEmpty else { FuzzTargets.violated("both Content-Length and Transfer-Encoding") }
        for length in lengths {
            let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
            var digits = Array(length.utf8)[...]
            while let first = digits.first, isSpace(first) { digits = digits.dropFirst() }
            while let last = digits.last, isSpace(last) { digits = digits.dropLast() }
            guard !digits.isEmpty, digits.allSatisfy({ (0x30...0x39).contains($0) }),
                let value = Int(String(decoding: digits, as: UTF8.self)), value == request.body.count
            else {
                FuzzTargets.violated("a body of \(request.body.count) bytes under Content-Length \(length)")
            }
        }
        if !encodings.isEmpty, request.minorVersion != 1 { FuzzTargets.violated("chunked in HTTP/1.0") }
        if ["POST", "PUT", "PATCH"].contains(request.method), lengths.isEmpty, encodings.isEmpty {
            FuzzTargets.violated("a \(request.method) without Content-Length")
        }
        if continueSent {
            let expectations = values(request, "expect")
            guard request.minorVersion == 1, !expectations.isEmpty, expectations.allSatisfy({ $0.lowercased() == "100-continue" }),
                !encodings.isEmpty || request.body.count > 0
            else { FuzzTargets.violated("100 Continue for a request that did not expect it") }
        }
    }

    /// Re-reads an accepted request's bytes without the parser: the head ends at the first empty
    /// line, within the limit; then comes exactly the body of its Content-Length, or a chunked body
    /// that a separate de-chunker reads to the same bytes, ending where the parser said.
    static func referenceOracle(_ request: Parsed, _ input: [UInt8], limits: HTTPRequestLimits) {
        // The first LF that follows an LF, or an LF and a CR, ends the head.
        let lineFeeds = (request.start + 1..<request.end).lazy.filter { input[$0] == 0x0A }
        let terminator = lineFeeds.first { index in
            input[index - 1] == 0x0A || (index - 2 >= request.start && input[index - 1] == 0x0D && input[index - 2] == 0x0A)
        }
        guard let terminator else { FuzzTargets.violated("an accepted request without an empty line") }
        let headEnd = input[terminator - 1] == 0x0A ? terminator - 1 : terminator - 2
        let bodyStart = terminator + 1
        guard headEnd - request.start <= limits.maximumHeaderSize else { FuzzTargets.violated("a head over the limit") }
        let rest = input[bodyStart..<request.end]
        if request.headers.contains(where: { $0.name.lowercased() == "transfer-encoding" }) {
            guard let (body, used) = dechunk(rest), used == rest.count, body == request.body else {
                FuzzTargets.violated("the reference de-chunker disagrees")
            }
        } else {
            guard same(rest, request.body[...]) else { FuzzTargets.violated("the body is not the bytes after the head") }
        }
    }

    /// A chunked body read by the reference grammar: its bytes and how many input bytes it took.
    static func dechunk(_ bytes: ArraySlice<UInt8>) -> ([UInt8], Int)? {
        var rest = bytes
        func line() -> ArraySlice<UInt8>? {
            guard let lf = rest.firstIndex(of: 0x0A), lf > rest.startIndex, rest[lf - 1] == 0x0D else { return nil }
            let text = rest[rest.startIndex..<(lf - 1)]
            guard !text.contains(0x0D) else { return nil }
            rest = rest[(lf + 1)...]
            return text
        }
        var body: [UInt8] = []
        while true {
            guard let sizeLine = line(), case .size(let size) = referenceChunkSize(sizeLine, maximum: Int.max) else { return nil }
            if size == 0 { break }
            guard rest.count >= size + 2 else { return nil }
            body += rest.prefix(size)
            rest = rest.dropFirst(size)
            guard rest.starts(with: [0x0D, 0x0A]) else { return nil }
            rest = rest.dropFirst(2)
        }
        while true {
            guard let field = line() else { return nil }
            if field.isEmpty { return (body, bytes.count - rest.count) }
            guard let colon = field.firstIndex(of: UInt8(ascii: ":")), colon > field.startIndex,
                field[..<colon].allSatisfy(isToken), field[(colon + 1)...].allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) })
            else { return nil }
        }
    }

    /// The request re-serialised canonically parses back to itself.
    static func roundTrip(_ request: Parsed, limits: HTTPRequestLimits) {
        func isFraming(_ name: String) -> Bool { ["content-length", "transfer-encoding"].contains(name.lowercased()) }
        let framed = request.headers.contains { isFraming($0.name) }
        var bytes = Array("\(request.method) \(request.target) HTTP/1.\(request.minorVersion)\r\n".utf8)
        for header in request.headers where !isFraming(header.name) {
            bytes += Array(header.name.utf8) + Array(": ".utf8)
            // Bytes above 0x7F are kept as the characters U+0080 to U+00FF: written back as bytes.
            bytes += header.value.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }
            bytes += [0x0D, 0x0A]
        }
        if framed { bytes += Array("Content-Length: \(request.body.count)\r\n".utf8) }
        bytes += [0x0D, 0x0A]
        bytes += request.body
        // Canonical lines may be longer than the originals (CRLF for LF, ": " for ":").
        let relaxed = HTTPRequestLimits(
            maximumHeaderSize: limits.maximumHeaderSize * 2 + 64, maximumHeaderCount: limits.maximumHeaderCount,
            maximumBodySize: limits.maximumBodySize)
        let again = feed(bytes, cuts: [bytes.count], limits: relaxed)
        guard again.end == .idle, again.requests.count == 1, let parsed = again.requests.first else {
            FuzzTargets.violated("the canonical form does not parse: \(again.end)")
        }
        guard parsed.method == request.method, parsed.target == request.target, parsed.minorVersion == request.minorVersion,
            parsed.body == request.body, parsed.end == bytes.count,
            parsed.headers.filter({ !isFraming($0.name) }) == request.headers.filter({ !isFraming($0.name) })
        else { FuzzTargets.violated("canonical form → parse changed the request") }
    }

    /// What a chunk-size line should give.
    enum ChunkSize: Equatable {
        case size(Int)
        case tooLarge
        case malformed
    }

    /// The reference reading of a chunk-size line: the leading hex digits' value (413 past the
    /// maximum, before anything else is looked at), then a chunk-ext checked on lexemes.
    static func referenceChunkSize(_ line: ArraySlice<UInt8>, maximum: Int) -> ChunkSize {
        let isHex = { (byte: UInt8) in
            (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
        }
        let digits = line.prefix(while: isHex)
        guard !digits.isEmpty else { return .malformed }
        let significant = digits.drop { $0 == UInt8(ascii: "0") }
        // 15 hex digits hold at most 2^60 - 1, more than any limit; more digits are always too many.
        guard significant.count <= 15 else { return .tooLarge }
        let alphabet = Array("0123456789abcdef".utf8)
        var value: UInt64 = 0
        for digit in significant {
            let lower = digit >= UInt8(ascii: "A") && digit <= UInt8(ascii: "F") ? digit + 0x20 : digit
            value = value << 4 | UInt64(alphabet.firstIndex(of: lower) ?? 0)
        }
        guard value <= UInt64(min(maximum, Int.max / 32)) else { return .tooLarge }
        return isChunkExtension(line[digits.endIndex...]) ? .size(Int(value)) : .malformed
    }

    enum Lexeme: Equatable {
        case space, semicolon, equals, token, quoted
    }

    /// `*( BWS ";" BWS token [ BWS "=" BWS ( token / quoted-string ) ] )`, matched on lexemes.
    static func isChunkExtension(_ bytes: ArraySlice<UInt8>) -> Bool {
        var lexemes: [Lexeme] = []
        var rest = bytes
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        let isText = { (byte: UInt8) in byte == 0x09 || (byte >= 0x20 && byte != 0x7F) }
        while let byte = rest.first {
            if isSpace(byte) {
                rest = rest.drop(while: isSpace)
                lexemes.append(.space)
            } else if isToken(byte) {
                rest = rest.drop(while: isToken)
                lexemes.append(.token)
            } else if byte == UInt8(ascii: ";") || byte == UInt8(ascii: "=") {
                rest = rest.dropFirst()
                lexemes.append(byte == UInt8(ascii: ";") ? .semicolon : .equals)
            } else if byte == UInt8(ascii: "\"") {
                rest = rest.dropFirst()
                var closed = false
                while let next = rest.first, !closed {
                    rest = rest.dropFirst()
                    if next == UInt8(ascii: "\"") {
                        closed = true
                    } else if next == UInt8(ascii: "\\") {
                        guard let escaped = rest.first, isText(escaped) else { return false }
                        rest = rest.dropFirst()
                    } else if !isText(next) {
                        return false
                    }
                }
                guard closed else { return false }
                lexemes.append(.quoted)
            } else {
                return false
            }
        }
        // Each extension: [space] ; [space] token, then optionally [space] = [space] (token | quoted).
        var index = 0
        func take(_ lexeme: Lexeme) -> Bool {
            guard index < lexemes.count, lexemes[index] == lexeme else { return false }
            index += 1
            return true
        }
        while index < lexemes.count {
            _ = take(.space)
            guard take(.semicolon) else { return false }
            _ = take(.space)
            guard take(.token) else { return false }
            let mark = index
            _ = take(.space)
            if take(.equals) {
                _ = take(.space)
                guard take(.token) || take(.quoted) else { return false }
            } else {
                index = mark
            }
        }
        return true
    }

    /// Every line of the input (up to 16) as a chunk-size line, against three maximums.
    static func chunkSizeOracle(_ bytes: [UInt8]) {
        for line in bytes.split(separator: 0x0A, maxSplits: 16, omittingEmptySubsequences: false).prefix(16) {
            let text = line.last == 0x0D ? line.dropLast() : line
            for maximum in [0, 0x1F4, Int.max] {
                let expected = referenceChunkSize(text, maximum: maximum)
                let actual: ChunkSize
                do throws(HTTPRequestError) {
                    actual = .size(try HTTPChunk.size(text, maximum: maximum))
                } catch {
                    actual = error.status == 413 ? .tooLarge : .malformed
                    guard error.status == 413 || error.status == 400 else { FuzzTargets.violated("chunk size status \(error.status)") }
                }
                guard actual == expected else { FuzzTargets.violated("chunk size of \(Array(text)): \(actual), reference \(expected)") }
            }
        }
    }
}
