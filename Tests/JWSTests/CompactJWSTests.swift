import Foundation
import Internals
import JSON
import JWS
import Testing

/// The compact-serialization splitter: exact signing input, strict base64url, header parsing,
/// limits, and every rule's negative with its code and offset in the token.
@Suite struct CompactJWSTests {
    static let realTokenPath = "jws/gopay/sandbox-transaction-2000000184445477.jws"

    func error(_ token: String, limits: JWSLimits = .default) -> JWSError? {
        jwsError { _ = try CompactJWS(token, limits: limits) }
    }

    func payloadError(_ token: String) -> JWSError? {
        jwsError { _ = try CompactJWS(token).decodePayloadToVerify(as: JWSTransaction.self) }
    }

    @Test func splitsARealTokenExactly() throws {
        let bytes = try Vectors.bytes(Self.realTokenPath)
        let jws = try CompactJWS(bytes)
        let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
        #expect(dots == [jws.headerEnd, jws.signingInputEnd])
        #expect(Array(jws.signingInput) == Array(bytes[..<dots[1]]))
        #expect(jws.signature.count == 64)
        // Re-joining the decoded parts gives the token back: one spelling per byte string.
        let rejoined = TokenBuilder.token(headerBytes: jws.header.json, payloadBytes: jws.unverifiedPayload, signature: jws.signature)
        #expect(Array(rejoined.utf8) == bytes)
        #expect(jws.header.algorithm == .es256)
        #expect(jws.header.keyID == nil && jws.header.type == nil && jws.header.unknownFields.isEmpty)
        #expect(jws.header.certificateChain?.map(\.count) == [1076, 794, 583])
        #expect(try CompactJWS(jws.text) == jws)
    }

    @Test func segmentCount() {
        let token = TokenBuilder.token()
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let two = parts[0] + "." + parts[1]
        #expect(error(two)?.code == .wrongSegmentCount)
        #expect(error(two)?.offset == two.utf8.count)
        #expect(error(parts[0])?.offset == parts[0].utf8.count)
        let four = token + ".AAAA"
        #expect(error(four)?.code == .wrongSegmentCount)
        #expect(error(four)?.offset == token.utf8.count)
        #expect(error("")?.code == .wrongSegmentCount)
        #expect(error("..")?.code == .invalidJSON)
    }

    @Test func paddingWhitespaceAndForeignCharacters() {
        let token = TokenBuilder.token(payload: #"{"a":1}"#)  // 7 bytes: base64 would pad with "=="
        let secondDot = token.utf8.lastIndex(of: UInt8(ascii: ".")).map { token.utf8.distance(from: token.utf8.startIndex, to: $0) } ?? 0
        func inserting(_ text: String, at offset: Int) -> String {
            var bytes = Array(token.utf8)
            bytes.insert(contentsOf: Array(text.utf8), at: offset)
            return String(decoding: bytes, as: UTF8.self)
        }
        let cases: [(String, Int)] = [
            (inserting("==", at: secondDot), secondDot),
            (inserting(" ", at: 5), 5),
            (inserting("\n", at: token.utf8.count), token.utf8.count),
            (" " + token, 0),
            (inserting("\t", at: secondDot + 1), secondDot + 1),
            (inserting("+", at: 4), 4),
            (inserting("/", at: 8), 8),
        ]
        for (bad, offset) in cases {
            #expect(error(bad)?.code == .invalidBase64URL, "\(bad)")
            #expect(error(bad)?.offset == offset, "\(bad)")
        }
        // A dangling character (a segment of 4n + 1 characters; the payload's has 10 + 3).
        let dangling = inserting("AAA", at: secondDot)
        #expect(error(dangling)?.code == .invalidBase64URL)
        #expect(error(dangling)?.offset == secondDot + 3)
    }

    @Test func nonCanonicalLastCharacter() throws {
        // 64 bytes end in a 2-character group whose last character carries 4 unused bits.
        let token = TokenBuilder.token()
        var bytes = Array(token.utf8)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        let last = bytes.count - 1
        let value = try #require(alphabet.firstIndex(of: bytes[last]))
        #expect(value & 0xF == 0)
        for unused in 1..<16 {
            bytes[last] = alphabet[value | unused]
            let bad = String(decoding: bytes, as: UTF8.self)
            #expect(error(bad)?.code == .invalidBase64URL)
            #expect(error(bad)?.offset == last)
        }
    }

    @Test func headerRules() {
        let cases: [(String, JWSError.Code, JSONError.Code?, Int)] = [
            (#"{"alg":1}"#, .invalidHeader, .typeMismatch, 9),
            (#"{"alg":null}"#, .invalidHeader, .typeMismatch, 9),
            (#"{"typ":"JWT"}"#, .invalidHeader, nil, 0),
            (#"[]"#, .invalidHeader, .typeMismatch, 0),
            (#"{"alg":"ES256","alg":"none"}"#, .invalidJSON, .duplicateKey, TokenBuilder.offset(ofDecodedByte: 15, inSegmentAt: 0)),
            (#"{"alg":"ES256","x5c":"MIIB"}"#, .invalidHeader, .typeMismatch, TokenBuilder.offset(ofDecodedByte: 21, inSegmentAt: 0)),
            (#"{"alg":"ES256","x5c":[1]}"#, .invalidHeader, .typeMismatch, TokenBuilder.offset(ofDecodedByte: 22, inSegmentAt: 0)),
            (#"{"alg":"ES256","kid":7}"#, .invalidHeader, .typeMismatch, TokenBuilder.offset(ofDecodedByte: 21, inSegmentAt: 0)),
            (#"{"alg":"ES256"} "#, .invalidJSON, nil, 0),
            (#"{"alg":"ES256"}x"#, .invalidJSON, .trailingData, TokenBuilder.offset(ofDecodedByte: 15, inSegmentAt: 0)),
            (#"{"alg":"ES256""#, .invalidJSON, .unexpectedEnd, TokenBuilder.offset(ofDecodedByte: 14, inSegmentAt: 0)),
        ]
        for (header, code, jsonCode, offset) in cases {
            let result = error(TokenBuilder.token(header: header))
            if header == #"{"alg":"ES256"} "# {
                #expect(result == nil, "trailing whitespace is JSON whitespace")
                continue
            }
            #expect(result?.code == code, "\(header): \(String(describing: result))")
            #expect(result?.underlying?.code == jsonCode, "\(header)")
            #expect(result?.offset == offset, "\(header)")
        }
        // Unknown members are kept in order; kid and typ are read.
        let jws = try? CompactJWS(TokenBuilder.token(header: #"{"b":[1],"alg":"ES256","kid":"k","a":{"x":null},"typ":"JWT"}"#))
        #expect(jws?.header.unknownFields.map(\.0) == ["b", "a"])
        #expect(jws?.header.keyID == "k" && jws?.header.type == "JWT")
    }

    @Test func certificateRulesAndLimits() throws {
        let leaf = try Vectors.bytes("jws/certs/leaf-cert.der")
        let encoded = Base64.encode(leaf)
        let three = #"{"alg":"ES256","x5c":["\#(encoded)","\#(encoded)","\#(encoded)"]}"#
        let jws = try CompactJWS(TokenBuilder.token(header: three))
        #expect(jws.header.certificateChain == [leaf, leaf, leaf])

        // Too many: the offset of the first string past the limit.
        let third = Array(three.utf8).indices.filter { Array(three.utf8)[$0] == UInt8(ascii: "\"") }[10]
        let tooMany = error(TokenBuilder.token(header: three), limits: JWSLimits(maximumCertificates: 2))
        #expect(tooMany?.code == .tooManyCertificates)
        #expect(tooMany?.offset == TokenBuilder.offset(ofDecodedByte: third, inSegmentAt: 0))

        // Too large: the offset of the string.
        let first = 22
        let large = error(TokenBuilder.token(header: three), limits: JWSLimits(maximumCertificateSize: leaf.count - 1))
        #expect(large?.code == .certificateTooLarge)
        #expect(large?.offset == TokenBuilder.offset(ofDecodedByte: first, inSegmentAt: 0))
        #expect(error(TokenBuilder.token(header: three), limits: JWSLimits(maximumCertificateSize: leaf.count)) == nil)

        // Not strict standard base64: URL alphabet, bad padding, non-canonical tail, empty.
        for bad in [encoded.replacingOccurrences(of: "/", with: "_"), encoded + "=", String(encoded.dropLast(2)) + "B=", ""] {
            let header = #"{"alg":"ES256","x5c":["\#(bad)"]}"#
            let result = error(TokenBuilder.token(header: header))
            #expect(result?.code == .invalidCertificateEncoding, "\(bad.suffix(4))")
        }
        let url = #"{"alg":"ES256","x5c":["\#(encoded.replacingOccurrences(of: "/", with: "_"))"]}"#
        let slash = try #require(
            encoded.utf8.firstIndex(of: UInt8(ascii: "/")).map { encoded.utf8.distance(from: encoded.utf8.startIndex, to: $0) })
        #expect(error(TokenBuilder.token(header: url))?.offset == TokenBuilder.offset(ofDecodedByte: 23 + slash, inSegmentAt: 0))
        // An escaped slash is still the same certificate.
        let escaped = #"{"alg":"ES256","x5c":["\#(encoded.replacingOccurrences(of: "/", with: "\\/"))"]}"#
        #expect(try CompactJWS(TokenBuilder.token(header: escaped)).header.certificateChain == [leaf])
    }

    @Test func sizeLimits() throws {
        let token = TokenBuilder.token()
        #expect(error(token, limits: JWSLimits(maximumTokenSize: token.utf8.count)) == nil)
        let tooLarge = error(token, limits: JWSLimits(maximumTokenSize: token.utf8.count - 1))
        #expect(tooLarge?.code == .tokenTooLarge)
        #expect(tooLarge?.offset == token.utf8.count - 1)
        let header = error(token, limits: JWSLimits(maximumHeaderSize: 14))
        #expect(header?.code == .headerTooLarge)
        #expect(header?.offset == 0)
        #expect(error(token, limits: JWSLimits(maximumHeaderSize: 15)) == nil)
        let signature = error(token, limits: JWSLimits(maximumSignatureSize: 63))
        #expect(signature?.code == .signatureTooLarge)
        #expect(
            signature?.offset
                == token.utf8.lastIndex(of: UInt8(ascii: ".")).map { token.utf8.distance(from: token.utf8.startIndex, to: $0) + 1 })
        // An empty signature (as `alg: none` has) parses; the verifier rejects it.
        #expect(try CompactJWS(TokenBuilder.token(header: #"{"alg":"none"}"#, signature: [])).signature.isEmpty)
    }

    @Test func payloadRulesWithOffsetsInTheToken() {
        func payloadStart(_ token: String) -> Int {
            (token.utf8.firstIndex(of: UInt8(ascii: ".")).map { token.utf8.distance(from: token.utf8.startIndex, to: $0) } ?? 0) + 1
        }
        let duplicate = TokenBuilder.token(payload: #"{"a":1,"a":2}"#)
        let d = payloadError(duplicate)
        #expect(d?.code == .invalidJSON && d?.underlying?.code == .duplicateKey)
        #expect(d?.offset == payloadStart(duplicate) + 9)  // decoded byte 7 → character 9
        #expect(d?.underlying?.offset == 7)

        let trailing = TokenBuilder.token(payload: #"{"a":1}{}"#)
        #expect(payloadError(trailing)?.underlying?.code == .trailingData)
        #expect(payloadError(trailing)?.offset == TokenBuilder.offset(ofDecodedByte: 7, inSegmentAt: payloadStart(trailing)))

        let badUTF8 = TokenBuilder.token(
            headerBytes: Array(#"{"alg":"ES256"}"#.utf8), payloadBytes: Array(#"{"a":""#.utf8) + [0xFF] + Array(#""}"#.utf8))
        #expect(payloadError(badUTF8)?.underlying?.code == .invalidUTF8)
        #expect(payloadError(badUTF8)?.offset == TokenBuilder.offset(ofDecodedByte: 6, inSegmentAt: payloadStart(badUTF8)))

        let tooBig = TokenBuilder.token(payload: #"{"price":9223372036854775808}"#)
        #expect(payloadError(tooBig)?.code == .invalidField && payloadError(tooBig)?.underlying?.code == .numberDoesNotFit)
        #expect(payloadError(tooBig)?.offset == TokenBuilder.offset(ofDecodedByte: 9, inSegmentAt: payloadStart(tooBig)))

        let empty = TokenBuilder.token(payload: "")
        #expect(payloadError(empty)?.underlying?.code == .unexpectedEnd)
    }

    /// Every token Apple signed with one leaf carries the same header segment; a cache hit gives
    /// what parsing gives, and only for the same bytes under the same limits.
    @Test func headerCache() throws {
        let cache = JWSHeaderCache(capacity: 2)
        let a = try Vectors.bytes(Self.realTokenPath)
        let b = try Vectors.bytes("jws/go-iap/sandbox-renewal-info-2000000335310644.jws")
        let plain = try CompactJWS(a)
        let first = try CompactJWS(a, headerCache: cache)
        #expect(cache.count == 1)
        let second = try CompactJWS(b, headerCache: cache)
        #expect(cache.count == 1)
        #expect(first == plain && first.header == plain.header && second.header == plain.header)
        #expect(second.unverifiedPayload == (try CompactJWS(b)).unverifiedPayload)
        #expect(first.header.certificateChain == plain.header.certificateChain)
        // Other limits are another key; limits the header breaks still fail.
        _ = try CompactJWS(a, limits: JWSLimits(maximumCertificates: 3), headerCache: cache)
        #expect(cache.count == 2)
        #expect(
            jwsError { _ = try CompactJWS(a, limits: JWSLimits(maximumCertificates: 2), headerCache: cache) }?.code == .tooManyCertificates)
        // Bounded: a third header evicts the least recently used.
        _ = try CompactJWS(try Vectors.bytes("jws/apple/xcode/xcode-signed-transaction.jws"), headerCache: cache)
        #expect(cache.count == 2)
        // A broken header is never cached.
        #expect(jwsError { _ = try CompactJWS(TokenBuilder.token(header: #"{"alg":1}"#), headerCache: cache) } != nil)
        #expect(jwsError { _ = try CompactJWS(TokenBuilder.token(header: #"{"alg":1}"#), headerCache: cache) }?.code == .invalidHeader)
    }

    /// Every prefix of a real token: a typed error, or (when the cut falls in the signature at a
    /// group boundary) the same header and payload with a shorter signature. Never a crash.
    @Test func everyPrefixOfARealToken() throws {
        let bytes = try Vectors.bytes(Self.realTokenPath)
        let whole = try CompactJWS(bytes)
        var parsed = 0
        for length in 0..<bytes.count {
            do {
                let jws = try CompactJWS(Array(bytes[..<length]))
                #expect(jws.header == whole.header && jws.unverifiedPayload == whole.unverifiedPayload)
                #expect(jws.signature.count < 64 && whole.signature.starts(with: jws.signature))
                parsed += 1
            } catch {
                #expect(error.offset != nil)
            }
        }
        // Signature prefixes of 4n characters, and of 4n + 2 and 4n + 3 with a canonical tail.
        #expect(parsed > 20 && parsed < 87)
    }

    /// Flipping any single bit of a real token never crashes, and whatever still parses re-joins
    /// to the flipped bytes (the strict decoders accept one spelling only).
    @Test func singleBitFlipsOfARealToken() throws {
        let bytes = try Vectors.bytes(Self.realTokenPath)
        var generator = SplitMix64(seed: 0x4A57)
        var accepted = 0
        for _ in 0..<4000 {
            var flipped = bytes
            let index = Int(generator.next() % UInt64(bytes.count))
            flipped[index] ^= UInt8(1) << (generator.next() % 8)
            guard let jws = try? CompactJWS(flipped) else { continue }
            accepted += 1
            let rejoined = TokenBuilder.token(headerBytes: jws.header.json, payloadBytes: jws.unverifiedPayload, signature: jws.signature)
            #expect(Array(rejoined.utf8) == flipped)
            _ = try? AppStorePayload.decodeUnverified(jws)
        }
        #expect(accepted > 0)
    }
}

/// Detection of signed data among other inputs.
@Suite struct SignedDataInputTests {
    @Test func detectsTokensAndBodies() throws {
        let token = try Vectors.bytes(CompactJWSTests.realTokenPath)
        let padded = Array("\n  ".utf8) + token + Array("\r\n".utf8)
        #expect(try SignedDataInput.detect(padded) == .token(try CompactJWS(token)))
        let body = Array(#"{"signedPayload":""#.utf8) + token + Array(#""}"#.utf8)
        #expect(try SignedDataInput.detect(body) == .notificationBody(try CompactJWS(token)))

        // Receipts and other JSON are not signed data.
        #expect(try SignedDataInput.detect(try Vectors.bytes("receipt-sandbox-g5.der")) == nil)
        #expect(try SignedDataInput.detect(try Vectors.bytes("base64encodedreceiptsample1.b64")) == nil)
        #expect(try SignedDataInput.detect(Array(#"{"receipt-data":"MIIB"}"#.utf8)) == nil)
        #expect(try SignedDataInput.detect([]) == nil)
        #expect(try SignedDataInput.detect(Array("eyJhbGci".utf8)) == nil)

        // The shape with broken content is an error, with offsets in the input.
        var broken = padded
        broken[10] = UInt8(ascii: "*")
        let error = jwsError { _ = try SignedDataInput.detect(broken) }
        #expect(error?.code == .invalidBase64URL)
        #expect(error?.offset == 10)
        #expect(jwsError { _ = try SignedDataInput.detect(Array(#"{"signedPayload":7}"#.utf8)) }?.code == .notAJWS)
        #expect(jwsError { _ = try SignedDataInput.detect(Array(#"{"signedPayload":"a.b"}"#.utf8)) }?.code == .wrongSegmentCount)
    }
}
