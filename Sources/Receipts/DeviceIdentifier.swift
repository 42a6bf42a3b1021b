import Internals

/// The device identifier a receipt's SHA-1 hash (attribute 5) is bound to: the 16 raw bytes of the
/// vendor UUID on iOS, or the 6-byte MAC address on macOS.
public struct DeviceIdentifier: Sendable, Hashable, CustomStringConvertible {
    /// The raw identifier bytes that go into the hash.
    public let bytes: [UInt8]

    /// Wraps raw identifier bytes.
    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// Parses a UUID (`3B76A7BD-8F5B-46A4-BCB1-CCE8DBD1B3CD`) or a MAC address (`f8:ff:c2:1e:91:82`,
    /// `f8-ff-c2-1e-91-82` or `f8ffc21e9182`); `nil` for anything else.
    public init?(_ text: String) {
        let hex = text.filter { $0 != "-" && $0 != ":" }
        guard hex.count == 32 || hex.count == 12, hex.allSatisfy(\.isHexDigit) else { return nil }
        let separators = text.filter { $0 == "-" || $0 == ":" }.count
        if hex.count == 32 {
            guard separators == 0 || (separators == 4 && text.count == 36) else { return nil }
        } else {
            guard separators == 0 || separators == 5 else { return nil }
        }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        self.bytes = bytes
    }

    /// Hex with separators: a UUID for 16 bytes, a colon-separated MAC for 6, plain hex otherwise.
    public var description: String {
        let hex = bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: bytes.count == 16) }
        switch bytes.count {
        case 16: return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }.joined(separator: "-")
        case 6: return hex.joined(separator: ":")
        default: return hex.joined()
        }
    }
}

extension AppReceipt {
    /// The SHA-1 the receipt should carry for `device`: SHA-1(identifier ‖ opaque value ‖ bundle
    /// identifier data); `nil` if the receipt lacks the opaque value or bundle identifier.
    public func expectedHash(for device: DeviceIdentifier) -> [UInt8]? {
        guard let opaqueValue, let bundleIdentifierData else { return nil }
        return SHA1.hash(device.bytes, opaqueValue, bundleIdentifierData)
    }

    /// Whether the receipt's SHA-1 hash (attribute 5) binds it to `device`. `false` when any input
    /// is missing. The SHA-1 is computed by a hand-written implementation in this module.
    public func hashMatches(device: DeviceIdentifier) -> Bool {
        guard let expected = expectedHash(for: device), let sha1Hash else { return false }
        return expected == sha1Hash
    }
}
