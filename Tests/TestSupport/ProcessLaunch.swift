package import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension Process {
    /// `run()`, tried again (up to five times) when it fails with EBADF. swift-corelibs-foundation
    /// lists the parent's open descriptors and asks `posix_spawn` to close each in the child; a
    /// descriptor another thread closes in between (the tests open and close sockets on many
    /// threads) makes the spawn fail with "Bad file descriptor" before the child exists, so
    /// nothing has run and trying again is safe (swiftlang/swift#57827).
    package func runRetryingBadDescriptor() throws {
        var attempt = 0
        while true {
            do {
                try run()
                return
            } catch let error as NSError where error.domain == NSPOSIXErrorDomain && error.code == Int(EBADF) && attempt < 4 {
                attempt += 1
                usleep(UInt32(10_000 * attempt))
            }
        }
    }
}
