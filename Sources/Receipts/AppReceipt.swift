public import FoundationEssentials

/// An App Store app receipt (iOS 7+ / macOS), with every field of every receipt format.
///
/// Parse one with ``init(_:limits:)`` from DER, BER (Xcode), base64 text or a verifyReceipt JSON
/// body. Parsing never trusts the receipt: verify its signature and chain with
/// `ReceiptVerification` before relying on any field. Unknown attributes are kept in
/// ``unknownAttributes``; a single-valued attribute that occurs twice is an error
/// (``ReceiptError/Code/duplicateAttribute``), never "last one wins".
///
/// Strings must be valid UTF-8 (an invalid byte is ``ReceiptError/Code/invalidString``, never a
/// replacement character). Dates have millisecond resolution; an empty date string means `nil`.
public struct AppReceipt: Sendable {
    /// Every field, kept in one reference-counted box: copying a receipt (into a verdict, out of
    /// a function) retains the box once instead of each string and array, and a change copies
    /// the box only when it is shared (copy on write).
    struct Fields: Sendable {
        var receiptType: String?
        var appItemID: Int64?
        var bundleIdentifier: String?
        var bundleIdentifierData: [UInt8]?
        var appVersion: String?
        var opaqueValue: [UInt8]?
        var sha1Hash: [UInt8]?
        var undocumentedDate8: Date?
        var ageRating: String?
        var creationDate: Date?
        var undocumentedInteger13: Int64?
        var downloadID: Int64?
        var versionExternalIdentifier: Int64?
        var originalPurchaseDate: Date?
        var originalAppVersion: String?
        var expirationDate: Date?
        var undocumentedInteger25: Int64?
        var inAppPurchases: [InAppPurchase] = []
        var attributeVersions: [Int: Int] = [:]
        /// Bit n: attribute type n was present with an empty date string.
        var emptyDateMask: UInt64 = 0
        var unknown: UnknownAttributes = .none
        var envelope: ReceiptEnvelope?
        var payload: ArraySlice<UInt8> = []
    }

    /// The box. Its fields change only through ``mutableFields``, which copies a shared box
    /// first, so a box reachable from two receipts (or threads) is never written: the usual
    /// copy-on-write discipline, which is why the class may be `@unchecked Sendable`.
    final class Box: @unchecked Sendable {
        var fields: Fields
        init(_ fields: consuming Fields) { self.fields = fields }
    }

    var box: Box

    /// The fields for writing, after copying the box if another receipt shares it.
    var mutableFields: Fields {
        get { box.fields }
        _modify {
            if !isKnownUniquelyReferenced(&box) { box = Box(box.fields) }
            yield &box.fields
        }
    }

    /// A receipt with these fields.
    init(fields: consuming Fields) { box = Box(fields) }

    /// A receipt holding `box`.
    init(box: Box) { self.box = box }

    /// 0 (undocumented): `Production`, `ProductionSandbox`, `ProductionVPP`, `ProductionVPPSandbox`, `Xcode`.
    public var receiptType: String? {
        get { box.fields.receiptType }
        set { mutableFields.receiptType = newValue }
    }
    /// 1 (undocumented): the app's App Store item id (adam id); 0 in sandbox.
    public var appItemID: Int64? {
        get { box.fields.appItemID }
        set { mutableFields.appItemID = newValue }
    }
    /// 2: the bundle identifier.
    public var bundleIdentifier: String? {
        get { box.fields.bundleIdentifier }
        set { mutableFields.bundleIdentifier = newValue }
    }
    /// 2: the value of the bundle identifier attribute as encoded (the whole DER UTF8String TLV),
    /// the form the device hash covers.
    public var bundleIdentifierData: [UInt8]? {
        get { box.fields.bundleIdentifierData }
        set { mutableFields.bundleIdentifierData = newValue }
    }
    /// 3: the app version (CFBundleVersion on iOS, CFBundleShortVersionString on macOS).
    public var appVersion: String? {
        get { box.fields.appVersion }
        set { mutableFields.appVersion = newValue }
    }
    /// 4: the opaque value used in the device hash (16 bytes App Store, 8 bytes Xcode).
    public var opaqueValue: [UInt8]? {
        get { box.fields.opaqueValue }
        set { mutableFields.opaqueValue = newValue }
    }
    /// 5: SHA-1 of device identifier ‖ opaque value ‖ bundle identifier data.
    public var sha1Hash: [UInt8]? {
        get { box.fields.sha1Hash }
        set { mutableFields.sha1Hash = newValue }
    }
    /// 8 (undocumented): a date; equals the creation date in production, empty in sandbox.
    public var undocumentedDate8: Date? {
        get { box.fields.undocumentedDate8 }
        set { mutableFields.undocumentedDate8 = newValue }
    }
    /// 10 (undocumented): the age rating, for example `4+`.
    public var ageRating: String? {
        get { box.fields.ageRating }
        set { mutableFields.ageRating = newValue }
    }
    /// 12: when the receipt was created; the default time for validating its certificate chain.
    public var creationDate: Date? {
        get { box.fields.creationDate }
        set { mutableFields.creationDate = newValue }
    }
    /// 13 (undocumented integer; looks like an OS version such as 170200).
    public var undocumentedInteger13: Int64? {
        get { box.fields.undocumentedInteger13 }
        set { mutableFields.undocumentedInteger13 = newValue }
    }
    /// 15 (undocumented): download id; 0 in sandbox.
    public var downloadID: Int64? {
        get { box.fields.downloadID }
        set { mutableFields.downloadID = newValue }
    }
    /// 16 (undocumented): version external identifier; 0 in sandbox.
    public var versionExternalIdentifier: Int64? {
        get { box.fields.versionExternalIdentifier }
        set { mutableFields.versionExternalIdentifier = newValue }
    }
    /// 18 (undocumented): original purchase date of the app; 2013-08-01T07:00:00Z in sandbox.
    public var originalPurchaseDate: Date? {
        get { box.fields.originalPurchaseDate }
        set { mutableFields.originalPurchaseDate = newValue }
    }
    /// 19: the version originally purchased (absent in Xcode receipts).
    public var originalAppVersion: String? {
        get { box.fields.originalAppVersion }
        set { mutableFields.originalAppVersion = newValue }
    }
    /// 21: when the receipt expires (Volume Purchase Program; 4001-01-01 in Xcode receipts).
    public var expirationDate: Date? {
        get { box.fields.expirationDate }
        set { mutableFields.expirationDate = newValue }
    }
    /// 25 (undocumented integer: 2 on macOS, 3 on iOS in the receipts seen).
    public var undocumentedInteger25: Int64? {
        get { box.fields.undocumentedInteger25 }
        set { mutableFields.undocumentedInteger25 = newValue }
    }
    /// 17: the in-app purchase records, in receipt order.
    public var inAppPurchases: [InAppPurchase] {
        get { box.fields.inAppPurchases }
        _modify { yield &mutableFields.inAppPurchases }
    }

    /// Versions of modelled attributes whose version number is not 1 (for example attribute 4 has
    /// version 2 in App Store receipts), keyed by attribute type, so re-encoding loses nothing.
    public var attributeVersions: [Int: Int] {
        get { box.fields.attributeVersions }
        set { mutableFields.attributeVersions = newValue }
    }

    /// Date attributes present with an empty string (type 8 in sandbox receipts), which the
    /// date properties report as `nil`; kept so re-encoding distinguishes empty from absent.
    public var emptyDateAttributeTypes: Set<Int> {
        get { Set((0..<64).filter { emptyDateMask & (1 << UInt64($0)) != 0 }) }
        set { emptyDateMask = newValue.reduce(0) { $1 >= 0 && $1 < 64 ? $0 | 1 << UInt64($1) : $0 } }
    }

    /// Bit n: attribute type n was present with an empty date string.
    var emptyDateMask: UInt64 {
        get { box.fields.emptyDateMask }
        set { mutableFields.emptyDateMask = newValue }
    }

    var unknown: UnknownAttributes {
        get { box.fields.unknown }
        set { mutableFields.unknown = newValue }
    }

    /// Attributes whose type is not modelled above (6, 7, 9, 11, 14, 20… in real receipts), kept as encoded.
    public var unknownAttributes: [ReceiptAttribute] {
        get { unknown.list }
        set { unknown = newValue.isEmpty ? .none : .explicit(newValue) }
    }

    /// The PKCS#7 envelope, when the receipt was parsed from one.
    public private(set) var envelope: ReceiptEnvelope? {
        get { box.fields.envelope }
        set { mutableFields.envelope = newValue }
    }
    /// The exact payload bytes that were parsed (empty for a receipt built in code).
    public private(set) var payload: ArraySlice<UInt8> {
        get { box.fields.payload }
        set { mutableFields.payload = newValue }
    }

    /// An empty receipt; set the fields you need (for example to build one with `ReceiptSigning`).
    public init() { box = Box(Fields()) }

    /// Parses a receipt from DER/BER bytes, base64 text, or a JSON body with `receipt-data`.
    /// - Throws: ``ReceiptError``; a legacy transaction receipt gives ``ReceiptError/Code/notAReceipt``.
    public init(_ bytes: [UInt8], limits: ReceiptLimits = .default) throws(ReceiptError) {
        switch try ReceiptInput.detect(bytes, limits: limits) {
        case .appReceipt(let der):
            try self.init(envelope: ReceiptEnvelope(der, limits: limits), limits: limits)
        case .transactionReceipt:
            throw ReceiptError.make(
                .notAReceipt, 0, "this is a legacy iOS 6 transaction receipt, not an app receipt; use TransactionReceipt")
        }
    }

    /// Parses the payload of an already-read envelope.
    public init(envelope: ReceiptEnvelope, limits: ReceiptLimits = .default) throws(ReceiptError) {
        var parser = AppReceiptParser(limits: limits, segmentedPayload: envelope.payloadOffset == nil)
        self = try parser.parse(envelope.payload, envelope: envelope)
    }

    /// Parses a bare payload: the DER SET of receipt attributes.
    public init(payload: ArraySlice<UInt8>, limits: ReceiptLimits = .default) throws(ReceiptError) {
        var parser = AppReceiptParser(limits: limits, segmentedPayload: false)
        self = try parser.parse(payload)
    }

    /// Which App Store environment the receipt type names.
    public var environment: ReceiptEnvironment { ReceiptEnvironment(receiptType: receiptType) }
}

/// The environment a receipt comes from, derived from its receipt type.
public enum ReceiptEnvironment: String, Sendable, Hashable {
    case production = "Production"
    case sandbox = "Sandbox"
    case xcode = "Xcode"
    /// No receipt type, or one this library does not know.
    case unknown = "Unknown"

    /// `Production`/`ProductionVPP` → production, `ProductionSandbox`/`ProductionVPPSandbox` →
    /// sandbox, `Xcode` → xcode, anything else → unknown.
    public init(receiptType: String?) {
        switch receiptType {
        case "Production", "ProductionVPP": self = .production
        case "ProductionSandbox", "ProductionVPPSandbox": self = .sandbox
        case "Xcode": self = .xcode
        default: self = .unknown
        }
    }
}

extension AppReceipt: Equatable {
    /// Field-by-field equality (envelope and payload bytes are not compared).
    public static func == (lhs: AppReceipt, rhs: AppReceipt) -> Bool {
        if lhs.box === rhs.box { return true }
        return lhs.receiptType == rhs.receiptType && lhs.appItemID == rhs.appItemID
            && lhs.bundleIdentifier == rhs.bundleIdentifier && lhs.bundleIdentifierData == rhs.bundleIdentifierData
            && lhs.appVersion == rhs.appVersion && lhs.opaqueValue == rhs.opaqueValue && lhs.sha1Hash == rhs.sha1Hash
            && lhs.undocumentedDate8 == rhs.undocumentedDate8 && lhs.ageRating == rhs.ageRating
            && lhs.creationDate == rhs.creationDate && lhs.undocumentedInteger13 == rhs.undocumentedInteger13
            && lhs.downloadID == rhs.downloadID && lhs.versionExternalIdentifier == rhs.versionExternalIdentifier
            && lhs.originalPurchaseDate == rhs.originalPurchaseDate && lhs.originalAppVersion == rhs.originalAppVersion
            && lhs.expirationDate == rhs.expirationDate && lhs.undocumentedInteger25 == rhs.undocumentedInteger25
            && lhs.inAppPurchases == rhs.inAppPurchases && lhs.unknownAttributes == rhs.unknownAttributes
            && lhs.attributeVersions == rhs.attributeVersions && lhs.emptyDateMask == rhs.emptyDateMask
    }
}
