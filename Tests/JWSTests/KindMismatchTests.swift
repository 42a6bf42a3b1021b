import JSON
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

    /// The check on a decoded payload (what a verifier runs, from the names the decoding read)
    /// gives the same answer as the walk over its JSON, for every payload that decodes as each
    /// model, null-valued known fields and unknown members included.
    @Test(
        arguments: payloads + [
            #"{"transactionId":"1","bundleId":null,"x":1}"#, #"{"autoRenewStatus":1,"transactionId":"2","extra":{"a":[1]}}"#,
            #"{"notificationType":"TEST","subtype":null,"receiptType":"Sandbox"}"#,
            #"{"transaction\u0049d":"1","bundleId":"a","auto\u0052enewStatus":1}"#,
            "{" + (0..<20).map { #""u\#($0)":\#($0),"# }.joined() + #""transactionId":"1","expirationIntent":1}"#,
        ])
    func decodedAgreesWithTheWalk(payload: String) throws {
        let bytes = Array(payload.utf8)
        var decodedAny = false
        func check(_ model: (some JWSPayload & DecodedMemberNames)?) {
            guard let model else { return }
            decodedAny = true
            for kind in AppStorePayloadKind.allCases {
                #expect(kind.mismatch(decoded: model) == kind.mismatch(jsonPayload: bytes), "\(kind) of \(payload) as \(type(of: model))")
            }
        }
        check(try? JWSTransaction(jsonPayload: bytes))
        check(try? JWSRenewalInfo(jsonPayload: bytes))
        check(try? AppTransaction(jsonPayload: bytes))
        check(try? NotificationPayload(jsonPayload: bytes))
        check(try? RealtimeRequest(jsonPayload: bytes))
        // Text that is no strict JSON object decodes as no model; every object here decodes as some.
        var isObject = false
        if case .object = try? JSONValue.parse(bytes) { isObject = true }
        #expect(decodedAny == isObject, "\(payload)")
    }
}
