import Foundation
import ReceiptVerification

extension NotificationReceiver {
    /// Keeps a rejected body in `deadLetters`; the rejection then carries the letter's id. When
    /// the letter cannot be committed the body is not acknowledged either way: the outcome becomes
    /// ``NotificationReceiverOutcome/unavailable(_:)`` (answered 503), so that the sender retries.
    func keep(
        _ rejection: NotificationRejection, body: [UInt8], source: String?, receivedDate: Date, in deadLetters: any DeadLetterStore
    ) -> NotificationReceiverOutcome {
        let letter = DeadLetter(
            receivedDate: StoredNotification.milliseconds(receivedDate), sourceAddress: source, check: rejection.check.rawValue,
            reason: rejection.reason, body: body)
        do throws(NotificationStoreError) {
            var kept = rejection
            kept.deadLetterId = try deadLetters.keep(letter, retention: retention)
            return .rejected(kept)
        } catch {
            return .unavailable(error)
        }
    }

    /// Verifies a dead letter's body again under this receiver's configuration and stores it when
    /// it now passes, then marks the letter retried, so that a notification is stored once however
    /// often letters are retried (a letter already marked is skipped; a notification stored
    /// meanwhile by Apple's own retry is a ``DeadLetterRetryOutcome/duplicate(_:)``). The row keeps
    /// the letter's received date.
    public func retry(_ letter: DeadLetter) -> DeadLetterRetryOutcome {
        guard !letter.isRetried else { return .alreadyRetried }
        guard !letter.isTruncated else {
            return .stillRejected(
                NotificationRejection(
                    check: .body,
                    reason: "only \(letter.body.count) of the body's \(letter.bodyLength) bytes were kept; it cannot be verified"))
        }
        guard let deadLetters else {
            return .unavailable(NotificationStoreError(.unavailable, "the receiver keeps no dead letters"))
        }
        let date = Date(timeIntervalSince1970: Double(letter.receivedDate) / 1000)
        let row: StoredNotification
        let stored: Bool
        switch verifyAndStore(body: letter.body, receivedDate: date) {
        case .accepted(let accepted): (row, stored) = (accepted, true)
        case .duplicate(let duplicate): (row, stored) = (duplicate, false)
        case .rejected(let rejection): return .stillRejected(rejection)
        case .unavailable(let error): return .unavailable(error)
        }
        do throws(NotificationStoreError) {
            guard
                try deadLetters.markRetried(
                    id: letter.id, notificationUUID: row.notificationUUID, at: StoredNotification.milliseconds(clock()))
            else { return .alreadyRetried }
        } catch {
            return .unavailable(error)
        }
        return stored ? .stored(row) : .duplicate(row)
    }
}

/// What ``NotificationReceiver/retry(_:)`` did with a dead letter.
public enum DeadLetterRetryOutcome: Sendable {
    /// It verifies now and was stored; the letter is marked retried.
    case stored(StoredNotification)
    /// It verifies now, but its `notificationUUID` was already stored (Apple's retry got through);
    /// the letter is marked retried.
    case duplicate(StoredNotification)
    /// It still does not verify (the letter stays as it was).
    case stillRejected(NotificationRejection)
    /// A retry had already stored it: nothing done.
    case alreadyRetried
    /// The store could not commit (the letter stays as it was).
    case unavailable(NotificationStoreError)

    /// `stored`, `duplicate`, `rejected`, `alreadyRetried` or `unavailable`.
    public var name: String {
        switch self {
        case .stored: "stored"
        case .duplicate: "duplicate"
        case .stillRejected: "rejected"
        case .alreadyRetried: "alreadyRetried"
        case .unavailable: "unavailable"
        }
    }
}
