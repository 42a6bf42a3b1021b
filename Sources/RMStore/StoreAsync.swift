// The async API of the store, bridged onto its callbacks.

import Foundation

/// Holds a continuation until its first result; later results are dropped. Main-actor isolated,
/// so a callback and a cancellation cannot race.
@MainActor
final class ContinuationSlot<Value: Sendable> {
    var continuation: CheckedContinuation<Value, any Error>?

    func install(_ continuation: CheckedContinuation<Value, any Error>) {
        self.continuation = continuation
    }

    func resume(_ result: Result<Value, any Error>) {
        guard let continuation else { return }
        self.continuation = nil
        continuation.resume(with: result)
    }
}

extension Store {
    /// Runs a callback-based operation as an async one. With `abandonOnCancel`, task cancellation
    /// resumes the caller with `CancellationError` at once (the operation goes on; its later
    /// result is dropped for this caller). Without it, the caller waits for the real result.
    func bridge<Value: Sendable>(
        abandonOnCancel: Bool,
        _ start: (ContinuationSlot<Value>) -> Void
    ) async throws -> Value {
        let slot = ContinuationSlot<Value>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                slot.install(continuation)
                if abandonOnCancel && Task.isCancelled {
                    slot.resume(.failure(CancellationError()))
                    return
                }
                start(slot)
            }
        } onCancel: {
            guard abandonOnCancel else { return }
            Task { @MainActor in
                slot.resume(.failure(CancellationError()))
            }
        }
    }
}
