import JWS
import Testing

/// The one-walk kind check (`mismatch(jsonPayload:)`) gives the same answer as collecting the
/// members first, for payloads of every kind, of no kind, and text that is no JSON object.
@Suite struct KindMismatchTests {
    static let payloads: [String] = [
        #"{"transactionId":"1","originalTransactionId":"1","bundleId":"a","productId":"p","purchaseDate":1}"#,
        #"{"bundleId":"a","environment":"Sandbox","signedDate":1}"#,
        #"{"autoRenewStatus":1,"autoRenewProductId":"p","originalTransactionId":"1","signedDate":1}"#,
        #"{"environment":"Sandbox","signedDate":1}"#,
        #"{"receiptType":"Sandbox","bundleId":"a","appAppleId":1,"applicationVersion":"1"}"#,
        #"{"notificationType":"TEST","notificationUUID":"u","data":{"bundleId":"a"},"version":"2.0","signedDate":1}"#,
        #"{"requestIdentifier":"r","userLocale":"en_US","appAppleId":1}"#,
        #"{"transactionId":"1","autoRenewStatus":1}"#,
        #"{"notificationType":"TEST","transactionId":"1"}"#,
        #"{}"#, #"[]"#, #"not json"#, "", #"{"a":1,"a":2}"#, #"{"transactionId":"1","#, #"{"bundleId":"a","x":[1,2,{"y":}]}"#,
        #"{"receiptCreationDate":1,"expiresDate":2}"#, #"{"userLocale":"en","bundleId":"a"}"#,
    ]

    @Test(arguments: payloads)
    func oneWalkAgreesWithTheMemberSet(payload: String) {
        let bytes = Array(payload.utf8)
        let names = AppStorePayloadKind.memberNames(of: bytes)
        for kind in AppStorePayloadKind.allCases {
            #expect(kind.mismatch(jsonPayload: bytes) == kind.mismatch(memberNames: names), "\(kind) of \(payload)")
        }
    }
}
