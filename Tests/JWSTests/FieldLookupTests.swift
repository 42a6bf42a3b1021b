import JSON
import JWS
import Testing

/// The one field lookup every model shares: a key names a typed field only when it is exactly
/// that field's name, whatever its length and wherever it differs.
@Suite struct FieldLookupTests {
    /// Names of a transaction's fields of every length class the lookup compares differently:
    /// up to 3 bytes, 4 to 7, 8 to 16, and longer.
    static let names = [
        "type", "price", "bundleId", "productId", "transactionId", "transactionReason", "webOrderLineItemId",
        "originalTransactionId", "deviceVerificationNonce", "subscriptionGroupIdentifier",
    ]

    /// Each name with one byte changed, at each position, is an unknown member, not the field.
    @Test func nearMissesAreUnknown() throws {
        for name in Self.names {
            let bytes = Array(name.utf8)
            for position in bytes.indices {
                var changed = bytes
                changed[position] = changed[position] == UInt8(ascii: "X") ? UInt8(ascii: "Y") : UInt8(ascii: "X")
                let key = String(decoding: changed, as: UTF8.self)
                let transaction = try JWSTransaction(jsonText: "{\"\(key)\":\"1\"}")
                #expect(transaction.unknownFields.map(\.0) == [key], "\(key)")
                #expect(transaction.transactionId == nil && transaction.productId == nil)
            }
            // A name one byte longer or shorter is not the field either.
            for key in [name + "s", String(name.dropLast())] {
                let transaction = try JWSTransaction(jsonText: "{\"\(key)\":true}")
                #expect(transaction.unknownFields.map(\.0) == [key], "\(key)")
            }
        }
    }

    /// Every name is its field, also when the key is written with escapes.
    @Test func exactNamesAreTheFields() throws {
        let transaction = try JWSTransaction(
            jsonText: #"""
                {"type":"Consumable","price":1200,"bundleId":"b","productId":"p","transactionId":"7",
                "transactionReason":"PURCHASE","webOrderLineItemId":"w","originalTransactionId":"6",
                "deviceVerificationNonce":"n","subscriptionGroupIdentifier":"g"}
                """#)
        #expect(transaction.unknownFields.isEmpty)
        #expect(transaction.type == .consumable && transaction.price == 1200 && transaction.bundleId == "b")
        #expect(transaction.productId == "p" && transaction.transactionId == "7" && transaction.transactionReason == .purchase)
        #expect(transaction.webOrderLineItemId == "w" && transaction.originalTransactionId == "6")
        #expect(transaction.deviceVerificationNonce == "n" && transaction.subscriptionGroupIdentifier == "g")

        let escaped = try JWSTransaction(jsonText: #"{"\u0074ransactionId":"5","subscriptionGroupIdentifie\u0072":"g"}"#)
        #expect(escaped.transactionId == "5" && escaped.subscriptionGroupIdentifier == "g" && escaped.unknownFields.isEmpty)
        // The escaped spelling of a name already read is a repeated key.
        #expect(throws: JWSError.self) { try JWSTransaction(jsonText: #"{"type":"Consumable","\u0074ype":"Consumable"}"#) }
    }

    /// A name that differs from its Swift case (`SKU`) is read under the name.
    @Test func namesThatAreNotCaseNames() throws {
        let item = try AdvancedCommerceItem(json: Array(#"{"SKU":"s","sku":"t"}"#.utf8))
        #expect(item.sku == "s")
        #expect(item.unknownFields.map(\.0) == ["sku"])
        #expect(item.jsonValue() == .object([("SKU", .string("s")), ("sku", .string("t"))]))
    }
}
