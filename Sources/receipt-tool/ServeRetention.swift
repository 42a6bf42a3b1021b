import Foundation
import Internals
import JWS
import ReceiptServer
import ReceiptVerification
import VerifyReceipt

extension ServeCommand {
    /// The Retention Messaging real-time endpoint `--retention-path` asks for (nil without it).
    static func retentionEndpoint(
        _ args: Arguments, settings: VerificationSettings, environment: VerifyReceiptEnvironment
    ) throws -> RetentionEndpoint? {
        guard let path = args.value("--retention-path") else {
            if args.value("--retention-config") != nil { throw UsageError("--retention-config configures --retention-path: give it too") }
            return nil
        }
        guard isRoutePath(path), path != "/health", path != "/verifyReceipt",
            path != (args.value("--notifications-path") ?? "/notifications")
        else {
            throw UsageError(
                "--retention-path must be an absolute path without query or fragment, other than /health, /verifyReceipt and the notifications path, found \(Redaction.redacted(path))"
            )
        }
        guard let file = args.value("--retention-config") else {
            throw UsageError("--retention-path needs --retention-config FILE.json ({\"default\": MESSAGE_ID, \"products\": {…}})")
        }
        // Apple asks every receiver to compare a real-time request's appAppleId with the app's.
        guard let text = args.value("--app-apple-id") else {
            throw UsageError("--retention-path needs --app-apple-id (a real-time request names no bundle id; its appAppleId is checked)")
        }
        guard let appAppleId = Int64(text), appAppleId > 0 else {
            throw UsageError("--app-apple-id must be a positive integer, found \(text)")
        }
        let bytes = try readInput(file, limit: 1 << 20)
        let messages: RetentionMessages
        do throws(ReceiptServerError) {
            messages = try RetentionMessages(json: bytes)
        } catch {
            throw UsageError("--retention-config \(terminalQuoted(file)): \(error.reason)")
        }
        return RetentionEndpoint(
            path: path, verifier: settings.jwsVerifier(),
            expectations: JWSExpectations(appAppleId: appAppleId, environments: [environment == .production ? .production : .sandbox]),
            validationTime: settings.validationTime, messages: messages)
    }
}
