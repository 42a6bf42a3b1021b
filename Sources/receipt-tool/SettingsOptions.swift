import Foundation
import ReceiptCrypto
import ReceiptVerification
import Receipts

/// The verification options every command reads the same way, into one `VerificationSettings`:
/// `--anchor` (repeatable; default apple), `--policy appstore|xcode` (default: xcode when every
/// anchor is xcode, else appstore), `--at signed|creation|now|DATE` (default signed),
/// `--revocation`/`--ocsp-response`, and `--itunes-ca`/`--wwdr-ca` for transaction receipts. A
/// command declares the options it accepts; the others read as not given.
extension VerificationSettings {
    /// The settings the command line asks for; `anchorOption` names the anchors' option (`api`
    /// verifies receipts under `--receipt-anchor`).
    init(options args: Arguments, anchorOption: String = "--anchor") throws {
        let time = try args.value("--at").map(Self.parseTime) ?? .signedDate
        let policy = try Self.parsePolicy(args.value("--policy"))
        let revocation = try RevocationOption.parse(args)
        let names = args.values(anchorOption).isEmpty ? ["apple"] : args.values(anchorOption)
        let sources = names.map(TrustAnchorName.init(name:))
        self.init(
            anchors: try Self.loadAnchors(sources), sources: sources, policy: policy, revocation: revocation, validationTime: time)
        if args.value("--itunes-ca") != nil {
            transactionReceiptIntermediate = try pinnedIntermediate(args, option: "--itunes-ca", bundled: .appleITunesStoreCA)
        }
        if args.value("--wwdr-ca") != nil {
            transactionReceiptVersion3Intermediate = try pinnedIntermediate(args, option: "--wwdr-ca", bundled: .appleWWDRCA2013)
        }
    }

    /// `appstore` or `xcode` (any case); nil: not given (the default rule applies).
    static func parsePolicy(_ text: String?) throws(UsageError) -> VerificationPolicy? {
        switch text?.lowercased() {
        case nil: nil
        case "appstore": .appStore
        case "xcode": .xcode
        case let other?: throw UsageError("--policy '\(other)' is not appstore or xcode")
        }
    }

    /// `signed` (or `creation`), `now`, or a date: `2026-11-29` (midnight UTC) or RFC 3339.
    static func parseTime(_ text: String) throws(UsageError) -> ValidationTime {
        switch text.lowercased() {
        case "signed", "creation": return .signedDate
        case "now": return .now
        default:
            let full = text.count == 10 ? text + "T00:00:00Z" : text
            guard let date = try? ReceiptDate.parse(full) else {
                throw UsageError("--at '\(text)' is not 'signed', 'creation', 'now' or a date such as 2026-11-29 or 2026-11-29T12:00:00Z")
            }
            return .fixed(date)
        }
    }

    /// The anchors `sources` name; a failure names the anchor (a bundled one by its name).
    static func loadAnchors(_ sources: [TrustAnchorName]) throws(ToolFailure) -> TrustAnchors {
        var anchors = TrustAnchors([])
        for source in sources {
            do throws(TrustAnchorError) {
                anchors = anchors + (try TrustAnchors.load([source]))
            } catch {
                let which: String
                switch source {
                case .apple, .xcode: which = "the bundled anchor '\(source)'"
                case .file: which = "the anchor"
                }
                throw ToolFailure("cannot load \(which): \(error)")
            }
        }
        return anchors
    }

    /// The transaction receipt verifier, a bundled intermediate that cannot be loaded reported.
    func transactionReceiptVerifier() throws(ToolFailure) -> TransactionReceiptVerifier {
        do throws(TrustAnchorError) {
            return try transactionReceiptVerifier(limits: .default)
        } catch {
            throw ToolFailure("cannot load a bundled intermediate: \(error)")
        }
    }
}
