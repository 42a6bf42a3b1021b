import TestSupport
import VerifyReceipt

extension RawHTTPResponse {
    /// The JSON `status` of a verifyReceipt body, if any.
    var verifyReceiptStatus: Int? {
        (try? VerifyReceiptResponse(body: body))?.status.rawValue
    }
}
