#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value behind a `pthread_mutex_t`, shared by the package's thread-safe types (the chain cache,
/// the HTTP server, the verifyReceipt client, the CLI's batch).
///
/// Used instead of `Synchronization.Mutex` because ThreadSanitizer understands pthread mutexes
/// but not `Mutex`'s futex path on Linux, where it reports every `Mutex`-protected access as a
/// race; with this lock a TSan run of the suite reports only real races.
package final class Locked<Value: ~Copyable>: @unchecked Sendable {
    // @unchecked: `value` is only touched between lock and unlock of `mutex`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    package init(_ value: consuming Value) {
        self.value = value
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<Result: ~Copyable, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
