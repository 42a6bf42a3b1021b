#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Byte equality through `memcmp` (the generic `==` on slices compares element by element).
package func bytesEqual(_ lhs: ArraySlice<UInt8>, _ rhs: ArraySlice<UInt8>) -> Bool {
    guard lhs.count == rhs.count else { return false }
    return lhs.withUnsafeBytes { left in
        rhs.withUnsafeBytes { right in
            guard let l = left.baseAddress, let r = right.baseAddress else { return true }
            return memcmp(l, r, left.count) == 0
        }
    }
}
