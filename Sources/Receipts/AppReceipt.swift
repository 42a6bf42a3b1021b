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
    /// 0 (undocumented): `Production`, `ProductionSandbox`, `ProductionVPP`, `ProductionVPPSandbox`, `Xcode`.
    public var receiptType: String?
    /// 1 (undocumented): the app's App Store item id (adam id); 0 in sandbox.
    public var appItemID: Int64?
    /// 2: the bundle identifier.
    public var bundleIdentifier: String?
    /// 2: the value of the bundle identifier attribute as encoded (the whole DER UTF8String TLV),
    /// the form the device hash covers.
    public var bundleIdentifierData: [UInt8]?
    /// 3: the app version (CFBundleVersion on iOS, CFBundleShortVersionString on macOS).
    public var appVersion: String?
    /// 4: the opaque value used in the device hash (16 bytes App Store, 8 bytes Xcode).
    public var opaqueValue: [UInt8]?
    /// 5: SHA-1 of device identifier ‖ opaque value ‖ bundle identifier data.
    public var sha1Hash: [UInt8]?
    /// 8 (undocumented): a date; equals the creation date in production, empty in sandbox.
    public var undocumentedDate8: Date?
    /// 10 (undocumented): the age rating, for example `4+`.
    public var ageRating: String?
    /// 12: when the receipt was created; the default time for validating its certificate chain.
    public var creationDate: Date?
    /// 13 (undocumented integer; looks like an OS version such as 170200).
    public var undocumentedInteger13: Int64?
    /// 15 (undocumented): download id; 0 in sandbox.
    public var downloadID: Int64?
    /// 16 (undocumented): version external identifier; 0 in sandbox.
    public var versionExternalIdentifier: Int64?
    /// 18 (undocumented): original purchase date of the app; 2013-08-01T07:00:00Z in sandbox.
    public var originalPurchaseDate: Date?
    /// 19: the version originally purchased (absent in Xcode receipts).
    public var originalAppVersion: String?
    /// 21: when the receipt expires (Volume Purchase Program; 4001-01-01 in Xcode receipts).
    public var expirationDate: Date?
    /// 25 (undocumented integer: 2 on macOS, 3 on iOS in the receipts seen).
    public var undocumentedInteger25: Int64?
    /// 17: the in-app purchase records, in receipt order.
    public var inAppPurchases: [InAppPurchase] = []

    /// Versions of modelled attributes whose version number is not 1 (for example attribute 4 has
    /// version 2 in App Store receipts), keyed by attribute type, so re-encoding loses nothing.
    public var attributeVersions: [Int: Int] = [:]

    /// Date attributes present with an empty string (type 8 in sandbox receipts), which the
    /// date properties report as `nil`; kept so re-encoding distinguishes empty from absent.
    public var emptyDateAttributeTypes: Set<Int> {
        get { Set((0..<64).filter { emptyDateMask & (1 << UInt64($0)) != 0 }) }
        set { emptyDateMask = newValue.reduce(0) { $1 >= 0 && $1 < 64 ? $0 | 1 << UInt64($1) : $0 } }
    }

    /// Bit n: attribute type n was present with an empty date string.
    var emptyDateMask: UInt64 = 0

    var unknown: UnknownAttributes = .none

    /// Attributes whose type is not modelled above (6, 7, 9, 11, 14, 20… in real receipts), kept as encoded.
    public var unknownAttributes: [ReceiptAttribute] {
        get { unknown.list }
        set { unknown = newValue.isEmpty ? .none : .explicit(newValue) }
    }

    /// The PKCS#7 envelope, when the receipt was parsed from one.
    public private(set) var envelope: ReceiptEnvelope?
    /// The exact payload bytes that were parsed (empty for a receipt built in code).
    public private(set) var payload: ArraySlice<UInt8> = []

    /// An empty receipt; set the fields you need (for example to build one with `ReceiptSigning`).
    public init() {}

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
        try self.init(payload: envelope.payload, limits: limits, contiguous: envelope.payloadOffset != nil)
        self.envelope = envelope
    }

    /// Parses a bare payload: the DER SET of receipt attributes.
    public init(payload: ArraySlice<UInt8>, limits: ReceiptLimits = .default) throws(ReceiptError) {
        try self.init(payload: payload, limits: limits, contiguous: true)
    }

    /// Parses a payload with the general path only (no fast path for in-app records), so tests and
    /// fuzzers can check that both paths decide the same.
    @_spi(Testing)
    public init(payloadWithoutFastPath payload: ArraySlice<UInt8>, limits: ReceiptLimits = .default) throws(ReceiptError) {
        var parser = AppReceiptParser(limits: limits, segmentedPayload: false, fastPath: false)
        self = try parser.parse(payload)
        self.payload = payload
    }

    init(payload: ArraySlice<UInt8>, limits: ReceiptLimits, contiguous: Bool) throws(ReceiptError) {
        var parser = AppReceiptParser(limits: limits, segmentedPayload: !contiguous)
        self = try parser.parse(payload)
        self.payload = payload
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
        lhs.receiptType == rhs.receiptType && lhs.appItemID == rhs.appItemID
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
