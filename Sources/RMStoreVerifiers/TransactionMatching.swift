// What the store verifiers share when they match a verified record to the transaction they were
// given: which identifiers it may name, and how a value from it is quoted in a message.

import Internals
import RMStore

extension PaymentTransaction {
    /// The identifiers a verified record may name for this transaction: its own and, for a
    /// restored transaction, its original's too (the App Store lists a restored purchase under
    /// the original purchase), each once.
    var acceptedIdentifiers: [String] {
        var identifiers = [identifier]
        if state == .restored, let original = original?.identifier, original != identifier {
            identifiers.append(original)
        }
        return identifiers
    }
}

/// `text` in double quotes for a verifier's message, escaped by the package's one rule
/// (`TerminalEscaping.quoted`, the value may come from the verified record), or `(none)`.
func quoted(_ text: String?) -> String {
    text.map(TerminalEscaping.quoted) ?? "(none)"
}
