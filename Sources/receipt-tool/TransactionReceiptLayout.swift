import ASN1
import Foundation
import ReceiptCrypto
import Receipts

extension TextLayout {
    /// The readable text of a legacy iOS 6 transaction receipt.
    static func transactionReceipt(_ r: TransactionReceipt, source: String) -> String {
        var out: [String] = []
        out.append("Transaction receipt (iOS 6, old-style property list, \(r.text.count) bytes\(source))")
        out.append(line("Environment", (r.environment ?? "— (absent: production)") + " (not covered by the signature)"))
        if let pod = r.pod { out.append(line("Pod", pod)) }
        if let status = r.signingStatus { out.append(line("Signing status", status)) }
        for entry in r.unknownEntries { out.append(line("Other key \"\(entry.key)\"", value(entry.value))) }

        out.append("Signature (not verified; use 'receipt-tool verify')")
        if let blob = r.signatureBlob {
            do throws(ReceiptError) {
                let signature = try r.signature()
                out.append(
                    line(
                        "Blob",
                        "\(blob.count) bytes, version \(signature.version)"
                            + (signature.version == 3 ? " (no real version 3 sample exists: layout unconfirmed)" : "")))
                out.append(line("RSA signature", "\(signature.signature.count) bytes  \(hexPreview(signature.signature, limit: 16))"))
                if let certificate = try? Certificate(derEncoded: signature.certificate) {
                    out.append(
                        line("Leaf certificate", "\(certificate.subject.commonName ?? "\(certificate.subject)") (untrusted until verified)")
                    )
                    out.append(line("  Issuer", certificate.issuer.commonName ?? "\(certificate.issuer)"))
                    out.append(line("  Serial", certificate.serialNumberHex))
                    out.append(
                        line("  Valid", "\(ReceiptDate.rfc3339(certificate.notBefore)) → \(ReceiptDate.rfc3339(certificate.notAfter))"))
                    let bits = (try? certificate.publicKey.bits).map { "RSA \($0)" } ?? "unreadable key"
                    out.append(line("  Key", bits))
                    let marker = ASN1ObjectIdentifier(1, 2, 840, 113_635, 100, 6, 5, 1)
                    out.append(line("  Marker", "\(marker) " + (certificate.hasExtension(oid: marker) ? "present" : "absent")))
                } else {
                    out.append(line("Leaf certificate", "\(signature.certificate.count) bytes that do not parse as X.509"))
                }
            } catch {
                out.append(line("Blob", "\(blob.count) bytes, malformed: \(error.reason)"))
            }
        } else {
            out.append(line("Blob", "— (no \"signature\": this receipt cannot be verified)"))
        }

        let p = r.purchaseInfo
        out.append("Purchase info (\(r.purchaseInfoData.count) bytes, the signed data)")
        out.append(line("Transaction id", p.transactionIdentifier ?? "—"))
        if let original = p.originalTransactionIdentifier { out.append(line("Original transaction id", original)) }
        out.append(line("Product id", p.productIdentifier ?? "—"))
        if let quantity = p.quantity { out.append(line("Quantity", String(quantity))) }
        out.append(line("Bundle id (bid)", p.bundleIdentifier ?? "—"))
        out.append(line("Bundle version (bvrs)", p.bundleVersion ?? "—"))
        if let id = p.itemID { out.append(line("Item id", String(id))) }
        if let id = p.appItemID { out.append(line("App item id", String(id))) }
        if let id = p.versionExternalIdentifier { out.append(line("Version external id", String(id))) }
        out.append(line("Purchase date", date(p.purchaseDate)))
        if let d = p.originalPurchaseDate { out.append(line("Original purchase date", date(d))) }
        if let d = p.expiresDate { out.append(line("Expires", date(d))) }
        if let id = p.webOrderLineItemID { out.append(line("Web order line item id", String(id))) }
        if let trial = p.isTrialPeriod { out.append(line("Trial period", trial ? "yes" : "no")) }
        if let intro = p.isInIntroOfferPeriod { out.append(line("Intro offer period", intro ? "yes" : "no")) }
        if let id = p.uniqueIdentifier { out.append(line("Unique identifier", id)) }
        if let id = p.uniqueVendorIdentifier { out.append(line("Unique vendor identifier", id)) }
        for entry in p.unknownEntries { out.append(line("Other key \"\(entry.key)\"", value(entry.value))) }
        return out.joined(separator: "\n")
    }

    static func value(_ value: OldStylePropertyList.Value) -> String {
        switch value {
        case .string(let text): "\"\(text.prefix(120))\"" + (text.count > 120 ? "…" : "")
        case .data(let bytes): "<\(bytes.count) bytes  \(hexPreview(bytes))>"
        case .array(let elements): "(\(elements.count) elements)"
        case .dictionary(let entries): "{\(entries.count) entries}"
        }
    }
}
