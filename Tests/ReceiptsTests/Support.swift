import Foundation
import Internals
import Receipts
import Testing

func date(_ rfc3339: String) -> Date {
    (try? ReceiptDate.parse(rfc3339)).flatMap { $0 } ?? Date(timeIntervalSince1970: -1)
}

func seconds(_ epoch: Int) -> Date { Date(timeIntervalSince1970: TimeInterval(epoch)) }

func base64(_ text: String) -> [UInt8] { (try? Base64.decode(Array(text.utf8))) ?? [] }

/// The code of the ReceiptError `body` throws, or nil.
func receiptErrorCode(_ body: () throws -> Void) -> ReceiptError.Code? {
    do {
        try body()
        return nil
    } catch let error as ReceiptError {
        return error.code
    } catch {
        Issue.record("unexpected error type \(type(of: error)): \(error)")
        return nil
    }
}
