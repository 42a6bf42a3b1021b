import JSON

/// What tells the App Store payload kinds apart, and what a verifier of one kind requires of a
/// payload before it calls it that kind.
///
/// Each kind has its *marks*: top-level members that payloads of that kind carry and payloads of
/// some other kind never do (a transaction's `transactionId`, a renewal info's `autoRenewStatus`,
/// an app transaction's `receiptType`, a notification's `notificationType`). A payload fits kind K
/// when it carries none of the other kinds' marks (members two kinds share, such as an app
/// transaction's and a transaction's `bundleId`, are foreign only to the kinds that carry neither)
/// and at least one of K's ``AppStorePayloadKind/requiredMembers`` (renewal info requires none:
/// Apple's own minimal renewal info carries only `environment` and `signedDate`).
extension AppStorePayloadKind {
    /// The top-level member names of a JSON object payload; empty for text that is not a JSON
    /// object or that does not parse within the default limits.
    public static func memberNames(of jsonPayload: [UInt8]) -> Set<String> {
        var names: Set<String> = []
        return forEachMemberName(of: jsonPayload) { names.insert($0) } ? names : []
    }

    /// Calls `body` with each top-level member name of a JSON object payload, in order, within
    /// the default limits; false when the text is not a JSON object or a value does not parse
    /// (a key that does not read ends the walk as the last one).
    private static func forEachMemberName(of jsonPayload: [UInt8], _ body: (String) -> Void) -> Bool {
        forEachMemberKey(of: jsonPayload) { body($0.string) }
    }

    /// ``forEachMemberName(of:_:)`` with each key as read (no String made for it).
    private static func forEachMemberKey(of jsonPayload: [UInt8], _ body: (JSONKey) -> Void) -> Bool {
        jsonPayload.span.withUnsafeBufferPointer { buffer in
            guard var reader = try? JSONReader(buffer, options: JWSLimits.default.jsonOptions),
                reader.peek() == UInt8(ascii: "{"),
                var state = try? reader.beginObject()
            else { return false }
            while let key = try? reader.nextKey(&state) {
                body(key)
                guard (try? reader.skipValue()) != nil else { return false }
            }
            return true
        }
    }

    /// The kind detection names for a payload with these top-level members (see
    /// ``of(jsonPayload:)``).
    public static func of(memberNames names: Set<String>) -> AppStorePayloadKind {
        if names.contains("notificationType") || names.contains("notificationUUID") { return .notification }
        if names.contains("receiptType") || names.contains("applicationVersion") || names.contains("receiptCreationDate") {
            return .appTransaction
        }
        if names.contains("transactionId") { return .transaction }
        if ["autoRenewStatus", "autoRenewProductId", "renewalDate", "expirationIntent"].contains(where: names.contains) {
            return .renewalInfo
        }
        if names.contains("userLocale") || names.contains("requestIdentifier") { return .realtimeRequest }
        if names.contains("bundleId") { return .transaction }
        return .unknown
    }

    /// Top-level members payloads of this kind carry and payloads of some other kind never do.
    public var marks: Set<String> { Self.markTable[self] ?? [] }

    /// ``marks`` of every kind, made once (every verification consults them).
    private static let markTable: [AppStorePayloadKind: Set<String>] = Dictionary(
        uniqueKeysWithValues: (verifiable + [.unknown]).map { ($0, $0.listedMarks) })

    /// The members no payload of each kind carries (``foreignMembers``), made once.
    private static let foreignTable: [AppStorePayloadKind: Set<String>] = Dictionary(
        uniqueKeysWithValues: (verifiable + [.unknown]).map { kind in
            var foreign: Set<String> = []
            for other in verifiable where other != kind { foreign.formUnion(other.listedMarks) }
            return (kind, foreign.subtracting(kind.listedMarks))
        })

    /// The marks as listed (see ``marks``).
    private var listedMarks: Set<String> {
        switch self {
        case .transaction:
            [
                "transactionId", "bundleId", "webOrderLineItemId", "purchaseDate", "originalPurchaseDate", "expiresDate", "quantity",
                "type", "inAppOwnershipType", "transactionReason", "revocationDate", "revocationReason", "storefront", "storefrontId",
                "isUpgraded", "subscriptionGroupIdentifier", "price",
            ]
        case .renewalInfo:
            [
                "autoRenewStatus", "autoRenewProductId", "renewalDate", "expirationIntent", "gracePeriodExpiresDate",
                "isInBillingRetryPeriod", "priceIncreaseStatus", "recentSubscriptionStartDate", "renewalPrice",
                "eligibleWinBackOfferIds", "renewalBillingPlanType",
            ]
        case .appTransaction:
            [
                "bundleId", "appAppleId", "receiptType", "applicationVersion", "originalApplicationVersion", "receiptCreationDate",
                "originalPurchaseDate", "originalPlatform", "preorderDate", "versionExternalIdentifier",
            ]
        case .notification:
            ["notificationType", "notificationUUID", "subtype", "version", "data", "summary", "externalPurchaseToken", "appData"]
        case .realtimeRequest:
            // appAppleId is an app transaction's too; listed so that it is not foreign here.
            ["userLocale", "requestIdentifier", "appAppleId"]
        case .unknown:
            []
        }
    }

    /// Members of which a payload of this kind must carry at least one: a transaction
    /// `transactionId` or `bundleId` (Apple's minimal mock transaction has only the latter); an
    /// app transaction `receiptType`, `applicationVersion`, `originalApplicationVersion` or
    /// `receiptCreationDate`; a notification `notificationType` or `notificationUUID`; a
    /// Retention Messaging real-time request `requestIdentifier` or `userLocale`; renewal info none.
    public var requiredMembers: [String] {
        switch self {
        case .transaction: ["transactionId", "bundleId"]
        case .appTransaction: ["receiptType", "applicationVersion", "originalApplicationVersion", "receiptCreationDate"]
        case .notification: ["notificationType", "notificationUUID"]
        case .realtimeRequest: ["requestIdentifier", "userLocale"]
        case .renewalInfo, .unknown: []
        }
    }

    /// The kinds a verifier can be asked for (each has marks).
    static let verifiable: [AppStorePayloadKind] = [.transaction, .renewalInfo, .appTransaction, .notification, .realtimeRequest]

    /// The members no payload of this kind carries: the other verifiable kinds' marks, less this
    /// kind's own.
    public var foreignMembers: Set<String> { Self.foreignTable[self] ?? [] }

    /// Why the JSON payload is not of this kind, or nil when it fits: the same answer as
    /// `mismatch(memberNames: memberNames(of: jsonPayload))`, found in one walk over the members
    /// without collecting them when the payload fits (as every genuine one does).
    public func mismatch(jsonPayload: [UInt8]) -> KindMismatch? {
        let tables = Self.walkTables[walkTableIndex]
        var fits = true
        var carriesRequired = tables.required.isEmpty
        let walked = Self.forEachMemberKey(of: jsonPayload) { key in
            if fits, tables.foreign.contains(key) { fits = false }
            if !carriesRequired, tables.required.contains(key) { carriesRequired = true }
        }
        if walked, fits, carriesRequired { return nil }
        return mismatch(memberNames: Self.memberNames(of: jsonPayload))
    }

    /// Why the decoded `payload` (one of the package's own models) is not of this kind, or nil
    /// when it fits: from the names its decoding read, under the limits it was decoded with,
    /// instead of a second walk over its JSON. Under the default limits the answer of
    /// ``mismatch(jsonPayload:)`` for the JSON it was decoded from.
    package func mismatch(decoded payload: some DecodedMemberNames) -> KindMismatch? {
        if payload.fitsKind(at: walkTableIndex) { return nil }
        var names: Set<String> = []
        payload.forEachDecodedMemberName { names.insert($0) }
        return mismatch(memberNames: names)
    }

    /// ``foreignMembers`` and ``requiredMembers`` of each kind as byte tables, in the order of
    /// ``walkTableIndex``, made once.
    static let walkTables: [(foreign: MemberNameTable, required: MemberNameTable)] =
        ([
            .transaction, .renewalInfo, .appTransaction, .notification, .realtimeRequest, .unknown,
        ] as [AppStorePayloadKind]).map { (MemberNameTable($0.foreignMembers), MemberNameTable($0.requiredMembers)) }

    /// This kind's position in ``walkTables``.
    var walkTableIndex: Int {
        switch self {
        case .transaction: 0
        case .renewalInfo: 1
        case .appTransaction: 2
        case .notification: 3
        case .realtimeRequest: 4
        case .unknown: 5
        }
    }

    /// Why a payload with these top-level members is not of this kind, or nil when it fits.
    public func mismatch(memberNames names: Set<String>) -> KindMismatch? {
        let foreignToThisKind = foreignMembers
        let foreign = names.filter { foreignToThisKind.contains($0) }.sorted()
        let required = requiredMembers
        let lacking = !required.isEmpty && !required.contains(where: names.contains)
        guard !foreign.isEmpty || lacking else { return nil }
        return KindMismatch(
            expected: self, found: Self.of(memberNames: names), foreignMembers: foreign, missingMembers: lacking ? required : [])
    }

    /// The kind for people: `transaction`, `renewal info`, `app transaction`, `notification`,
    /// `real-time request`, `payload of no known kind`.
    public var displayName: String {
        switch self {
        case .transaction: "transaction"
        case .renewalInfo: "renewal info"
        case .appTransaction: "app transaction"
        case .notification: "notification"
        case .realtimeRequest: "real-time request"
        case .unknown: "payload of no known kind"
        }
    }

    /// ``displayName`` with its article: `a transaction`, `an app transaction`.
    public var withArticle: String {
        let name = displayName
        return (name.first.map { "aeiou".contains($0) } ?? false ? "an " : "a ") + name
    }
}

/// Member names as bytes grouped by length, for checking keys as the reader reads them.
struct MemberNameTable: Sendable {
    /// The names of each length, at that index.
    private var byLength: [[[UInt8]]] = []
    /// Whether no name is in the table.
    private(set) var isEmpty = true

    /// A table of `names`.
    init(_ names: some Sequence<String>) {
        for name in names {
            let bytes = Array(name.utf8)
            while byLength.count <= bytes.count { byLength.append([]) }
            byLength[bytes.count].append(bytes)
            isEmpty = false
        }
    }

    /// Whether `key` is one of the names.
    func contains(_ key: JSONKey) -> Bool {
        key.withBytes { contains(bytes: $0) }
    }

    /// Whether `name` is one of the names.
    func contains(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { contains(bytes: $0) }
    }

    /// Whether the UTF-8 `bytes` are one of the names.
    func contains(bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count < byLength.count else { return false }
        for candidate in byLength[bytes.count] where candidate.withUnsafeBufferPointer({ $0.elementsEqual(bytes) }) {
            return true
        }
        return false
    }
}

/// Why a payload is not of the kind a verifier reads: which kind it looks like, the members it
/// carries that the kind never does, and the members it lacks.
public struct KindMismatch: Sendable, Hashable, CustomStringConvertible {
    /// The kind the verifier reads.
    public let expected: AppStorePayloadKind
    /// The kind detection names for the payload (``AppStorePayloadKind/of(memberNames:)``).
    public let found: AppStorePayloadKind
    /// Members the payload carries that `expected` never does, sorted.
    public let foreignMembers: [String]
    /// Members of which `expected` needs one and the payload has none (empty when that is not the
    /// problem).
    public let missingMembers: [String]

    /// For example `the payload is a renewal info, not a transaction: it carries autoRenewStatus
    /// and has none of transactionId, bundleId`.
    public var description: String {
        var problems: [String] = []
        if !foreignMembers.isEmpty {
            problems.append("it carries \(foreignMembers.joined(separator: ", ")), which no \(expected.displayName) carries")
        }
        if !missingMembers.isEmpty { problems.append("it has none of \(missingMembers.joined(separator: ", "))") }
        let what =
            found == expected
            ? "payload mixes kinds" : "payload is \(found.withArticle), not \(expected.withArticle)"
        return "the \(what): " + problems.joined(separator: "; ")
    }
}
