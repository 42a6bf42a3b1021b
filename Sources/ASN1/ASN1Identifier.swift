/// The class bits of an ASN.1 identifier.
public enum ASN1TagClass: UInt8, Hashable, Sendable {
    case universal = 0
    case application = 1
    case contextSpecific = 2
    case `private` = 3
}

/// An ASN.1 identifier: tag class, tag number and the constructed bit.
///
/// Universal constants such as ``sequence`` and ``integer`` cover the types receipts and
/// certificates use; context-specific tags are made with ``contextSpecific(_:constructed:)``.
public struct ASN1Identifier: Hashable, Sendable, CustomStringConvertible {
    /// The tag class.
    public let tagClass: ASN1TagClass
    /// The tag number (at most `UInt32.max`).
    public let tagNumber: UInt32
    /// Whether the element is constructed (holds child elements) rather than primitive.
    public let isConstructed: Bool

    /// Creates an identifier.
    @inlinable
    public init(tagClass: ASN1TagClass, tagNumber: UInt32, constructed: Bool) {
        self.tagClass = tagClass
        self.tagNumber = tagNumber
        self.isConstructed = constructed
    }

    /// The identifier encoded in a single octet, for tag numbers below 31.
    @inlinable
    public init(shortForm byte: UInt8) {
        self.tagClass = ASN1TagClass(rawValue: byte >> 6) ?? .universal
        self.tagNumber = UInt32(byte & 0x1F)
        self.isConstructed = byte & 0x20 != 0
    }

    /// The single identifier octet when the tag number is below 31, else `nil`.
    @inlinable
    public var shortFormByte: UInt8? {
        guard tagNumber < 31 else { return nil }
        return tagClass.rawValue << 6 | (isConstructed ? 0x20 : 0) | UInt8(tagNumber)
    }

    /// A context-specific tag `[n]`.
    @inlinable
    public static func contextSpecific(_ number: UInt32, constructed: Bool) -> ASN1Identifier {
        ASN1Identifier(tagClass: .contextSpecific, tagNumber: number, constructed: constructed)
    }

    /// The same tag with the constructed bit set.
    @inlinable
    public var asConstructed: ASN1Identifier {
        ASN1Identifier(tagClass: tagClass, tagNumber: tagNumber, constructed: true)
    }

    @inlinable
    static func universal(_ number: UInt32, constructed: Bool = false) -> ASN1Identifier {
        ASN1Identifier(tagClass: .universal, tagNumber: number, constructed: constructed)
    }

    /// The end-of-contents marker's identifier (universal 0).
    public static let endOfContents = universal(0)
    /// BOOLEAN (universal 1).
    public static let boolean = universal(1)
    /// INTEGER (universal 2).
    public static let integer = universal(2)
    /// BIT STRING (universal 3).
    public static let bitString = universal(3)
    /// OCTET STRING (universal 4, primitive).
    public static let octetString = universal(4)
    /// NULL (universal 5).
    public static let null = universal(5)
    /// OBJECT IDENTIFIER (universal 6).
    public static let objectIdentifier = universal(6)
    /// ENUMERATED (universal 10).
    public static let enumerated = universal(10)
    /// UTF8String (universal 12).
    public static let utf8String = universal(12)
    /// SEQUENCE (universal 16, constructed).
    public static let sequence = universal(16, constructed: true)
    /// SET (universal 17, constructed).
    public static let set = universal(17, constructed: true)
    /// PrintableString (universal 19).
    public static let printableString = universal(19)
    /// T61String (universal 20).
    public static let t61String = universal(20)
    /// IA5String (universal 22).
    public static let ia5String = universal(22)
    /// UTCTime (universal 23).
    public static let utcTime = universal(23)
    /// GeneralizedTime (universal 24).
    public static let generalizedTime = universal(24)
    /// VisibleString (universal 26).
    public static let visibleString = universal(26)
    /// BMPString (universal 30).
    public static let bmpString = universal(30)

    /// A readable name: `SEQUENCE`, `INTEGER`, `[0]`, `[APPLICATION 3]`, `UNIVERSAL 99`.
    public var description: String {
        switch tagClass {
        case .universal:
            let name: String? =
                switch tagNumber {
                case 0: "EOC"
                case 1: "BOOLEAN"
                case 2: "INTEGER"
                case 3: "BIT STRING"
                case 4: "OCTET STRING"
                case 5: "NULL"
                case 6: "OBJECT IDENTIFIER"
                case 10: "ENUMERATED"
                case 12: "UTF8String"
                case 16: "SEQUENCE"
                case 17: "SET"
                case 19: "PrintableString"
                case 20: "T61String"
                case 22: "IA5String"
                case 23: "UTCTime"
                case 24: "GeneralizedTime"
                case 26: "VisibleString"
                case 30: "BMPString"
                default: nil
                }
            let base = name ?? "UNIVERSAL \(tagNumber)"
            // Flag unusual construction, e.g. a constructed OCTET STRING in BER.
            let expectConstructed = tagNumber == 16 || tagNumber == 17
            if isConstructed != expectConstructed, name != nil {
                return base + (isConstructed ? " (constructed)" : " (primitive)")
            }
            return base
        case .contextSpecific:
            return "[\(tagNumber)]" + (isConstructed ? "" : " (primitive)")
        case .application:
            return "[APPLICATION \(tagNumber)]"
        case .private:
            return "[PRIVATE \(tagNumber)]"
        }
    }
}

/// Which encoding rules a reader enforces.
///
/// One decoding core serves both; the rules only change what is accepted:
/// - ``distinguished`` (DER): definite, minimal lengths only; primitive strings; minimal integers;
///   `00`/`FF` booleans.
/// - ``basic`` (BER): additionally the indefinite length form (with a mandatory end-of-contents
///   marker), non-minimal lengths, and constructed (segmented) strings, whose chunks are concatenated.
public enum ASN1EncodingRules: Sendable, Hashable {
    case distinguished
    case basic

    /// Shorthand for ``distinguished``.
    public static let der = ASN1EncodingRules.distinguished
    /// Shorthand for ``basic``.
    public static let ber = ASN1EncodingRules.basic
}

/// Bounds applied to untrusted input so that no encoding can cost unbounded memory or time.
public struct ASN1Limits: Sendable, Hashable {
    /// The deepest nesting of constructed elements a reader descends into. Default 50.
    public var maximumDepth: Int
    /// The largest input a reader accepts, in bytes. Default 64 MiB.
    public var maximumInputSize: Int

    /// Creates limits.
    public init(maximumDepth: Int = 50, maximumInputSize: Int = 64 << 20) {
        self.maximumDepth = maximumDepth
        self.maximumInputSize = maximumInputSize
    }

    /// Depth 50, 64 MiB.
    public static let `default` = ASN1Limits()
}
