#if DEBUG
    /// Debug builds only: counts the element headers the decoder reads, per task, so tests can check
    /// that the work for an input grows linearly with its size (not wall time). Compiled out of
    /// release builds.
    public enum ASN1Instrumentation {
        /// A counter a test binds with `ASN1Instrumentation.$counter.withValue(counter) { … }`.
        public final class Counter: @unchecked Sendable {
            /// Element headers decoded (by the general decoder and the in-app record decoder).
            public var headers = 0
            /// A counter at zero.
            public init() {}
        }

        /// The counter of the current task, if a test bound one.
        @TaskLocal public static var counter: Counter?

        /// Adds `n` decoded headers to the bound counter, if any.
        @inlinable
        public static func count(_ n: Int = 1) {
            if let counter { counter.headers &+= n }
        }
    }
#endif
