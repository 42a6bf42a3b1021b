import Foundation
import Internals
import JSON
import JWS
import ReceiptCrypto

/// `receipt-tool dump` for StoreKit 2 signed data: a compact JWS or a notification body.
/// Decodes and prints; verifies nothing (the output says so).
enum JWSDump {
    /// Prints the token; `forcedKind` (`--kind`, already checked against its members) decodes it
    /// as that kind instead of the kind its members name.
    static func run(
        _ input: SignedDataInput, path: String, size: Int, json: Bool, compact: Bool, payloadOnly: Bool,
        kind forcedKind: AppStorePayloadKind? = nil
    ) throws -> Int32 {
        let jws = input.jws
        let kind = forcedKind ?? AppStorePayloadKind.of(jsonPayload: jws.unverifiedPayload)
        // Decode strictly as its kind (type errors are errors), and the nested tokens too.
        let payload: JSONValue
        let nested: [String: CompactJWS]
        do {
            _ = try AppStorePayload.decodeUnverified(jws, as: kind)
            payload = try JSONValue.parse(jws.unverifiedPayload, options: JWSLimits.default.jsonOptions)
            nested = try nestedTokens(payload, kind: kind)
        } catch let error as JWSError {
            throw ToolFailure("\(path): \(error)")
        } catch let error as JSONError {
            throw ToolFailure("\(path): payload: \(error)")
        }
        if payloadOnly {
            FileHandle.standardOutput.write(Data(jws.unverifiedPayload))
        } else if json {
            printOut(expanded(payload, nested).jsonText(indent: compact ? 0 : 2))
        } else {
            var out: [String] = []
            let form =
                switch input {
                case .token: "compact JWS, \(size) bytes"
                case .notificationBody: "App Store Server Notification body {\"signedPayload\": …}, \(size) bytes"
                }
            out.append("Signed data (\(form); not verified, use 'receipt-tool verify')")
            header(jws, into: &out, indent: 0)
            let name = kind == .unknown ? "kind not recognised" : kind.rawValue
            out.append("Payload (\(name), \(jws.unverifiedPayload.count) bytes)")
            fields(payload, path: "", nested: nested, into: &out, indent: 2)
            printOut(out.joined(separator: "\n"))
        }
        return ExitStatus.success
    }

    /// The nested tokens of a notification by path: `data.signedTransactionInfo`,
    /// `data.signedRenewalInfo`, `appData.signedAppTransactionInfo`; each must be a JWS whose
    /// payload is strict JSON of its kind.
    static func nestedTokens(_ payload: JSONValue, kind: AppStorePayloadKind) throws -> [String: CompactJWS] {
        guard kind == .notification else { return [:] }
        var tokens: [String: CompactJWS] = [:]
        for (parent, name) in [("data", "signedTransactionInfo"), ("data", "signedRenewalInfo"), ("appData", "signedAppTransactionInfo")] {
            guard case .string(let token)? = payload[parent]?[name] else { continue }
            do {
                let jws = try CompactJWS(token)
                _ = try AppStorePayload.decodeUnverified(jws)
                tokens[parent + "." + name] = jws
            } catch {
                throw JWSError(
                    code: error.code, offset: error.offset, reason: "\(parent).\(name): \(error.reason)", underlying: error.underlying)
            }
        }
        return tokens
    }

    /// The payload with each nested token replaced by its decoded payload object.
    static func expanded(_ payload: JSONValue, _ nested: [String: CompactJWS], path: String = "") -> JSONValue {
        if let jws = nested[path], let decoded = try? JSONValue.parse(jws.unverifiedPayload, options: JWSLimits.default.jsonOptions) {
            return decoded
        }
        guard case .object(let members) = payload, !nested.isEmpty else { return payload }
        return .object(members.map { ($0.0, expanded($0.1, nested, path: path.isEmpty ? $0.0 : path + "." + $0.0)) })
    }

    static func header(_ jws: CompactJWS, into out: inout [String], indent: Int) {
        let pad = String(repeating: " ", count: indent)
        out.append(pad + "Header")
        out.append(TextLayout.line("Algorithm", jws.header.algorithm.rawValue, indent: indent + 2))
        if let kid = jws.header.keyID { out.append(TextLayout.line("Key id", kid, indent: indent + 2)) }
        if let type = jws.header.type { out.append(TextLayout.line("Type", type, indent: indent + 2)) }
        if !jws.header.unknownFields.isEmpty {
            out.append(TextLayout.line("Other members", jws.header.unknownFields.map(\.0).joined(separator: ", "), indent: indent + 2))
        }
        if let chain = jws.header.certificateChain {
            out.append(TextLayout.line("Certificates (x5c)", "\(chain.count) (untrusted until verified)", indent: indent + 2))
            for (index, der) in chain.enumerated() {
                guard let certificate = try? Certificate(derEncoded: der) else {
                    out.append(pad + "  #\(index + 1) not a certificate: \(der.count) bytes  \(hexPreview(der))")
                    continue
                }
                out.append(pad + "  #\(index + 1) \(certificate.subject)")
                out.append(TextLayout.line("Issuer", certificate.issuer.description, indent: indent + 5))
                out.append(
                    TextLayout.line(
                        "Valid", "\(TextLayout.date(certificate.notBefore)) → \(TextLayout.date(certificate.notAfter))", indent: indent + 5)
                )
                out.append(TextLayout.line("Serial", certificate.serialNumberHex, indent: indent + 5))
            }
        } else {
            out.append(TextLayout.line("Certificates (x5c)", "none", indent: indent + 2))
        }
        out.append(TextLayout.line("Signature", "\(jws.signature.count) bytes", indent: indent + 2))
    }

    /// The members of an object, one a line; dates (`…Date` numbers) also as RFC 3339; nested
    /// tokens as a summary of their header and their payload's members.
    static func fields(_ value: JSONValue, path: String, nested: [String: CompactJWS], into out: inout [String], indent: Int) {
        guard case .object(let members) = value else {
            out.append(String(repeating: " ", count: indent) + value.jsonText(indent: 0))
            return
        }
        for (key, member) in members {
            let memberPath = path.isEmpty ? key : path + "." + key
            if let jws = nested[memberPath], let payload = try? JSONValue.parse(jws.unverifiedPayload) {
                let chain = jws.header.certificateChain ?? []
                let leaf = chain.first.flatMap { try? Certificate(derEncoded: $0) }?.subject.commonName
                let summary = "JWS \(jws.header.algorithm), \(chain.count) certificates" + (leaf.map { ", leaf \($0)" } ?? "")
                out.append(TextLayout.line(key, summary, indent: indent))
                fields(payload, path: memberPath + ".", nested: [:], into: &out, indent: indent + 2)
                continue
            }
            field(key, member, path: memberPath, nested: nested, into: &out, indent: indent)
        }
    }

    static func field(
        _ key: String, _ value: JSONValue, path: String, nested: [String: CompactJWS], into out: inout [String], indent: Int
    ) {
        switch value {
        case .object:
            out.append(String(repeating: " ", count: indent) + key)
            fields(value, path: path, nested: nested, into: &out, indent: indent + 2)
        case .array(let elements) where elements.contains(where: { $0.objectValue != nil || $0.arrayValue != nil }):
            out.append(String(repeating: " ", count: indent) + key)
            for (index, element) in elements.enumerated() {
                field("#\(index + 1)", element, path: path + "#", nested: [:], into: &out, indent: indent + 2)
            }
        case .array(let elements):
            out.append(TextLayout.line(key, "[" + elements.map { $0.jsonText(indent: 0) }.joined(separator: ", ") + "]", indent: indent))
        case .number(let text) where key.hasSuffix("Date"):
            let date = JWSDate(text: text).map { " (\(rfc3339($0)))" } ?? ""
            out.append(TextLayout.line(key, text + date, indent: indent))
        case .string(let text):
            out.append(TextLayout.line(key, text, indent: indent))
        default:
            out.append(TextLayout.line(key, value.jsonText(indent: 0), indent: indent))
        }
    }

    /// RFC 3339 in UTC on the proleptic Gregorian calendar, with milliseconds when there are any
    /// (fractions of a millisecond are in the number itself).
    static func rfc3339(_ date: JWSDate) -> String {
        let ms = Int64(date.millisecondsSince1970.rounded(.down))
        let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let fraction = ms - seconds * 1000
        let text = CivilCalendar.iso8601(secondsSince1970: seconds)
        guard fraction != 0 else { return text }
        let digits = String(fraction)
        return String(text.dropLast()) + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }
}
