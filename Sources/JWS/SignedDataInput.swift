public import JSON

/// The App Store payload types, told apart by the names of their top-level members.
public enum AppStorePayloadKind: String, Sendable, Hashable, CaseIterable {
    /// ``JWSTransaction``.
    case transaction
    /// ``JWSRenewalInfo``.
    case renewalInfo
    /// ``AppTransaction``.
    case appTransaction
    /// ``NotificationPayload``.
    case notification
    /// ``RealtimeRequest``.
    case realtimeRequest
    /// JSON whose members name none of the above.
    case unknown

    /// The kind of a JSON payload: `notificationType`/`notificationUUID` → notification;
    /// `receiptType`/`applicationVersion`/`receiptCreationDate` → app transaction;
    /// `transactionId` or `bundleId` → transaction; `autoRenewStatus`, `autoRenewProductId`,
    /// `renewalDate` or `expirationIntent` → renewal info; `userLocale` → real-time request;
    /// anything else, and text that is not a JSON object, → ``unknown``.
    public static func of(jsonPayload: [UInt8]) -> AppStorePayloadKind {
        of(memberNames: memberNames(of: jsonPayload))
    }
}

/// A decoded App Store payload of any kind. Decoding verifies nothing (see ``JWSPayload``).
public enum AppStorePayload: Sendable, Equatable {
    /// A signed transaction's payload.
    case transaction(JWSTransaction)
    /// A subscription's renewal info.
    case renewalInfo(JWSRenewalInfo)
    /// An app transaction.
    case appTransaction(AppTransaction)
    /// A server notification V2.
    case notification(NotificationPayload)
    /// A Retention Messaging real-time request.
    case realtimeRequest(RealtimeRequest)
    /// JSON of no known kind, parsed strictly.
    case unknown(JSONValue)

    /// Decodes `jsonPayload` as `kind` (by default the kind ``AppStorePayloadKind/of(jsonPayload:)``
    /// names); verifies nothing.
    static func decode(jsonPayload: [UInt8], as kind: AppStorePayloadKind?, limits: JWSLimits) throws(JWSError) -> AppStorePayload {
        switch kind ?? AppStorePayloadKind.of(jsonPayload: jsonPayload) {
        case .transaction: return .transaction(try JWSTransaction(jsonPayload: jsonPayload, limits: limits))
        case .renewalInfo: return .renewalInfo(try JWSRenewalInfo(jsonPayload: jsonPayload, limits: limits))
        case .appTransaction: return .appTransaction(try AppTransaction(jsonPayload: jsonPayload, limits: limits))
        case .notification: return .notification(try NotificationPayload(jsonPayload: jsonPayload, limits: limits))
        case .realtimeRequest: return .realtimeRequest(try RealtimeRequest(jsonPayload: jsonPayload, limits: limits))
        case .unknown:
            do {
                return .unknown(try JSONValue.parse(jsonPayload, options: limits.jsonOptions))
            } catch {
                throw .json(error, context: "payload")
            }
        }
    }

    /// The package's one unverified reader: decodes a token's payload as `kind` (by default the
    /// kind its members name) and **verifies nothing**: no signature, no chain, no kind check.
    /// For showing a token (`receipt-tool dump`); anything that acts on a payload takes it from a
    /// valid verdict instead. Offsets point into the token.
    public static func decodeUnverified(_ jws: CompactJWS, as kind: AppStorePayloadKind? = nil) throws(JWSError) -> AppStorePayload {
        do {
            return try decode(jsonPayload: jws.unverifiedPayload, as: kind, limits: jws.limits)
        } catch {
            throw error.mapped(toSegmentAt: jws.headerEnd + 1)
        }
    }

    /// The kind.
    public var kind: AppStorePayloadKind {
        switch self {
        case .transaction: .transaction
        case .renewalInfo: .renewalInfo
        case .appTransaction: .appTransaction
        case .notification: .notification
        case .realtimeRequest: .realtimeRequest
        case .unknown: .unknown
        }
    }

    /// The payload as JSON (see ``JWSPayload/jsonValue()``).
    public func jsonValue() -> JSONValue {
        switch self {
        case .transaction(let p): p.jsonValue()
        case .renewalInfo(let p): p.jsonValue()
        case .appTransaction(let p): p.jsonValue()
        case .notification(let p): p.jsonValue()
        case .realtimeRequest(let p): p.jsonValue()
        case .unknown(let v): v
        }
    }
}

/// App Store signed data as it travels: a compact JWS on its own, or a notification request body.
public enum SignedDataInput: Sendable, Equatable {
    /// A compact JWS (text `eyJ…` with two dots; surrounding whitespace allowed).
    case token(CompactJWS)
    /// An App Store Server Notification V2 request body, `{"signedPayload": "<JWS>"}`.
    case notificationBody(CompactJWS)

    /// The JWS.
    public var jws: CompactJWS {
        switch self {
        case .token(let jws), .notificationBody(let jws): jws
        }
    }

    /// Detects signed data: after trimming ASCII whitespace, text starting `eyJ` with a `.` is a
    /// compact JWS; a JSON object with a string member `signedPayload` is a notification body.
    /// - Returns: `nil` when the input has neither shape (receipts, for example, never do).
    /// - Throws: ``JWSError`` when it has one of the shapes but is malformed; offsets index
    ///   `bytes` for a token, and the `signedPayload` string for a body.
    public static func detect(_ bytes: [UInt8], limits: JWSLimits = .default) throws(JWSError) -> SignedDataInput? {
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || (b >= 0x09 && b <= 0x0D) }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else {
            return nil
        }
        let trimmed = bytes[first...last]
        if trimmed.starts(with: [0x65, 0x79, 0x4A]), trimmed.contains(UInt8(ascii: ".")) {
            do {
                return .token(try CompactJWS(Array(trimmed), limits: limits))
            } catch {
                guard let offset = error.offset else { throw error }
                throw JWSError(code: error.code, offset: offset + first, reason: error.reason, underlying: error.underlying)
            }
        }
        var bodyOptions = limits.jsonOptions
        bodyOptions.maximumInputSize = limits.maximumTokenSize * 2
        guard trimmed.first == UInt8(ascii: "{"),
            case .object(let members)? = try? JSONValue.parse(bytes, options: bodyOptions),
            let value = members.first(where: { $0.0 == "signedPayload" })?.1
        else { return nil }
        guard case .string(let token) = value else {
            throw .make(.notAJWS, nil, "\"signedPayload\" is a \(value.kindName), not a string")
        }
        return .notificationBody(try CompactJWS(token, limits: limits))
    }
}
