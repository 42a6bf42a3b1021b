public import Foundation
public import Receipts

/// What an app receipt must say, beyond being validly signed. Every property left `nil` is not
/// checked and is listed in ``Verdict/unchecked``.
public struct ReceiptExpectations: Sendable, Hashable {
    /// The app's bundle identifier (field 2), compared exactly.
    public var bundleIdentifier: String?
    /// The app version (field 3), compared exactly.
    public var appVersion: String?
    /// The device the receipt must be bound to: SHA-1(identifier ‖ opaque value ‖ bundle id) must
    /// equal field 5. A 16-byte vendor UUID (iOS) or a 6-byte MAC address (macOS).
    public var deviceIdentifier: DeviceIdentifier?
    /// The environments the receipt type (field 0) may name.
    public var allowedEnvironments: Set<ReceiptEnvironment>?
    /// The exact receipt type strings (field 0) allowed, for example `["Production", "ProductionVPP"]`.
    public var allowedReceiptTypes: Set<String>?
    /// When true (the default), a receipt with an expiration date (field 21) must not have expired
    /// at the validation time: the same instant the certificate chain is checked at.
    public var requireNotExpired: Bool

    /// Creates expectations; every argument defaults to "not checked" except ``requireNotExpired``.
    public init(
        bundleIdentifier: String? = nil, appVersion: String? = nil, deviceIdentifier: DeviceIdentifier? = nil,
        allowedEnvironments: Set<ReceiptEnvironment>? = nil, allowedReceiptTypes: Set<String>? = nil,
        requireNotExpired: Bool = true
    ) {
        self.bundleIdentifier = bundleIdentifier
        self.appVersion = appVersion
        self.deviceIdentifier = deviceIdentifier
        self.allowedEnvironments = allowedEnvironments
        self.allowedReceiptTypes = allowedReceiptTypes
        self.requireNotExpired = requireNotExpired
    }

    /// Checks nothing about the receipt's content (only its expiration date, if it has one).
    public static let none = ReceiptExpectations()
}

extension AppReceiptFormat {
    /// Bundle id, version, device hash, environment, receipt type and expiration.
    public func check(_ expectations: ReceiptExpectations, of receipt: AppReceipt, at time: Date?, in run: inout VerificationRun)
        -> [VerificationCheck.Name]
    {
        if expectations.bundleIdentifier == nil, expectations.appVersion == nil, expectations.deviceIdentifier == nil,
            expectations.allowedEnvironments == nil, expectations.allowedReceiptTypes == nil, expectations.requireNotExpired
        {
            // Only the expiration date is checked (the common case): the other names, listed once.
            checkExpiration(of: receipt, at: time, in: &run)
            return Self.uncheckedButExpiration
        }
        var unchecked: [VerificationCheck.Name] = []
        unchecked.reserveCapacity(6)
        if let expected = expectations.bundleIdentifier {
            let actual = receipt.bundleIdentifier
            run.record(
                .bundleIdentifier, actual == expected,
                actual == expected
                    ? expected : "the receipt is for \(VerificationText.quoted(actual)), expected \(VerificationText.quoted(expected))")
        } else {
            unchecked.append(.bundleIdentifier)
        }
        if let expected = expectations.appVersion {
            let actual = receipt.appVersion
            run.record(
                .appVersion, actual == expected,
                actual == expected
                    ? expected
                    : "the receipt is for version \(VerificationText.quoted(actual)), expected \(VerificationText.quoted(expected))")
        } else {
            unchecked.append(.appVersion)
        }
        if let device = expectations.deviceIdentifier {
            if receipt.opaqueValue == nil || receipt.sha1Hash == nil || receipt.bundleIdentifierData == nil {
                run.record(.deviceHash, false, "the receipt lacks the opaque value (4), the hash (5) or the bundle identifier (2)")
            } else {
                let matches = receipt.hashMatches(device: device)
                run.record(
                    .deviceHash, matches,
                    matches ? "bound to \(device)" : "the receipt's hash (field 5) does not match the device \(device)")
            }
        } else {
            unchecked.append(.deviceHash)
        }
        if let allowed = expectations.allowedEnvironments {
            let environment = receipt.environment
            let type = receipt.receiptType
            let ok = allowed.contains(environment)
            run.record(
                .environment, ok,
                ok
                    ? environment.rawValue
                    : "the receipt type \(VerificationText.quoted(type)) is environment \(environment.rawValue), allowed: \(allowed.map(\.rawValue).sorted().joined(separator: ", "))"
            )
        } else {
            unchecked.append(.environment)
        }
        if let allowed = expectations.allowedReceiptTypes {
            let type = receipt.receiptType
            let ok = type.map { allowed.contains($0) } ?? false
            run.record(
                .receiptType, ok,
                ok
                    ? type ?? ""
                    : "the receipt type \(VerificationText.quoted(type)) is not one of \(allowed.sorted().joined(separator: ", "))")
        } else {
            unchecked.append(.receiptType)
        }
        if expectations.requireNotExpired {
            checkExpiration(of: receipt, at: time, in: &run)
        } else {
            unchecked.append(.expirationDate)
        }
        return unchecked
    }

    /// What ``check(_:of:at:in:)`` leaves unchecked when only the expiration date is checked.
    private static let uncheckedButExpiration: [VerificationCheck.Name] = [
        .bundleIdentifier, .appVersion, .deviceHash, .environment, .receiptType,
    ]

    /// The receipt has not expired (field 21) at the validation time.
    private func checkExpiration(of receipt: AppReceipt, at time: Date?, in run: inout VerificationRun) {
        if let expiration = receipt.expirationDate {
            if let time {
                if time < expiration {
                    run.record(.expirationDate, true, template: .dated("expires", expiration))
                } else {
                    run.record(
                        .expirationDate, false,
                        "the receipt expired at \(VerificationText.rfc3339(expiration)), before the validation time \(VerificationText.rfc3339(time))"
                    )
                }
            } else {
                run.record(.expirationDate, false, "no validation time to compare the expiration date (21) with")
            }
        } else {
            run.record(.expirationDate, true, "no expiration date (21)")
        }
    }
}
