@_spi(RawParsing) import ASN1
import Foundation
import Internals
import JSON
import JWS
import ReceiptVerification
import Receipts

#if canImport(Glibc)
    import Glibc
#endif

/// The fuzz targets: each takes arbitrary bytes, must never crash, hang or grow without bound, and
/// checks an oracle where one exists (a disagreement aborts, which libFuzzer reports as a crash).
/// `Fuzz/Driver` runs them under libFuzzer; the normal test suite replays `Fuzz/corpus/` through
/// the same functions.
public enum FuzzTargets {
    /// A fuzz target: name and function.
    public struct Target: Sendable {
        /// The name `scripts/fuzz.sh` and the corpus directory use.
        public let name: String
        /// Runs the target on one input; an oracle failure stops the process.
        public let run: @Sendable ([UInt8]) -> Void
    }

    /// Every target, by name (`scripts/fuzz.sh --list` prints these).
    public static let all: [Target] = [
        Target(name: "asn1-der", run: asn1DER),
        Target(name: "asn1-ber", run: asn1BER),
        Target(name: "envelope", run: envelope),
        Target(name: "payload", run: payload),
        Target(name: "detect", run: detect),
        Target(name: "verify", run: verify),
        Target(name: "plist", run: plist),
        Target(name: "legacy-verify", run: legacyVerify),
        Target(name: "jws", run: jws),
        Target(name: "jws-verify", run: JWSVerifyFuzz.run),
        Target(name: "http", run: HTTPRequestFuzz.run),
        Target(name: "certificate", run: CertificateReaderFuzz.certificate),
        Target(name: "public-key", run: CertificateReaderFuzz.publicKey),
    ]

    /// The target called `name`, if there is one.
    public static func target(named name: String) -> Target? { all.first { $0.name == name } }

    /// Stops the process when an oracle fails (libFuzzer records the input).
    static func violated(_ what: String) -> Never {
        let message = Array("fuzz oracle violated: \(what)\n".utf8)
        _ = message.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        abort()
    }

    /// DER tree parse; whatever DER accepts, BER must accept with the same tree.
    static func asn1DER(_ bytes: [UInt8]) {
        guard let der = try? ASN1Tree.depthFirstNodes(bytes[...], rules: .der) else { return }
        guard let ber = try? ASN1Tree.depthFirstNodes(bytes[...], rules: .ber) else { violated("DER accepted what BER rejected") }
        guard der.count == ber.count else { violated("DER and BER trees differ") }
        for (a, b) in zip(der, ber) where a.offset != b.offset || a.element.identifier != b.element.identifier {
            violated("DER and BER nodes differ at \(a.offset)")
        }
    }

    /// BER tree parse plus every typed accessor on every node, and the canonical re-encoding,
    /// which DER must then accept.
    static func asn1BER(_ bytes: [UInt8]) {
        guard let nodes = try? ASN1Tree.depthFirstNodes(bytes[...], rules: .ber) else { return }
        for node in nodes where !node.element.identifier.isConstructed {
            let e = node.element
            _ = try? e.integer(Int64.self)
            _ = try? e.integerBytes()
            _ = try? e.boolean()
            _ = try? e.objectIdentifier().description
            _ = try? e.bitString()
            _ = try? e.anyString()
            _ = try? e.time().description
            _ = try? e.octets()
        }
        guard let root = nodes.first?.element else { return }
        var writer = DERWriter()
        do {
            try writer.appendCanonical(root)
        } catch {
            return
        }
        if (try? ASN1Tree.depthFirstNodes(writer.bytes[...], rules: .der)) == nil { violated("canonical re-encoding is not DER") }
    }

    /// The PKCS#7 envelope reader.
    static func envelope(_ bytes: [UInt8]) {
        guard let envelope = try? ReceiptEnvelope(bytes) else { return }
        for signer in envelope.signers { _ = signer.messageDigest }
    }

    /// The receipt payload: the parser and the plain reference (``ReferenceReceiptParser``)
    /// agree, and a parsed receipt survives encode → parse unchanged.
    static func payload(_ bytes: [UInt8]) {
        let parsed = Result { () throws(ReceiptError) in try AppReceipt(payload: bytes[...]) }
        let reference = Result { () throws(ReceiptError) in try ReferenceReceiptParser.parse(bytes[...]) }
        let receipt: AppReceipt
        switch (parsed, reference) {
        case (.success(let decoded), .success(let expected)):
            guard decoded == expected else { violated("the parser and the reference parser decode different receipts") }
            receipt = decoded
        case (.failure(let error), .failure(let expected)):
            // The first error in byte order, as the reference meets it: the same code.
            guard error.code == expected.code else { violated("the parser and the reference parser fail differently") }
            return
        default: violated("the parser and the reference parser disagree")
        }
        // Model order, not DER order: the payload parser (like Apple's Xcode receipts) accepts SETs
        // that are not sorted, and equality compares unknown attributes in order.
        let again = try? AppReceipt(payload: receipt.encodedPayload(options: ReceiptEncodingOptions(sortAttributes: false))[...])
        guard again == receipt else { violated("encode → parse changed the receipt") }
        _ = receipt.jsonText()
        if let lazyCount = try? LazyAppReceipt(payload: bytes[...]).inAppPurchaseCount(), lazyCount != receipt.inAppPurchases.count {
            violated("lazy count differs from the full parse")
        }
    }

    /// The payloads Apple really signed: the real receipts in TestReceipts/, each valid at its
    /// creation date against the bundled Apple roots or the StoreKit test certificate.
    static let genuinePayloads: Set<[UInt8]> = {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("TestReceipts")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var payloads: Set<[UInt8]> = []
        for name in names where name.hasSuffix(".der") {
            guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path),
                let receipt = try? AppReceipt([UInt8](data))
            else { continue }
            payloads.insert(Array(receipt.payload))
        }
        return payloads
    }()

    static let verifiers: [AppReceiptVerifier] = [
        (try? AppReceiptVerifier.appStore(cache: ChainCache(capacity: 64))),
        (try? AppReceiptVerifier.xcode(cache: ChainCache(capacity: 64))),
    ].compactMap { $0 }

    /// Verification of arbitrary bytes: never fooled. A valid verdict may only ever report a
    /// payload Apple signed (a mutation of unsigned bytes, such as the embedded root certificate,
    /// may still verify, but then the content must be exactly the genuine one).
    static func verify(_ bytes: [UInt8]) {
        if verifiers.isEmpty { violated("bundled anchors missing") }
        for verifier in verifiers {
            let verdict = verifier.verify(bytes)
            guard verdict.isValid else { continue }
            guard let payload = verdict.receipt?.payload, genuinePayloads.contains(Array(payload)) else {
                violated("a receipt with a payload Apple never signed verified as valid")
            }
        }
    }

    /// The old-style property-list parser and the transaction receipt on top of it: a dictionary
    /// that parses writes back and parses to the same value.
    static func plist(_ bytes: [UInt8]) {
        if let value = try? OldStylePropertyList.parse(bytes), case .dictionary(let entries) = value {
            for compact in [false, true] {
                let again = try? OldStylePropertyList.parse(OldStylePropertyList.encode(entries, compact: compact))
                guard again == value else { violated("plist write → parse changed the value (compact: \(compact))") }
            }
        }
        if let receipt = try? TransactionReceipt(bytes) {
            _ = try? receipt.signature()
            _ = receipt.purchaseInfo.jsonText()
        }
    }

    static let legacyVerifier = try? TransactionReceiptVerifier.apple()

    /// The legacy transaction-receipt verifier on arbitrary bytes: whatever verifies must carry
    /// purchase-info bytes Apple signed (those of the real receipts in TestReceipts/legacy).
    static let genuinePurchaseInfos: Set<[UInt8]> = {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("TestReceipts/legacy")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var infos: Set<[UInt8]> = []
        for name in names {
            guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path),
                let receipt = try? TransactionReceipt([UInt8](data))
            else { continue }
            infos.insert(receipt.purchaseInfoData)
        }
        return infos
    }()

    static func legacyVerify(_ bytes: [UInt8]) {
        guard let verifier = legacyVerifier else { violated("bundled legacy anchors missing") }
        let verdict = verifier.verify(bytes)
        guard verdict.isValid else { return }
        guard let receipt = verdict.receipt, genuinePurchaseInfos.contains(receipt.purchaseInfoData) else {
            violated("a transaction receipt Apple never signed verified as valid")
        }
    }

    /// Input detection (DER, base64, JSON body, plist) and the full app-receipt parse, and the one
    /// detection of every signed format (`SignedInput.detect`). Oracle: input that is not shaped
    /// like signed data is detected as the receipt reader detects it, the same bytes, or refused
    /// by both.
    static func detect(_ bytes: [UInt8]) {
        let signed = try? SignedInput.detect(bytes)
        let receipt = try? ReceiptInput.detect(bytes)
        if case .appReceipt(let der)? = receipt { _ = try? AppReceipt(der) }
        do {
            // Signed data, or text shaped like it that does not split: the jws target's domain.
            if try SignedDataInput.detect(bytes) != nil { return }
        } catch {
            return
        }
        switch (receipt, signed) {
        case (nil, nil): break
        case (.appReceipt(let der)?, .appReceipt(let same)?) where der == same: break
        case (.transactionReceipt(let text)?, .transactionReceipt(let same)?) where text == same: break
        default: violated("SignedInput and ReceiptInput disagree on input that is not signed data")
        }
    }

    /// The JWS splitter, strict base64url, the JSON parser and the App Store payload models on
    /// the same bytes, read as a token, as JSON and as a payload. Oracles:
    /// - a token that splits re-joins to the input (strict decoding admits one spelling), its
    ///   signing input is the input up to the second dot, and its header re-parses to itself;
    /// - JSON that parses writes back (compact and indented) and parses to the same value, and
    ///   parsing with duplicate keys allowed finds the same value;
    /// - a payload model that decodes re-encodes to the parsed JSON member by member, and decodes
    ///   from its own encoding to an equal value.
    static func jws(_ bytes: [UInt8]) {
        if let token = try? CompactJWS(bytes) {
            let rejoined =
                Base64.encodedBytes(token.header.json, alphabet: .url) + [UInt8(ascii: ".")]
                + Base64.encodedBytes(token.unverifiedPayload, alphabet: .url) + [UInt8(ascii: ".")]
                + Base64.encodedBytes(token.signature, alphabet: .url)
            guard rejoined == bytes else { violated("split → re-join changed the token") }
            guard Array(token.signingInput) == Array(bytes[..<token.signingInputEnd]),
                bytes[token.headerEnd] == UInt8(ascii: "."), bytes[token.signingInputEnd] == UInt8(ascii: ".")
            else { violated("the signing input is not the token up to its second dot") }
            guard (try? JWSHeader(json: token.header.json)) == token.header else { violated("the header does not re-parse to itself") }
            payloadModels(token.unverifiedPayload)
            _ = try? AppStorePayload.decodeUnverified(token)
        }
        jsonRoundTrip(bytes)
        payloadModels(bytes)
        _ = try? SignedDataInput.detect(bytes)
    }

    static func jsonRoundTrip(_ bytes: [UInt8]) {
        guard let value = try? JSONValue.parse(bytes) else { return }
        for indent in [0, 2] where (try? JSONValue.parse(value.jsonBytes(indent: indent))) != value {
            violated("JSON parse → write (indent \(indent)) → parse changed the value")
        }
        guard (try? JSONValue.parse(bytes, options: JSONParseOptions(rejectsDuplicateKeys: false))) == value else {
            violated("allowing duplicate keys changed a document without any")
        }
        _ = value.int64Value
        _ = try? value.double()
    }

    static func payloadModels(_ bytes: [UInt8]) {
        check(JWSTransaction.self, bytes)
        check(JWSRenewalInfo.self, bytes)
        check(AppTransaction.self, bytes)
        check(NotificationPayload.self, bytes)
        check(RealtimeRequest.self, bytes)
        _ = AppStorePayloadKind.of(jsonPayload: bytes)
    }

    static func check<Payload: JWSPayload & Equatable & DecodedMemberNames>(_ type: Payload.Type, _ bytes: [UInt8]) {
        guard let decoded = try? Payload(jsonPayload: bytes) else { return }
        // The kind check from the decoding's member record answers as the walk over the JSON.
        for kind in AppStorePayloadKind.allCases where kind.mismatch(decoded: decoded) != kind.mismatch(jsonPayload: bytes) {
            violated("\(Payload.self): the decoded kind check for \(kind) differs from the JSON walk")
        }
        guard let parsed = try? JSONValue.parse(bytes, options: JWSLimits.default.jsonOptions) else {
            violated("\(Payload.self) decoded text the strict JSON parser rejects")
        }
        let encoded = decoded.jsonValue()
        guard encoded.isEqualIgnoringMemberOrder(to: parsed) else { violated("\(Payload.self) decode → encode lost or changed a member") }
        guard (try? Payload(jsonPayload: encoded.jsonBytes())) == decoded else {
            violated("\(Payload.self) does not decode from its own encoding")
        }
    }
}
