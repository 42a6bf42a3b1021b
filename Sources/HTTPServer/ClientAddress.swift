import Dispatch
import Foundation
import Glibc
import Internals

/// A client as ``HTTPServerConfiguration/maximumConnectionsPerClient`` counts it: an IPv4
/// address, or the /64 prefix of an IPv6 address (one host or subscriber usually holds a whole
/// /64). IPv4-mapped IPv6 addresses count as the IPv4 address.
package struct ClientAddress: Hashable, Sendable, CustomStringConvertible {
    /// 4 or 6.
    let family: UInt8
    /// IPv4: the address; IPv6: the first 64 bits.
    let bits: UInt64

    init(family: UInt8, bits: UInt64) {
        self.family = family
        self.bits = bits
    }

    /// The client of an accepted connection; `nil` for a family other than IPv4 and IPv6.
    init?(_ storage: sockaddr_storage) {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            let address = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt32(bigEndian: $0.pointee.sin_addr.s_addr) }
            }
            self.init(family: 4, bits: UInt64(address))
        case AF_INET6:
            let bytes = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                }
            }
            self.init(ipv6: bytes)
        default:
            return nil
        }
    }

    /// The whole address of an accepted connection as text (`127.0.0.1`, `2001:db8::1`); nil for
    /// another family.
    static func text(of storage: sockaddr_storage) -> String? {
        var storage = storage
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let written: UnsafePointer<CChar>? = withUnsafePointer(to: &storage) { pointer in
            switch Int32(pointer.pointee.ss_family) {
            case AF_INET:
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    withUnsafePointer(to: address.pointee.sin_addr) { inet_ntop(AF_INET, $0, &buffer, socklen_t(buffer.count)) }
                }
            case AF_INET6:
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    withUnsafePointer(to: address.pointee.sin6_addr) { inet_ntop(AF_INET6, $0, &buffer, socklen_t(buffer.count)) }
                }
            default:
                return nil
            }
        }
        guard written != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// An IPv4 or IPv6 literal (`127.0.0.1`, `::1`, `::ffff:10.0.0.1`).
    package init?(literal: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            self.init(family: 4, bits: UInt64(UInt32(bigEndian: v4.s_addr)))
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, literal, &v6) == 1 else { return nil }
        self.init(ipv6: withUnsafeBytes(of: v6) { Array($0) })
    }

    init(ipv6 bytes: [UInt8]) {
        let mapped = bytes.count == 16 && bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
        if mapped {
            self.init(family: 4, bits: bytes[12..<16].reduce(0) { $0 << 8 | UInt64($1) })
        } else {
            self.init(family: 6, bits: bytes.prefix(8).reduce(0) { $0 << 8 | UInt64($1) })
        }
    }

    /// `127.0.0.2`, or `2001:db8:0:1::/64`.
    package var description: String {
        if family == 4 { return (0..<4).map { String(bits >> (24 - 8 * $0) & 0xFF) }.joined(separator: ".") }
        return (0..<4).map { String(bits >> (48 - 16 * $0) & 0xFFFF, radix: 16) }.joined(separator: ":") + "::/64"
    }
}
