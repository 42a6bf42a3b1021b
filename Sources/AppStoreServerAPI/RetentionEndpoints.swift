public import Foundation
import JSON

extension AppStoreServerAPIClient {
    /// A body refused locally (nothing is sent).
    func refuse(_ endpoint: AppStoreServerEndpoint, _ check: () throws(RequestBodyError) -> Void) throws(AppStoreServerAPIError) {
        do throws(RequestBodyError) {
            try check()
        } catch {
            throw Self.invalidBody(error, endpoint)
        }
    }

    /// The path segments of a default message: `productId` as any identifier, `locale` as
    /// ``RetentionLocale`` allows.
    func defaultMessageArguments(
        _ endpoint: AppStoreServerEndpoint, productID: String, locale: String
    ) throws(AppStoreServerAPIError) -> [String] {
        try refuse(endpoint) { () throws(RequestBodyError) in
            guard RetentionLocale.isValid(locale) else {
                throw RequestBodyError(field: "locale", reason: "\(RequestBodyText.quoted(locale)) is not a locale such as en-US")
            }
        }
        return [productID, locale]
    }

    /// Upload Image (Retention Messaging): the PNG `png` under `imageIdentifier`, sent as
    /// `image/png` with `imageSize` in the query when given. The PNG is checked first
    /// (``RetentionImageCheck``): not a PNG, transparency, or a full-size image of the wrong size
    /// is refused without a request. Apple answers 409 when the identifier exists.
    public func uploadRetentionImage(
        imageIdentifier: UUID, png: [UInt8], size: RetentionImageSize? = nil
    ) async throws(AppStoreServerAPIError) {
        try refuse(.uploadRetentionImage) { () throws(RequestBodyError) in _ = try RetentionImageCheck.validate(png, size: size) }
        let query = size.map { [("imageSize", $0.rawValue)] } ?? []
        let call = try Call(self, .uploadRetentionImage, arguments: [imageIdentifier.uuidString.lowercased()], query: query, body: png)
        _ = try await call.send()
    }

    /// Get Image List (Retention Messaging): every uploaded image and its state.
    public func retentionImages() async throws(AppStoreServerAPIError) -> [RetentionImageListItem] {
        let call = try Call(self, .retentionImageList, arguments: [])
        return try RetentionResponses.imageList(try call.object(try await call.send()))
    }

    /// Delete Image (Retention Messaging).
    public func deleteRetentionImage(imageIdentifier: UUID) async throws(AppStoreServerAPIError) {
        let call = try Call(self, .deleteRetentionImage, arguments: [imageIdentifier.uuidString.lowercased()])
        _ = try await call.send()
    }

    /// Upload Message (Retention Messaging): `message` under `messageIdentifier`. The body is
    /// validated first (``UploadMessageRequest/validate()``).
    public func uploadRetentionMessage(messageIdentifier: UUID, _ message: UploadMessageRequest) async throws(AppStoreServerAPIError) {
        try refuse(.uploadRetentionMessage) { () throws(RequestBodyError) in try message.validate() }
        let call = try Call(
            self, .uploadRetentionMessage, arguments: [messageIdentifier.uuidString.lowercased()], body: message.jsonBody)
        _ = try await call.send()
    }

    /// Get Message List (Retention Messaging): every uploaded message and its state.
    public func retentionMessages() async throws(AppStoreServerAPIError) -> [RetentionMessageListItem] {
        let call = try Call(self, .retentionMessageList, arguments: [])
        return try RetentionResponses.messageList(try call.object(try await call.send()))
    }

    /// Delete Message (Retention Messaging).
    public func deleteRetentionMessage(messageIdentifier: UUID) async throws(AppStoreServerAPIError) {
        let call = try Call(self, .deleteRetentionMessage, arguments: [messageIdentifier.uuidString.lowercased()])
        _ = try await call.send()
    }

    /// Configure Default Message (Retention Messaging): `messageIdentifier` becomes the default
    /// message of `productID` in `locale` (Apple answers 403 unless the message is approved).
    public func configureDefaultRetentionMessage(
        productID: String, locale: String, messageIdentifier: UUID
    ) async throws(AppStoreServerAPIError) {
        let arguments = try defaultMessageArguments(.configureDefaultRetentionMessage, productID: productID, locale: locale)
        let body = DefaultConfigurationRequest(messageIdentifier: messageIdentifier).jsonBody
        let call = try Call(self, .configureDefaultRetentionMessage, arguments: arguments, body: body)
        _ = try await call.send()
    }

    /// Get Default Message (Retention Messaging): the message identifier configured for
    /// `productID` in `locale` (Apple answers 404 when none is).
    public func defaultRetentionMessage(productID: String, locale: String) async throws(AppStoreServerAPIError) -> String {
        let arguments = try defaultMessageArguments(.defaultRetentionMessage, productID: productID, locale: locale)
        let call = try Call(self, .defaultRetentionMessage, arguments: arguments)
        return try call.object(try await call.send()).string("messageIdentifier", required: true) ?? ""
    }

    /// Delete Default Message (Retention Messaging).
    public func deleteDefaultRetentionMessage(productID: String, locale: String) async throws(AppStoreServerAPIError) {
        let arguments = try defaultMessageArguments(.deleteDefaultRetentionMessage, productID: productID, locale: locale)
        let call = try Call(self, .deleteDefaultRetentionMessage, arguments: arguments)
        _ = try await call.send()
    }
}
