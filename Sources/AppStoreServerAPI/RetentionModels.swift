public import Foundation
import JSON

// The Retention Messaging API's request bodies and answers, with Apple's field names and value
// ranges, written once: the client validates a body before it sends it, and the simulated App
// Store Server decodes and validates what it receives with the same code.

/// The approval state of an uploaded message (`messageState`) or image (`imageState`): Apple
/// documents the same values for both.
public struct RetentionApprovalState: DocumentedStringValue {
    /// The value as Apple writes it.
    public let rawValue: String
    /// A value from its raw string.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `PENDING`: awaiting review.
    public static let pending = Self(rawValue: "PENDING")
    /// `APPROVED`: may be shown.
    public static let approved = Self(rawValue: "APPROVED")
    /// `REJECTED`: may not be shown.
    public static let rejected = Self(rawValue: "REJECTED")
    /// Every value Apple documents.
    public static let known: [Self] = [.pending, .approved, .rejected]
}

/// A message's approval state (`messageState`).
public typealias RetentionMessageState = RetentionApprovalState

/// An image's approval state (`imageState`).
public typealias RetentionImageState = RetentionApprovalState

/// The size an image is uploaded for (`imageSize`).
public struct RetentionImageSize: DocumentedStringValue {
    /// The value as Apple writes it.
    public let rawValue: String
    /// A value from its raw string.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `FULL_SIZE`: a message's image (3840 pixels wide, 160–2160 high).
    public static let fullSize = Self(rawValue: "FULL_SIZE")
    /// `BULLET_POINT`: a bullet point's icon.
    public static let bulletPoint = Self(rawValue: "BULLET_POINT")
    /// Every value Apple documents.
    public static let known: [Self] = [.fullSize, .bulletPoint]
}

/// Where a message's header appears (`headerPosition`).
public struct RetentionHeaderPosition: DocumentedStringValue {
    /// The value as Apple writes it.
    public let rawValue: String
    /// A value from its raw string.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `ABOVE_BODY` (the default).
    public static let aboveBody = Self(rawValue: "ABOVE_BODY")
    /// `ABOVE_IMAGE`: only for a message with an image.
    public static let aboveImage = Self(rawValue: "ABOVE_IMAGE")
    /// Every value Apple documents.
    public static let known: [Self] = [.aboveBody, .aboveImage]
}

/// A message's image (Apple's `UploadMessageImage`).
public struct RetentionMessageImage: Sendable, Hashable {
    /// `imageIdentifier`: an uploaded image (``RetentionImageSize/fullSize``).
    public var imageIdentifier: UUID
    /// `altText`: at most 150 characters.
    public var altText: String

    /// Creates an image reference.
    public init(imageIdentifier: UUID, altText: String) {
        self.imageIdentifier = imageIdentifier
        self.altText = altText
    }
}

/// One bullet point of a message (Apple's `BulletPoint`).
public struct RetentionBulletPoint: Sendable, Hashable {
    /// `text`: at most 66 characters.
    public var text: String
    /// `imageIdentifier`: an uploaded image (``RetentionImageSize/bulletPoint``).
    public var imageIdentifier: UUID
    /// `altText`: at most 150 characters.
    public var altText: String

    /// Creates a bullet point.
    public init(text: String, imageIdentifier: UUID, altText: String) {
        self.text = text
        self.imageIdentifier = imageIdentifier
        self.altText = altText
    }
}

/// The body of Upload Message (Apple's `UploadMessageRequestBody`).
///
/// Rules (``validate()``, before sending and on receipt by the simulated server): `header` 1–66
/// characters, `body` 1–144, `altText` at most 150, at most 5 `bulletPoints` of at most 66
/// characters each, `headerPosition` `ABOVE_BODY` or `ABOVE_IMAGE`, and `ABOVE_IMAGE` only with an
/// `image`. Characters are Unicode scalars.
public struct UploadMessageRequest: Sendable, Hashable {
    /// The longest `header`.
    public static let maximumHeaderLength = 66
    /// The longest `body`.
    public static let maximumBodyLength = 144
    /// The longest `altText`.
    public static let maximumAltTextLength = 150
    /// The longest bullet point `text`.
    public static let maximumBulletPointTextLength = 66
    /// The most `bulletPoints`.
    public static let maximumBulletPoints = 5

    /// `header`.
    public var header: String
    /// `body`.
    public var body: String
    /// `image`, or nil.
    public var image: RetentionMessageImage?
    /// `bulletPoints`, or nil.
    public var bulletPoints: [RetentionBulletPoint]?
    /// `headerPosition`, or nil (Apple's default: above the body).
    public var headerPosition: RetentionHeaderPosition?

    /// Creates a body.
    public init(
        header: String, body: String, image: RetentionMessageImage? = nil, bulletPoints: [RetentionBulletPoint]? = nil,
        headerPosition: RetentionHeaderPosition? = nil
    ) {
        self.header = header
        self.body = body
        self.image = image
        self.bulletPoints = bulletPoints
        self.headerPosition = headerPosition
    }

    /// Decodes and validates a JSON body (required members present, no unknown member).
    public init(json bytes: [UInt8]) throws(RequestBodyError) {
        let reader = try BodyReader(bytes, known: ["header", "body", "image", "bulletPoints", "headerPosition"])
        let header = try BodyReader.required(try reader.string("header"), "header")
        let body = try BodyReader.required(try reader.string("body"), "body")
        var image: RetentionMessageImage?
        if let value = reader.value("image") {
            let object = try Self.object(value, "image", known: ["imageIdentifier", "altText"])
            image = RetentionMessageImage(
                imageIdentifier: try object.uuid("imageIdentifier", field: "image.imageIdentifier"),
                altText: try BodyReader.required(try object.string("altText"), "image.altText"))
        }
        var bullets: [RetentionBulletPoint]?
        if let value = reader.value("bulletPoints") {
            guard case .array(let elements) = value else { throw RequestBodyError(field: "bulletPoints", reason: "must be an array") }
            guard elements.count <= Self.maximumBulletPoints else {
                throw RequestBodyError(field: "bulletPoints", reason: "at most \(Self.maximumBulletPoints), not \(elements.count)")
            }
            bullets = []
            for (index, element) in elements.enumerated() {
                let place = "bulletPoints[\(index)]"
                let object = try Self.object(element, place, known: ["text", "imageIdentifier", "altText"])
                bullets?.append(
                    RetentionBulletPoint(
                        text: try BodyReader.required(try object.string("text"), place + ".text"),
                        imageIdentifier: try object.uuid("imageIdentifier", field: place + ".imageIdentifier"),
                        altText: try BodyReader.required(try object.string("altText"), place + ".altText")))
            }
        }
        let position = try reader.string("headerPosition").map(RetentionHeaderPosition.init(rawValue:))
        self.init(header: header, body: body, image: image, bulletPoints: bullets, headerPosition: position)
        try validate()
    }

    static func object(_ value: JSONValue, _ field: String, known: Set<String>) throws(RequestBodyError) -> BodyReader {
        guard case .object = value else { throw RequestBodyError(field: field, reason: "must be an object") }
        do throws(RequestBodyError) {
            return try BodyReader(value.jsonBytes(), known: known)
        } catch {
            throw RequestBodyError(field: "\(field).\(error.field)", reason: error.reason)
        }
    }

    static func checkLength(_ text: String, _ field: String, maximum: Int, allowEmpty: Bool = false) throws(RequestBodyError) {
        let count = text.unicodeScalars.count
        if !allowEmpty, count == 0 { throw RequestBodyError(field: field, reason: "must not be empty") }
        guard count <= maximum else { throw RequestBodyError(field: field, reason: "at most \(maximum) characters, not \(count)") }
    }

    /// Refuses a body Apple would refuse.
    public func validate() throws(RequestBodyError) {
        try Self.checkLength(header, "header", maximum: Self.maximumHeaderLength)
        try Self.checkLength(body, "body", maximum: Self.maximumBodyLength)
        if let image { try Self.checkLength(image.altText, "image.altText", maximum: Self.maximumAltTextLength) }
        if let bulletPoints {
            guard bulletPoints.count <= Self.maximumBulletPoints else {
                throw RequestBodyError(field: "bulletPoints", reason: "at most \(Self.maximumBulletPoints), not \(bulletPoints.count)")
            }
            for (index, point) in bulletPoints.enumerated() {
                try Self.checkLength(point.text, "bulletPoints[\(index)].text", maximum: Self.maximumBulletPointTextLength)
                try Self.checkLength(point.altText, "bulletPoints[\(index)].altText", maximum: Self.maximumAltTextLength)
            }
        }
        if let headerPosition {
            try headerPosition.requireKnown(field: "headerPosition")
            if headerPosition == .aboveImage, image == nil {
                throw RequestBodyError(field: "headerPosition", reason: "ABOVE_IMAGE needs an image")
            }
        }
    }

    /// The JSON body, members in Apple's order, absent optionals left out, UUIDs lower-cased.
    public var jsonBody: [UInt8] {
        var members: [(String, JSONValue)] = [("header", .string(header)), ("body", .string(body))]
        if let image {
            members.append(
                (
                    "image",
                    .object([
                        ("imageIdentifier", .string(image.imageIdentifier.uuidString.lowercased())), ("altText", .string(image.altText)),
                    ])
                ))
        }
        if let bulletPoints {
            members.append(
                (
                    "bulletPoints",
                    .array(
                        bulletPoints.map {
                            .object([
                                ("text", .string($0.text)), ("imageIdentifier", .string($0.imageIdentifier.uuidString.lowercased())),
                                ("altText", .string($0.altText)),
                            ])
                        })
                ))
        }
        if let headerPosition { members.append(("headerPosition", .string(headerPosition.rawValue))) }
        return JSONValue.object(members).jsonBytes()
    }
}

/// The body of Configure Default Message (Apple's `DefaultConfigurationRequest`), and the answer of
/// Get Default Message (`DefaultConfigurationResponse`, the same one member).
public struct DefaultConfigurationRequest: Sendable, Hashable {
    /// `messageIdentifier`: an uploaded, approved text message.
    public var messageIdentifier: UUID

    /// Creates a body.
    public init(messageIdentifier: UUID) { self.messageIdentifier = messageIdentifier }

    /// Decodes a JSON body; `messageIdentifier` must be a UUID.
    public init(json bytes: [UInt8]) throws(RequestBodyError) {
        self.init(messageIdentifier: try BodyReader(bytes, known: ["messageIdentifier"]).uuid("messageIdentifier"))
    }

    /// The JSON body.
    public var jsonBody: [UInt8] {
        JSONValue.object([("messageIdentifier", .string(messageIdentifier.uuidString.lowercased()))]).jsonBytes()
    }
}

/// A locale the default-message endpoints take in their path: a language code of 2 or 3 letters,
/// then `-` or `_` and subtags of 2 to 8 letters or digits (`en-US`, `zh-Hans-CN`, `pt_BR`).
public enum RetentionLocale {
    /// Whether `text` is such a locale.
    public static func isValid(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).flatMap {
            $0.split(separator: "_", omittingEmptySubsequences: false)
        }
        guard let language = parts.first, (2...3).contains(language.utf8.count),
            language.utf8.allSatisfy({ (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0 | 0x20) })
        else { return false }
        return parts.dropFirst().allSatisfy { part in
            (2...8).contains(part.utf8.count)
                && part.utf8.allSatisfy { byte in
                    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                }
        }
    }
}

/// What Upload Image checks of a PNG before sending it: the PNG signature, the `IHDR` chunk, no
/// transparency (colour types 4 and 6 carry alpha; a `tRNS` chunk before the image data adds it)
/// and, for ``RetentionImageSize/fullSize``, 3840 pixels wide and 160–2160 high.
public enum RetentionImageCheck {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// The width and height of a PNG, or the reason it is refused.
    public static func validate(_ png: [UInt8], size: RetentionImageSize?) throws(RequestBodyError) -> (width: Int, height: Int) {
        guard png.count >= 33, Array(png.prefix(8)) == signature else {
            throw RequestBodyError(field: "image", reason: "not a PNG (the PNG signature is missing)")
        }
        guard Array(png[12..<16]) == Array("IHDR".utf8) else {
            throw RequestBodyError(field: "image", reason: "the PNG does not start with IHDR")
        }
        func be32(_ at: Int) -> Int { png[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        let width = be32(16)
        let height = be32(20)
        let colourType = png[25]
        guard width > 0, height > 0 else { throw RequestBodyError(field: "image", reason: "the PNG has no pixels") }
        if colourType == 4 || colourType == 6 {
            throw RequestBodyError(field: "image", reason: "the PNG has an alpha channel (Apple refuses transparency)")
        }
        var offset = 8
        while offset + 8 <= png.count {
            let length = be32(offset)
            let type = String(decoding: png[(offset + 4)..<(offset + 8)], as: UTF8.self)
            if type == "tRNS" { throw RequestBodyError(field: "image", reason: "the PNG has a tRNS chunk (Apple refuses transparency)") }
            if type == "IDAT" || type == "IEND" { break }
            guard length >= 0, length <= png.count else { break }
            offset += 12 + length
        }
        if size == .fullSize {
            guard width == 3840, (160...2160).contains(height) else {
                throw RequestBodyError(
                    field: "image", reason: "a FULL_SIZE image is 3840 pixels wide and 160 to 2160 high, not \(width) × \(height)")
            }
        }
        try size?.requireKnown(field: "imageSize")
        return (width, height)
    }
}

/// One entry of Get Message List (Apple's `GetMessageListResponseItem`).
public struct RetentionMessageListItem: Sendable, Hashable {
    /// `messageIdentifier`.
    public let messageIdentifier: String
    /// `messageState`.
    public let messageState: RetentionMessageState?

    /// Creates an entry.
    public init(messageIdentifier: String, messageState: RetentionMessageState?) {
        self.messageIdentifier = messageIdentifier
        self.messageState = messageState
    }
}

/// One entry of Get Image List (Apple's `GetImageListResponseItem`).
public struct RetentionImageListItem: Sendable, Hashable {
    /// `imageIdentifier`.
    public let imageIdentifier: String
    /// `imageState`.
    public let imageState: RetentionImageState?
    /// `imageSize` (Retention Messaging 1.4 and later).
    public let imageSize: RetentionImageSize?

    /// Creates an entry.
    public init(imageIdentifier: String, imageState: RetentionImageState?, imageSize: RetentionImageSize?) {
        self.imageIdentifier = imageIdentifier
        self.imageState = imageState
        self.imageSize = imageSize
    }
}

/// Apple's Retention Messaging answers read from their JSON text (as Apple's documentation and
/// libraries show them): a body that is not the object the endpoint defines is
/// ``AppStoreServerAPIError/Code/invalidResponse``; members this version does not know are ignored.
public enum RetentionResponses {
    /// `GetMessageListResponse`: `{"messageIdentifiers": [{"messageIdentifier", "messageState"}]}`.
    public static func messageList(json: [UInt8]) throws(AppStoreServerAPIError) -> [RetentionMessageListItem] {
        let object = try ResponseObject.parsed(json, endpoint: .retentionMessageList)
        return try messageList(object)
    }

    /// `GetImageListResponse`: `{"imageIdentifiers": [{"imageIdentifier", "imageState", "imageSize"}]}`.
    public static func imageList(json: [UInt8]) throws(AppStoreServerAPIError) -> [RetentionImageListItem] {
        let object = try ResponseObject.parsed(json, endpoint: .retentionImageList)
        return try imageList(object)
    }

    /// `DefaultConfigurationResponse`: `{"messageIdentifier": "…"}`.
    public static func defaultMessage(json: [UInt8]) throws(AppStoreServerAPIError) -> String {
        let object = try ResponseObject.parsed(json, endpoint: .defaultRetentionMessage)
        return try object.string("messageIdentifier", required: true) ?? ""
    }

    static func messageList(_ object: ResponseObject) throws(AppStoreServerAPIError) -> [RetentionMessageListItem] {
        var items: [RetentionMessageListItem] = []
        for item in try object.objects("messageIdentifiers") {
            items.append(
                RetentionMessageListItem(
                    messageIdentifier: try item.string("messageIdentifier", required: true) ?? "",
                    messageState: try item.string("messageState").map(RetentionMessageState.init(rawValue:))))
        }
        return items
    }

    static func imageList(_ object: ResponseObject) throws(AppStoreServerAPIError) -> [RetentionImageListItem] {
        var items: [RetentionImageListItem] = []
        for item in try object.objects("imageIdentifiers") {
            items.append(
                RetentionImageListItem(
                    imageIdentifier: try item.string("imageIdentifier", required: true) ?? "",
                    imageState: try item.string("imageState").map(RetentionImageState.init(rawValue:)),
                    imageSize: try item.string("imageSize").map(RetentionImageSize.init(rawValue:))))
        }
        return items
    }
}
