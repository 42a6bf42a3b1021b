import AppStoreServerAPI
import Foundation
import JSON

/// `receipt-tool api retention …`: the Retention Messaging API. Every local value (UUIDs,
/// locales, the message body, the PNG) is checked before the client is made.
enum RetentionRequests {
    /// Each retention request and its operands.
    static let arity: [String: Int] = [
        "messages": 0, "message-upload": 1, "message-delete": 1, "images": 0, "image-upload": 1, "image-delete": 1, "default": 2,
        "default-set": 3, "default-delete": 2,
    ]

    /// What a retention request needs, checked before anything is sent.
    struct Plan {
        let request: String
        let operands: [String]
        var uuid: UUID?
        var message: UploadMessageRequest?
        var png: [UInt8]?
        var imageSize: RetentionImageSize?
    }

    static func uuid(_ text: String) throws(UsageError) -> UUID {
        guard let value = UUIDText.parse(text) else {
            throw UsageError("\(ManagementRequests.quoted(text)) is not a UUID (8-4-4-4-12 hexadecimal digits)")
        }
        return value
    }

    /// Checks the operands and files of `retention <request> …`.
    static func plan(_ operands: [String], args: Arguments) throws -> Plan {
        guard let request = operands.first else {
            throw UsageError("retention needs a request: \(arity.keys.sorted().joined(separator: ", "))")
        }
        guard let count = arity[request] else { throw UsageError("unknown retention request \(ManagementRequests.quoted(request))") }
        let rest = Array(operands.dropFirst())
        guard rest.count == count else { throw UsageError("retention \(request) takes \(count) argument\(count == 1 ? "" : "s")") }
        let bodyPath = args.value("--body")
        let imagePath = args.value("--image")
        if bodyPath != nil, request != "message-upload" {
            throw UsageError("--body is for consumption, extend-all and retention message-upload")
        }
        if imagePath != nil || args.value("--image-size") != nil, request != "image-upload" {
            throw UsageError("--image and --image-size are for retention image-upload")
        }
        var plan = Plan(request: request, operands: rest)
        switch request {
        case "message-upload":
            plan.uuid = try uuid(rest[0])
            guard let bodyPath else { throw UsageError("retention message-upload needs --body <file.json>") }
            let bytes = try readInput(bodyPath, limit: 64 << 10)
            do throws(RequestBodyError) {
                plan.message = try UploadMessageRequest(json: bytes)
            } catch {
                throw UsageError("--body: \(error)")
            }
        case "message-delete", "image-delete": plan.uuid = try uuid(rest[0])
        case "image-upload":
            plan.uuid = try uuid(rest[0])
            guard let imagePath else { throw UsageError("retention image-upload needs --image <file.png>") }
            if let text = args.value("--image-size") {
                let size = RetentionImageSize(rawValue: text)
                guard size.isKnown else {
                    throw UsageError("--image-size must be FULL_SIZE or BULLET_POINT, found \(ManagementRequests.quoted(text))")
                }
                plan.imageSize = size
            }
            let png = try readInput(imagePath, limit: 32 << 20)
            do throws(RequestBodyError) {
                _ = try RetentionImageCheck.validate(png, size: plan.imageSize)
            } catch {
                throw UsageError("--image: \(error)")
            }
            plan.png = png
        case "default", "default-set", "default-delete":
            try APICommand.checkIdentifier(rest[0])
            guard RetentionLocale.isValid(rest[1]) else {
                throw UsageError("\(ManagementRequests.quoted(rest[1])) is not a locale (such as en-US)")
            }
            if request == "default-set" { plan.uuid = try uuid(rest[2]) }
        default: break
        }
        return plan
    }

    static func object(_ members: [(String, JSONValue)]) -> String { JSONValue.object(members).jsonText(indent: 0) }

    /// Sends the planned request and returns the lines to print.
    static func run(_ plan: Plan, client: AppStoreServerAPIClient, json: Bool) throws -> [String] {
        let id = plan.uuid ?? UUID()
        let idText = id.uuidString.lowercased()
        let operands = plan.operands
        switch plan.request {
        case "messages":
            let items = try APICommand.blocking { try await client.retentionMessages() }
            return items.map { item in
                json
                    ? object([
                        ("messageIdentifier", .string(item.messageIdentifier)),
                        ("messageState", item.messageState.map { .string($0.rawValue) } ?? .null),
                    ])
                    : "Message \(ManagementRequests.quoted(item.messageIdentifier)) \(item.messageState?.rawValue ?? "?")"
            }
        case "images":
            let items = try APICommand.blocking { try await client.retentionImages() }
            return items.map { item in
                json
                    ? object([
                        ("imageIdentifier", .string(item.imageIdentifier)),
                        ("imageState", item.imageState.map { .string($0.rawValue) } ?? .null),
                        ("imageSize", item.imageSize.map { .string($0.rawValue) } ?? .null),
                    ])
                    : "Image \(ManagementRequests.quoted(item.imageIdentifier)) \(item.imageState?.rawValue ?? "?")\(item.imageSize.map { " \($0.rawValue)" } ?? "")"
            }
        case "message-upload":
            guard let message = plan.message else { throw UsageError("retention message-upload needs --body <file.json>") }
            try APICommand.blocking { try await client.uploadRetentionMessage(messageIdentifier: id, message) }
            return [json ? object([("messageIdentifier", .string(idText)), ("uploaded", .bool(true))]) : "Message \(idText) uploaded"]
        case "message-delete":
            try APICommand.blocking { try await client.deleteRetentionMessage(messageIdentifier: id) }
            return [json ? object([("messageIdentifier", .string(idText)), ("deleted", .bool(true))]) : "Message \(idText) deleted"]
        case "image-upload":
            guard let png = plan.png else { throw UsageError("retention image-upload needs --image <file.png>") }
            let size = plan.imageSize
            try APICommand.blocking { try await client.uploadRetentionImage(imageIdentifier: id, png: png, size: size) }
            return [
                json
                    ? object([("imageIdentifier", .string(idText)), ("bytes", .number(String(png.count))), ("uploaded", .bool(true))])
                    : "Image \(idText) uploaded (\(png.count) bytes)"
            ]
        case "image-delete":
            try APICommand.blocking { try await client.deleteRetentionImage(imageIdentifier: id) }
            return [json ? object([("imageIdentifier", .string(idText)), ("deleted", .bool(true))]) : "Image \(idText) deleted"]
        case "default":
            let (product, locale) = (operands[0], operands[1])
            let message = try APICommand.blocking { try await client.defaultRetentionMessage(productID: product, locale: locale) }
            return [
                json
                    ? object([("productId", .string(product)), ("locale", .string(locale)), ("messageIdentifier", .string(message))])
                    : "Default message for \(product) in \(locale): \(ManagementRequests.quoted(message))"
            ]
        case "default-set":
            let (product, locale) = (operands[0], operands[1])
            try APICommand.blocking {
                try await client.configureDefaultRetentionMessage(productID: product, locale: locale, messageIdentifier: id)
            }
            return [
                json
                    ? object([("productId", .string(product)), ("locale", .string(locale)), ("messageIdentifier", .string(idText))])
                    : "Default message for \(product) in \(locale) set to \(idText)"
            ]
        case "default-delete":
            let (product, locale) = (operands[0], operands[1])
            try APICommand.blocking { try await client.deleteDefaultRetentionMessage(productID: product, locale: locale) }
            return [
                json
                    ? object([("productId", .string(product)), ("locale", .string(locale)), ("deleted", .bool(true))])
                    : "Default message for \(product) in \(locale) deleted"
            ]
        default:
            throw UsageError("unknown retention request \(ManagementRequests.quoted(plan.request))")
        }
    }
}
