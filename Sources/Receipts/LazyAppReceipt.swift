@_spi(RawParsing) import ASN1

/// Questions about a receipt answered by walking its bytes, without materializing the records:
/// for a server that only needs "does this receipt contain product X" on receipts with thousands
/// of purchases.
///
/// Only the structure a question walks is checked (attribute framing and the product identifier
/// strings); other values are not decoded. Use ``AppReceipt`` to validate and read everything.
public struct LazyAppReceipt: Sendable {
    /// The payload being queried.
    public let payload: ArraySlice<UInt8>
    let limits: ReceiptLimits

    /// Reads the envelope of a receipt (DER, BER, base64 or a JSON body).
    public init(_ bytes: [UInt8], limits: ReceiptLimits = .default) throws(ReceiptError) {
        switch try ReceiptInput.detect(bytes, limits: limits) {
        case .appReceipt(let der): self.init(envelope: try ReceiptEnvelope(der, limits: limits), limits: limits)
        case .transactionReceipt: throw ReceiptError.make(.notAReceipt, 0, "a transaction receipt is not an app receipt")
        }
    }

    /// Queries a bare payload (the DER SET of receipt attributes).
    public init(payload: ArraySlice<UInt8>, limits: ReceiptLimits = .default) {
        self.payload = payload
        self.limits = limits
    }

    /// Queries the payload of an envelope.
    public init(envelope: ReceiptEnvelope, limits: ReceiptLimits = .default) {
        self.payload = envelope.payload
        self.limits = limits
    }

    /// Whether any in-app record names `productIdentifier` (cancelled records included; decode the
    /// receipt with ``AppReceipt`` to look at cancellations).
    public func containsInAppPurchase(ofProduct productIdentifier: String) throws(ReceiptError) -> Bool {
        let target = Array(productIdentifier.utf8)
        return try target.span.withUnsafeBufferPointer { (typedWanted) throws(ReceiptError) -> Bool in
            let wanted = UnsafeRawBufferPointer(typedWanted)
            var found = false
            try walkProductIdentifiers { bytes in
                if bytes.count == wanted.count && bytes.elementsEqualFast(wanted) {
                    found = true
                    return false
                }
                return true
            }
            return found
        }
    }

    /// The number of in-app purchase records.
    public func inAppPurchaseCount() throws(ReceiptError) -> Int {
        var count = 0
        try walkRecords { (_, _) throws(ASN1Error) -> Bool in
            count += 1
            return true
        }
        return count
    }

    /// Calls `body` with the product identifier bytes of each record until it returns `false`.
    func walkProductIdentifiers(_ body: (UnsafeRawBufferPointer) -> Bool) throws(ReceiptError) {
        try walkRecords { (raw, record) throws(ASN1Error) -> Bool in
            var set = record
            while !set.isAtEnd {
                let attribute = try AppReceiptParser.readAttribute(&set)
                guard attribute.type == 1702 else { continue }
                var inner = ASN1RawReader(
                    buffer: raw, base: set.base, position: attribute.value.lowerBound, end: attribute.value.upperBound,
                    rules: .der, depth: set.depth, maximumDepth: set.maximumDepth)
                let element = try inner.readElement()
                try inner.finish()
                guard element.identifier == .utf8String || element.identifier == .ia5String else {
                    throw ASN1Error(code: .unexpectedTag, offset: set.base + element.start, reason: "product_id is \(element.identifier)")
                }
                return body(UnsafeRawBufferPointer(rebasing: raw[element.contentStart..<element.contentEnd]))
            }
            return true
        }
    }

    /// Calls `body` with a reader over each in-app record's attribute SET until it returns `false`.
    func walkRecords(_ body: (UnsafeRawBufferPointer, ASN1RawReader) throws(ASN1Error) -> Bool) throws(ReceiptError) {
        let limits = limits
        do {
            try payload.span.withUnsafeBufferPointer { (typed) throws(ASN1Error) in
                let raw = UnsafeRawBufferPointer(typed)
                var set = try AppReceiptParser.openPayload(
                    ASN1RawReader(buffer: raw, base: payload.startIndex, rules: .der, maximumDepth: limits.maximumDepth))
                var records = 0
                while !set.isAtEnd {
                    let attribute = try AppReceiptParser.readAttribute(&set)
                    guard attribute.type == 17 else { continue }
                    records += 1
                    guard records <= limits.maximumInAppPurchases else {
                        throw ASN1Error(code: .unexpectedTag, offset: set.base + attribute.start, reason: "too many in-app records")
                    }
                    var value = ASN1RawReader(
                        buffer: raw, base: set.base, position: attribute.value.lowerBound, end: attribute.value.upperBound,
                        rules: .der, depth: set.depth, maximumDepth: limits.maximumDepth)
                    let record = try value.readConstructed(.set)
                    try value.finish()
                    guard try body(raw, record) else { return }
                }
            }
        } catch {
            throw ReceiptError.wrap(error, as: .malformedPayload, context: "receipt payload")
        }
    }
}

extension UnsafeRawBufferPointer {
    /// Byte equality of two buffers of the same length.
    @inline(__always)
    func elementsEqualFast(_ other: UnsafeRawBufferPointer) -> Bool {
        guard count == other.count else { return false }
        var i = 0
        while i + 8 <= count {
            if loadUnaligned(fromByteOffset: i, as: UInt64.self) != other.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
                return false
            }
            i += 8
        }
        while i < count {
            if self[i] != other[i] { return false }
            i += 1
        }
        return true
    }
}
