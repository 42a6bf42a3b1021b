import Internals
public import JSON

extension PurchaseInfo {
    /// Writes the purchase as the `receipt` object Apple's verifyReceipt returned for iOS 6
    /// transaction receipts: every purchase-info key with `-` replaced by `_` (`transaction_id`,
    /// `bid`, `bvrs`, `item_id`, `purchase_date_ms`, …), values as strings, `expires_date` in
    /// milliseconds with the text in `expires_date_formatted` and `expires_date_formatted_pst`.
    ///
    /// Entries are written in document order; date texts the purchase-info lacks but whose
    /// millisecond value it has are added (`purchase_date`, `purchase_date_pst`,
    /// `original_purchase_date`, `original_purchase_date_pst`, `expires_date_formatted`,
    /// `expires_date_formatted_pst`). Non-string values of unknown keys become JSON arrays,
    /// objects, or base64 strings for data.
    public func writeJSON(to json: inout JSONWriter, key: String? = nil) {
        if let key { json.beginObject(key) } else { json.beginObject() }
        var written = Set<String>()
        for entry in entries {
            let name = PurchaseInfo.jsonKey(entry.key)
            guard written.insert(name).inserted else { continue }
            json.value(name, PurchaseInfo.jsonValue(entry.value))
        }
        func add(_ name: String, _ text: String?) {
            guard let text, written.insert(name).inserted else { return }
            json.string(name, text)
        }
        if let purchaseDate {
            add("purchase_date_ms", String(ReceiptDate.milliseconds(purchaseDate)))
            add("purchase_date", ReceiptDate.appleGMT(purchaseDate))
            add("purchase_date_pst", ReceiptDate.applePacific(purchaseDate))
        }
        if let originalPurchaseDate {
            add("original_purchase_date_ms", String(ReceiptDate.milliseconds(originalPurchaseDate)))
            add("original_purchase_date", ReceiptDate.appleGMT(originalPurchaseDate))
            add("original_purchase_date_pst", ReceiptDate.applePacific(originalPurchaseDate))
        }
        if let expiresDate {
            add("expires_date", String(ReceiptDate.milliseconds(expiresDate)))
            add("expires_date_formatted", ReceiptDate.appleGMT(expiresDate))
            add("expires_date_formatted_pst", ReceiptDate.applePacific(expiresDate))
        }
        json.endObject()
    }

    /// The purchase as a verifyReceipt iOS 6 `receipt` object (see ``writeJSON(to:key:)``).
    public func jsonText(indent: Int = 2) -> String {
        var json = JSONWriter(indent: indent)
        writeJSON(to: &json)
        return json.text
    }

    /// Reads a verifyReceipt iOS 6 `receipt` (or `latest_receipt_info`) object back: each member
    /// becomes a purchase-info entry with `_` replaced by `-`, numbers and booleans as their text.
    /// ``data`` is then the text written from those entries, not bytes Apple signed.
    /// - Throws: ``ReceiptError/Code/malformedTransactionReceipt`` for a non-object or a value that
    ///   does not type-check (for example a non-numeric `quantity`).
    public init(verifyReceiptJSON json: JSONValue) throws(ReceiptError) {
        guard case .object(let members) = json else {
            throw ReceiptError.make(.malformedTransactionReceipt, nil, "an iOS 6 receipt object must be a JSON object")
        }
        var entries: [OldStylePropertyList.Entry] = []
        var seen = Set<String>()
        for (name, value) in members {
            let key = String(name.map { $0 == "_" ? "-" : $0 })
            guard seen.insert(key).inserted, let converted = PurchaseInfo.plistValue(value) else { continue }
            entries.append(OldStylePropertyList.Entry(key: key, value: converted))
        }
        try self.init(entries: entries)
    }

    static func jsonKey(_ key: String) -> String { String(key.map { $0 == "-" ? "_" : $0 }) }

    static func jsonValue(_ value: OldStylePropertyList.Value) -> JSONValue {
        switch value {
        case .string(let text): .string(text)
        case .data(let bytes): .string(Base64.encode(bytes))
        case .array(let elements): .array(elements.map(jsonValue))
        case .dictionary(let entries): .object(entries.map { (jsonKey($0.key), jsonValue($0.value)) })
        }
    }

    static func plistValue(_ value: JSONValue) -> OldStylePropertyList.Value? {
        switch value {
        case .null: nil
        case .bool(let flag): .string(flag ? "true" : "false")
        case .number(let text), .string(let text): .string(text)
        case .array(let elements): .array(elements.compactMap(plistValue))
        case .object(let members):
            .dictionary(
                members.compactMap { name, member in
                    plistValue(member).map { OldStylePropertyList.Entry(key: String(name.map { $0 == "_" ? "-" : $0 }), value: $0) }
                })
        }
    }
}

extension TransactionReceipt {
    /// The receipt's purchase as verifyReceipt's iOS 6 `receipt` object (see
    /// ``PurchaseInfo/writeJSON(to:key:)``).
    public func jsonText(indent: Int = 2) -> String { purchaseInfo.jsonText(indent: indent) }
}
