public import AppStoreServerAPI
import Foundation
import HTTPServer
import Internals
import JSON
import JWS

// The Retention Messaging API of the simulated App Store Server: the app's messages, images and
// default messages, kept in the server's state. Bodies are decoded and validated by the
// client's own types (UploadMessageRequest, DefaultConfigurationRequest, RetentionImageCheck), so
// the simulator refuses exactly what the client refuses before sending; the rest (duplicates,
// unknown identifiers, approval, images in use) is Apple's behaviour with Apple's error codes.

/// One uploaded message.
struct RetentionMessageRecord: Sendable {
    let identifier: String
    let body: UploadMessageRequest
    var state: RetentionMessageState
}

/// One uploaded image.
struct RetentionImageRecord: Sendable {
    let identifier: String
    let size: RetentionImageSize?
    let byteCount: Int
    var state: RetentionImageState
}

/// The app's Retention Messaging content, in upload order.
struct RetentionState: Sendable {
    var messages: [RetentionMessageRecord] = []
    var images: [RetentionImageRecord] = []
    /// `productId` and `locale` → message identifier.
    var defaults: [String: String] = [:]
}

extension SimulatedAppStoreServer {
    /// The most messages an app may upload in the simulation (Apple answers
    /// `MaximumNumberOfMessagesReachedError` beyond its own limit).
    public static let maximumRetentionMessages = 2000

    /// The identifiers and states of the uploaded messages, in upload order.
    public var retentionMessages: [(identifier: String, state: RetentionMessageState, body: UploadMessageRequest)] {
        handler.state.withLock { $0.retention.messages.map { ($0.identifier, $0.state, $0.body) } }
    }

    /// The identifiers, sizes and byte counts of the uploaded images, in upload order.
    public var retentionImages: [(identifier: String, size: RetentionImageSize?, byteCount: Int)] {
        handler.state.withLock { $0.retention.images.map { ($0.identifier, $0.size, $0.byteCount) } }
    }

    /// The default message configured for `productID` in `locale`.
    public func defaultRetentionMessage(productID: String, locale: String) -> String? {
        handler.state.withLock { $0.retention.defaults[productID + "\u{0}" + locale] }
    }

    /// Sets the review state of a message (content uploaded in Production starts `PENDING`; in
    /// Sandbox Apple approves it at once).
    public func review(message identifier: String, as state: RetentionMessageState) {
        handler.state.withLock { shared in
            if let index = shared.retention.messages.firstIndex(where: { $0.identifier == identifier }) {
                shared.retention.messages[index].state = state
            }
        }
    }

    /// Sets the review state of an image.
    public func review(image identifier: String, as state: RetentionImageState) {
        handler.state.withLock { shared in
            if let index = shared.retention.images.firstIndex(where: { $0.identifier == identifier }) {
                shared.retention.images[index].state = state
            }
        }
    }
}

extension SimulatedServerHandler {
    /// The identifier in a path: a UUID (either case), kept lower-cased.
    static func retentionIdentifier(_ text: String?, _ kind: String) throws(RouteError) -> String {
        guard let text, let uuid = UUIDText.parse(text) else { throw RouteError.badRequest(4_000_000, "Invalid \(kind) identifier.") }
        return uuid.uuidString.lowercased()
    }

    /// Apple's code for a Retention Messaging body the shared types refused.
    static func retentionBodyError(_ error: RequestBodyError) -> RouteError {
        let code: Int64 =
            if error.field == "header" {
                4_000_101
            } else if error.field == "body" {
                4_000_102
            } else if error.field.hasSuffix("altText") {
                4_000_103
            } else {
                4_000_000
            }
        return RouteError.badRequest(code, "Invalid request. \(error)")
    }

    func retention(_ route: Route, _ request: HTTPRequest) throws -> HTTPResponse {
        let approvedAtOnce = issuer.environment == .sandbox || issuer.environment == .xcode
        switch route.endpoint {
        case .uploadRetentionImage:
            let id = try Self.retentionIdentifier(route.parameter, "image")
            guard let query = Self.queryItems(request.query) else { throw RouteError.badRequest(4_000_000, "Invalid query.") }
            let size = query.first { $0.0 == "imageSize" }.map { RetentionImageSize(rawValue: $0.1) }
            guard request.header("Content-Type") == "image/png" else {
                throw RouteError.badRequest(4_000_000, "The body must be image/png.")
            }
            do throws(RequestBodyError) {
                _ = try RetentionImageCheck.validate(request.body, size: size)
            } catch {
                throw RouteError.badRequest(4_000_000, "Invalid image. \(error)")
            }
            try state.withLock { (state) throws(RouteError) in
                guard !state.retention.images.contains(where: { $0.identifier == id }) else {
                    throw RouteError(status: 409, errorCode: 4_090_000, message: "The image identifier already exists.")
                }
                state.retention.images.append(
                    RetentionImageRecord(
                        identifier: id, size: size, byteCount: request.body.count, state: approvedAtOnce ? .approved : .pending))
            }
            return HTTPResponse(status: 200)
        case .retentionImageList:
            let images = state.withLock { $0.retention.images }
            let items: [JSONValue] = images.map { image in
                var members: [(String, JSONValue)] = [
                    ("imageIdentifier", .string(image.identifier)), ("imageState", .string(image.state.rawValue)),
                ]
                if let size = image.size { members.append(("imageSize", .string(size.rawValue))) }
                return .object(members)
            }
            return Self.ok([("imageIdentifiers", .array(items))])
        case .deleteRetentionImage:
            let id = try Self.retentionIdentifier(route.parameter, "image")
            try state.withLock { (state) throws(RouteError) in
                guard let index = state.retention.images.firstIndex(where: { $0.identifier == id }) else {
                    throw RouteError.notFound(4_040_014, "The image identifier wasn't found.")
                }
                let inUse = state.retention.messages.contains { record in
                    record.body.image.map { $0.imageIdentifier.uuidString.lowercased() == id } == true
                        || (record.body.bulletPoints ?? []).contains { $0.imageIdentifier.uuidString.lowercased() == id }
                }
                guard !inUse else { throw RouteError(status: 403, errorCode: 4_030_019, message: "The image is in use by a message.") }
                state.retention.images.remove(at: index)
            }
            return HTTPResponse(status: 200)
        case .uploadRetentionMessage:
            let id = try Self.retentionIdentifier(route.parameter, "message")
            let body: UploadMessageRequest
            do throws(RequestBodyError) {
                body = try UploadMessageRequest(json: request.body)
            } catch {
                throw Self.retentionBodyError(error)
            }
            try state.withLock { (state) throws(RouteError) in
                guard !state.retention.messages.contains(where: { $0.identifier == id }) else {
                    throw RouteError(status: 409, errorCode: 4_090_001, message: "The message identifier already exists.")
                }
                guard state.retention.messages.count < SimulatedAppStoreServer.maximumRetentionMessages else {
                    throw RouteError(status: 403, errorCode: 4_030_016, message: "The maximum number of messages is reached.")
                }
                state.retention.messages.append(
                    RetentionMessageRecord(identifier: id, body: body, state: approvedAtOnce ? .approved : .pending))
            }
            return HTTPResponse(status: 200)
        case .retentionMessageList:
            let messages = state.withLock { $0.retention.messages }
            let items: [JSONValue] = messages.map {
                .object([("messageIdentifier", .string($0.identifier)), ("messageState", .string($0.state.rawValue))])
            }
            return Self.ok([("messageIdentifiers", .array(items))])
        case .deleteRetentionMessage:
            let id = try Self.retentionIdentifier(route.parameter, "message")
            try state.withLock { (state) throws(RouteError) in
                guard let index = state.retention.messages.firstIndex(where: { $0.identifier == id }) else {
                    throw RouteError.notFound(4_040_015, "The message identifier wasn't found.")
                }
                state.retention.messages.remove(at: index)
                state.retention.defaults = state.retention.defaults.filter { $0.value != id }
            }
            return HTTPResponse(status: 200)
        case .configureDefaultRetentionMessage, .defaultRetentionMessage, .deleteDefaultRetentionMessage:
            return try defaultMessage(route, request)
        default:
            throw RouteError.internalError
        }
    }

    func defaultMessage(_ route: Route, _ request: HTTPRequest) throws -> HTTPResponse {
        guard route.arguments.count == 2 else { throw RouteError.badRequest(4_000_000, "Invalid path.") }
        let (product, locale) = (route.arguments[0], route.arguments[1])
        guard RetentionLocale.isValid(locale) else { throw RouteError.badRequest(4_000_000, "Invalid locale.") }
        let key = product + "\u{0}" + locale
        switch route.endpoint {
        case .configureDefaultRetentionMessage:
            let body: DefaultConfigurationRequest
            do throws(RequestBodyError) {
                body = try DefaultConfigurationRequest(json: request.body)
            } catch {
                throw RouteError.badRequest(4_000_000, "Invalid request. \(error)")
            }
            let id = body.messageIdentifier.uuidString.lowercased()
            try state.withLock { (state) throws(RouteError) in
                guard let message = state.retention.messages.first(where: { $0.identifier == id }) else {
                    throw RouteError.notFound(4_040_015, "The message identifier wasn't found.")
                }
                guard message.state == .approved else {
                    throw RouteError(status: 403, errorCode: 4_030_017, message: "The message isn't approved.")
                }
                if let image = message.body.image?.imageIdentifier.uuidString.lowercased(),
                    state.retention.images.first(where: { $0.identifier == image })?.state != .approved
                {
                    throw RouteError(status: 403, errorCode: 4_030_018, message: "The message's image isn't approved.")
                }
                state.retention.defaults[key] = id
            }
            return HTTPResponse(status: 200)
        case .defaultRetentionMessage:
            guard let id = state.withLock({ $0.retention.defaults[key] }) else {
                throw RouteError.notFound(4_040_020, "No default message is configured.")
            }
            return Self.ok([("messageIdentifier", .string(id))])
        default:
            try state.withLock { (state) throws(RouteError) in
                guard state.retention.defaults.removeValue(forKey: key) != nil else {
                    throw RouteError.notFound(4_040_020, "No default message is configured.")
                }
            }
            return HTTPResponse(status: 200)
        }
    }
}
