import ASN1
import Foundation
import Internals
import JWS
import ReceiptVerification
import Receipts

/// `receipt-tool dump`: prints a receipt as text or as verifyReceipt-shaped JSON.
enum DumpCommand {
    static let subcommand = Subcommand(
        name: "dump",
        summary: "Print the fields of a receipt or of StoreKit 2 signed data (JWS).",
        help: """
            USAGE: receipt-tool dump <file> [--json] [--compact] [--payload] [--kind <kind>]

            ARGUMENTS:
              <file>        A receipt: DER or BER (Xcode) PKCS#7, a legacy iOS 6 transaction
                            receipt (old-style property list), base64 text of either, a
                            verifyReceipt request body with "receipt-data"; or StoreKit 2
                            signed data: a compact JWS (eyJ…, two dots) or an App Store Server
                            Notification body {"signedPayload": "…"}; or '-' for standard
                            input.

            OPTIONS:
              --json        Print the verifyReceipt-style "receipt" JSON object, with the fields
                            Apple's JSON lacked under extra keys (opaque_value, sha1_hash, ...);
                            for a transaction receipt, the iOS 6 "receipt" object (bid, bvrs,
                            expires_date in milliseconds, ...); for signed data, the decoded
                            payload object with Apple's names, types and values, a
                            notification's nested signed transaction and renewal info
                            replaced by their decoded payloads.
              --compact     With --json, print on one line.
              --payload     Write the raw payload bytes (what the signature covers; for signed
                            data, the decoded payload JSON) to standard output instead.
              --kind <kind> What the input must be: receipt, transaction-receipt, transaction,
                            renewal, app-transaction or notification (signed data is then
                            decoded as that kind). An input of another kind is an error
                            naming the check 'kind'. Without it the kind is detected.
              -h, --help    Show help information.
            """,
        run: run)

    static func run(_ arguments: [String]) throws -> Int32 {
        let args = try Arguments(arguments, valued: ["--kind"], flagNames: ["--json", "--compact", "--payload"])
        let forced = try ForcedKind.parse(args)
        guard args.positional.count == 1 else {
            throw UsageError(args.positional.isEmpty ? "missing <file>" : "expected one <file>")
        }
        let path = args.positional[0]
        let (bytes, reading) = InputReading.read(try readInput(path))
        let detected: SignedInput
        switch reading {
        case .success(let value): detected = value
        case .failure(let error):
            if error.code != .malformedSignedData, let forced {
                throw ToolFailure(
                    "\(path): kind: the input is neither a receipt nor signed data, not \(forced.described) (--kind \(forced.rawValue))")
            }
            let underlying = error.jws.map { "\($0)" } ?? error.receipt.map { "\($0)" } ?? "\(error)"
            throw ToolFailure("\(path): \(underlying)")
        }
        if case .signedData(let signed, _) = detected {
            if let forced {
                let members = AppStorePayloadKind.memberNames(of: signed.jws.unverifiedPayload)
                guard let kind = forced.payloadKind else {
                    let found = AppStorePayloadKind.of(memberNames: members).withArticle
                    throw ToolFailure(
                        "\(path): kind: the input is signed data (\(found)), not \(forced.described) (--kind \(forced.rawValue))")
                }
                if let mismatch = kind.mismatch(memberNames: members) { throw ToolFailure("\(path): kind: \(mismatch)") }
            }
            return try JWSDump.run(
                signed, path: path, size: bytes.count, json: args.flag("--json"), compact: args.flag("--compact"),
                payloadOnly: args.flag("--payload"), kind: forced?.payloadKind)
        }
        if let forced, let family = ForcedKind.family(of: detected), family != forced {
            throw ToolFailure("\(path): kind: the input is \(detected.described), not \(forced.described) (--kind \(forced.rawValue))")
        }
        switch detected {
        case .signedData: return ExitStatus.success  // dumped above
        case .appReceipt(let der):
            let receipt: AppReceipt
            do {
                receipt = try AppReceipt(envelope: ReceiptEnvelope(der))
            } catch {
                throw ToolFailure("\(path): \(error)")
            }
            if args.flag("--payload") {
                FileHandle.standardOutput.write(Data(receipt.payload))
            } else if args.flag("--json") {
                printOut(receipt.jsonText(indent: args.flag("--compact") ? 0 : 2))
            } else {
                printOut(TextLayout.appReceipt(receipt, source: der.count == bytes.count ? "" : " (decoded from text)"))
            }
        case .transactionReceipt(let text):
            let receipt: TransactionReceipt
            do {
                receipt = try TransactionReceipt(text: text)
            } catch {
                throw ToolFailure("\(path): \(error)")
            }
            if args.flag("--json") {
                printOut(receipt.purchaseInfo.jsonText(indent: args.flag("--compact") ? 0 : 2))
            } else {
                printOut(TextLayout.transactionReceipt(receipt, source: text.count == bytes.count ? "" : ", decoded from base64"))
            }
        }
        return ExitStatus.success
    }
}

/// The readable text layout of `dump`.
enum TextLayout {
    /// One `label  value` line; both escaped whole (a value from input never breaks the line).
    static func line(_ label: String, _ value: String, indent: Int = 2) -> String {
        String(repeating: " ", count: indent) + TerminalEscaping.escaped(label).padding(toLength: 28, withPad: " ", startingAt: 0)
            + TerminalEscaping.escaped(value)
    }

    static func date(_ date: Date?) -> String {
        date.map { ReceiptDate.rfc3339($0) } ?? "—"
    }

    static func bytes(_ bytes: [UInt8]?) -> String {
        guard let bytes else { return "—" }
        return "\(bytes.count) bytes  \(hexPreview(bytes, limit: 32))"
    }

    static func appReceipt(_ r: AppReceipt, source: String) -> String {
        var out: [String] = []
        let envelope = r.envelope
        let encoding = envelope.map { $0.usesBERForms ? "BER" : "DER" } ?? "payload"
        out.append("App receipt (PKCS#7 SignedData, \(encoding), \(envelope?.encodedBytes.count ?? r.payload.count) bytes\(source))")
        out.append(line("Receipt type", (r.receiptType ?? "—") + " (\(r.environment.rawValue.lowercased()))"))
        out.append(line("Bundle identifier", r.bundleIdentifier ?? "—"))
        out.append(line("App version", r.appVersion ?? "—"))
        out.append(line("Original app version", r.originalAppVersion ?? "—"))
        out.append(line("Creation date", date(r.creationDate)))
        out.append(line("Expiration date", date(r.expirationDate)))
        out.append(line("Original purchase date", date(r.originalPurchaseDate)))
        if let id = r.appItemID { out.append(line("App item id", String(id))) }
        if let id = r.downloadID { out.append(line("Download id", String(id))) }
        if let id = r.versionExternalIdentifier { out.append(line("Version external id", String(id))) }
        if let rating = r.ageRating { out.append(line("Age rating", rating)) }
        out.append(line("Opaque value", bytes(r.opaqueValue)))
        out.append(line("SHA-1 hash", bytes(r.sha1Hash)))
        if let d = r.undocumentedDate8 { out.append(line("Attribute 8 (date)", date(d))) }
        if let v = r.undocumentedInteger13 { out.append(line("Attribute 13 (integer)", String(v))) }
        if let v = r.undocumentedInteger25 { out.append(line("Attribute 25 (integer)", String(v))) }
        for attribute in r.unknownAttributes {
            out.append(
                line(
                    "Attribute \(attribute.type) (v\(attribute.version))", "\(attribute.value.count) bytes  \(hexPreview(attribute.value))")
            )
        }
        if let envelope {
            out.append("Signature (not verified; use 'receipt-tool verify')")
            for (index, signer) in envelope.signers.enumerated() {
                let digest = OIDNames.name(signer.digestAlgorithm.oid.description)
                let algorithm = OIDNames.name(signer.signatureAlgorithm.oid.description)
                let attributes =
                    signer.signedAttributes.isEmpty ? "no signed attributes" : "\(signer.signedAttributes.count) signed attributes"
                out.append(line("Signer \(index + 1)", "\(digest), \(algorithm), \(signer.signature.count)-byte signature, \(attributes)"))
            }
            out.append(line("Embedded certificates", "\(envelope.certificates.count) (untrusted until verified)"))
            out.append(line("Payload", "\(r.payload.count) bytes" + (envelope.payloadOffset.map { " at offset \($0)" } ?? " (segmented)")))
        }
        out.append("In-app purchases (\(r.inAppPurchases.count))")
        for (index, p) in r.inAppPurchases.enumerated() {
            out.append("  #\(index + 1) \(p.productIdentifier ?? "—")")
            out.append(line("Transaction id", p.transactionIdentifier ?? "—", indent: 5))
            if let original = p.originalTransactionIdentifier { out.append(line("Original transaction id", original, indent: 5)) }
            if let quantity = p.quantity { out.append(line("Quantity", String(quantity), indent: 5)) }
            if let type = p.productType { out.append(line("Product type", type.description, indent: 5)) }
            out.append(line("Purchase date", date(p.purchaseDate), indent: 5))
            if let d = p.originalPurchaseDate { out.append(line("Original purchase date", date(d), indent: 5)) }
            if let d = p.subscriptionExpirationDate { out.append(line("Expires", date(d), indent: 5)) }
            if let d = p.cancellationDate { out.append(line("Cancelled", date(d), indent: 5)) }
            if let reason = p.cancellationReason {
                out.append(line("Cancellation reason", "\(reason.rawValue) (\(reason))", indent: 5))
            }
            if let id = p.webOrderLineItemID { out.append(line("Web order line item id", String(id), indent: 5)) }
            if let trial = p.isTrialPeriod { out.append(line("Trial period", trial ? "yes" : "no", indent: 5)) }
            if let intro = p.isInIntroOfferPeriod { out.append(line("Intro offer period", intro ? "yes" : "no", indent: 5)) }
            if let offer = p.promotionalOfferIdentifier { out.append(line("Promotional offer", offer, indent: 5)) }
            if let v = p.undocumentedInteger1722 { out.append(line("Attribute 1722 (integer)", String(v), indent: 5)) }
            let unknown = p.unknownAttributes
            if !unknown.isEmpty {
                out.append(
                    line(
                        "Other attributes",
                        unknown.map { "\($0.type)" + ($0.value.count > 2 ? "=\(hexPreview($0.value, limit: 8))" : "") }.joined(
                            separator: " "), indent: 5))
            }
        }
        return out.joined(separator: "\n")
    }
}
