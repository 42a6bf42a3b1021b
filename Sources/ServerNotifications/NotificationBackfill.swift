public import Foundation
import Internals
import JSON
import ReceiptVerification

/// One page of Get Notification History as a ``NotificationHistorySource`` hands it over: the
/// `signedPayload`s exactly as the server sent them, not yet verified.
public struct NotificationHistorySourcePage: Sendable {
    /// The entries' `signedPayload`s, unverified, in the server's order.
    public var signedPayloads: [String]
    /// `paginationToken`.
    public var paginationToken: String?
    /// `hasMore`.
    public var hasMore: Bool

    /// Creates a page.
    public init(signedPayloads: [String], paginationToken: String?, hasMore: Bool) {
        self.signedPayloads = signedPayloads
        self.paginationToken = paginationToken
        self.hasMore = hasMore
    }
}

/// Where a backfill reads Get Notification History: the App Store Server API client through
/// ReceiptServer's `AppStoreNotificationHistory`, or anything that speaks it.
public protocol NotificationHistorySource: Sendable {
    /// One page of the notifications signed in [`start`, `end`): the first when `paginationToken`
    /// is nil.
    /// - Throws: ``NotificationStoreError`` with ``NotificationStoreError/Code/historyUnavailable``
    ///   when the page could not be read.
    func page(start: Date, end: Date, paginationToken: String?) async throws(NotificationStoreError) -> NotificationHistorySourcePage
}

/// A notification a backfill found missing from the store and stored.
public struct NotificationBackfillEntry: Sendable, Hashable {
    /// `notificationUUID`.
    public var notificationUUID: String
    /// `notificationType`.
    public var notificationType: String?
    /// `subtype`.
    public var subtype: String?
    /// `signedDate`, in milliseconds since 1970.
    public var signedDate: Int64?
}

/// A history entry that did not verify under the receiver's configuration: kept as a dead letter
/// (when the receiver keeps them), never skipped silently.
public struct NotificationBackfillRejection: Sendable {
    /// Why.
    public var rejection: NotificationRejection
    /// The dead letter that keeps it (nil when the receiver keeps none).
    public var deadLetterId: Int64?
    /// The entry's `notificationUUID` as the token says it, UNVERIFIED (escape it to show it).
    public var unverifiedNotificationUUID: String?
}

/// What a backfill did, reported as it goes (``NotificationBackfill/run(_:onEvent:)``).
public enum NotificationBackfillEvent: Sendable {
    /// A missing notification was stored.
    case restored(NotificationBackfillEntry)
    /// An entry failed verification and was kept as a dead letter.
    case rejected(NotificationBackfillRejection)
    /// A page's rows are durable and the progress saved: its number (over every run of the
    /// range) and the token of the next page.
    case page(number: Int, nextToken: String?)
}

/// What one run of a backfill did.
public struct NotificationBackfillReport: Sendable {
    /// The range read.
    public var range: NotificationBackfillRange
    /// Whether the run resumed an interrupted one from its saved token.
    public var resumed: Bool
    /// Pages read by this run.
    public var pages: Int
    /// The notifications that were missing and are now stored, in history order.
    public var restored: [NotificationBackfillEntry] = []
    /// Verified entries the store already had (matched by `notificationUUID`).
    public var alreadyPresent = 0
    /// Entries that failed verification.
    public var rejected: [NotificationBackfillRejection] = []
}

/// Backfill from Get Notification History: reads every page of a range, verifies each entry
/// exactly as ``receiver`` verifies a delivered notification (its verifier, expectations and
/// validation time), stores those the store lacks (deduplicated by `notificationUUID`, as every
/// delivery is), keeps those that fail as dead letters with their reason, and saves the page
/// token after each page's rows are durable, so that a run that was interrupted resumes at the
/// page after the last one stored.
///
/// A hostile or broken server ends the run with an error, nothing of the offending page stored:
/// an entry whose verified `signedDate` is outside the range, `hasMore` without a token, a token
/// that repeats one this run has seen or is longer than ``maximumTokenLength``
/// (``NotificationStoreError/Code/historyMismatch``), more pages
/// than ``Limits/maximumPages`` or a run longer than ``Limits/maximumDuration``
/// (``NotificationStoreError/Code/limitReached``, checked before each page; each request has the
/// source's own timeout).
public struct NotificationBackfill: Sendable {
    /// How far one run may go.
    public struct Limits: Sendable, Hashable {
        /// The most pages one run reads (Apple pages 20 notifications: 1,000 pages is 20,000).
        public var maximumPages: Int
        /// The longest one run may take.
        public var maximumDuration: Duration

        /// Creates limits (at least one page; a duration below zero is zero).
        public init(maximumPages: Int = 1_000, maximumDuration: Duration = .seconds(600)) {
            self.maximumPages = max(1, maximumPages)
            self.maximumDuration = max(.zero, maximumDuration)
        }
    }

    /// The longest page token kept (Apple's are far shorter): a longer one stops the run, so that
    /// a server cannot make the store keep megabytes as a token.
    public static let maximumTokenLength = 4_096

    /// The `sourceAddress` of the dead letters a backfill keeps.
    public static let deadLetterSource = "notification-history"

    /// Verifies and stores as a delivery would; its dead letters keep what fails.
    public let receiver: NotificationReceiver
    /// Where the history comes from.
    public let source: any NotificationHistorySource
    /// Where progress is saved (the receiver's store, normally).
    public let progress: any NotificationBackfillProgressStore
    /// The run's bounds.
    public let limits: Limits

    /// Creates a backfill.
    public init(
        receiver: NotificationReceiver, source: any NotificationHistorySource, progress: any NotificationBackfillProgressStore,
        limits: Limits = Limits()
    ) {
        self.receiver = receiver
        self.source = source
        self.progress = progress
        self.limits = limits
    }

    /// Runs the backfill of `range`: resumes from the saved token when an earlier run of the same
    /// range stopped before its last page (when the server refuses that token, as Apple does once
    /// it expired, from the first page), otherwise reads from the first page (a range already
    /// completed is read again; what it finds is already stored).
    /// - Parameters:
    ///   - range: the signed dates to read, start included, end excluded.
    ///   - onEvent: called as each notification is restored or rejected and as each page is done
    ///     (on the calling task).
    /// - Throws: ``NotificationStoreError``: the receiver has no dead-letter store
    ///   (``NotificationStoreError/Code/invalidConfiguration``), the source failed, its answer did
    ///   not match the request, a limit was reached, or the store failed. Pages done before stay done.
    public func run(
        _ range: NotificationBackfillRange, onEvent: (@Sendable (NotificationBackfillEvent) -> Void)? = nil
    ) async throws(NotificationStoreError) -> NotificationBackfillReport {
        guard range.start < range.end else {
            throw NotificationStoreError(.invalidConfiguration, "the backfill range ends (\(range.end)) before it starts (\(range.start))")
        }
        // An entry that fails verification is kept as a dead letter before the page's token is
        // saved; without a dead-letter store it would be passed over and never read again.
        guard receiver.deadLetters != nil else {
            throw NotificationStoreError(
                .invalidConfiguration, "a backfill needs a receiver with dead letters: entries that fail would be passed over")
        }
        let saved = try progress.backfillProgress(scope: range.scope, start: range.start).first { $0.range == range }
        var token: String?
        var pagesBefore = 0
        var report = NotificationBackfillReport(range: range, resumed: false, pages: 0)
        if let saved, !saved.isComplete, let next = saved.paginationToken {
            token = next
            pagesBefore = saved.pages
            report.resumed = true
        }
        var seen: Set<String> = token.map { [$0] } ?? []
        let started = ContinuousClock.now
        let start = Date(timeIntervalSince1970: Double(range.start) / 1000)
        let end = Date(timeIntervalSince1970: Double(range.end) / 1000)
        while true {
            guard report.pages < limits.maximumPages else {
                throw NotificationStoreError(
                    .limitReached, "more than \(limits.maximumPages) pages in one run (the limit); run again to resume from the last page")
            }
            guard ContinuousClock.now - started < limits.maximumDuration else {
                throw NotificationStoreError(
                    .limitReached, "the run took longer than its limit of \(limits.maximumDuration); run again to resume from the last page"
                )
            }
            let page: NotificationHistorySourcePage
            do throws(NotificationStoreError) {
                page = try await source.page(start: start, end: end, paginationToken: token)
            } catch {
                // A saved token the server no longer takes (Apple's expire): the range is read
                // again from its first page; what was stored is found already there.
                guard report.resumed, report.pages == 0, token != nil, error.code == .historyUnavailable else { throw error }
                token = nil
                pagesBefore = 0
                report.resumed = false
                seen = []
                continue
            }
            report.pages += 1
            let number = pagesBefore + report.pages
            if page.hasMore {
                guard let next = page.paginationToken, !next.isEmpty else {
                    throw NotificationStoreError(.historyMismatch, "page \(number): hasMore is true but there is no paginationToken")
                }
                guard next.utf8.count <= Self.maximumTokenLength else {
                    throw NotificationStoreError(
                        .historyMismatch, "page \(number): the paginationToken is longer than \(Self.maximumTokenLength) bytes")
                }
                guard seen.insert(next).inserted else {
                    throw NotificationStoreError(.historyMismatch, "page \(number): the paginationToken repeats an earlier page's")
                }
            }
            try storePage(page, number: number, range: range, report: &report, onEvent: onEvent)
            let next = page.hasMore ? page.paginationToken : nil
            try progress.saveBackfillProgress(
                NotificationBackfillProgress(
                    range: range, paginationToken: next, pages: number, isComplete: !page.hasMore,
                    updatedDate: StoredNotification.milliseconds(receiver.clock())))
            onEvent?(.page(number: number, nextToken: next))
            guard page.hasMore else { return report }
            token = next
        }
    }

    /// Verifies every entry of a page first (an entry outside the range refuses the whole page),
    /// then stores the verified rows and keeps the rejected entries as dead letters.
    func storePage(
        _ page: NotificationHistorySourcePage, number: Int, range: NotificationBackfillRange, report: inout NotificationBackfillReport,
        onEvent: (@Sendable (NotificationBackfillEvent) -> Void)?
    ) throws(NotificationStoreError) {
        let receivedDate = receiver.clock()
        var verified: [Result<StoredNotification, NotificationRejection>] = []
        for (index, token) in page.signedPayloads.enumerated() {
            let outcome = receiver.verifiedRow(token, receivedDate: receivedDate)
            if case .success(let row) = outcome {
                guard let signed = row.signedDate, signed >= range.start, signed < range.end else {
                    throw NotificationStoreError(
                        .historyMismatch,
                        "page \(number), entry \(index): notification \(TerminalEscaping.quoted(row.notificationUUID)) was signed at \(row.signedDate.map(String.init) ?? "no date"), outside the requested range [\(range.start), \(range.end))"
                    )
                }
            }
            verified.append(outcome)
        }
        for (index, outcome) in verified.enumerated() {
            let token = index < page.signedPayloads.count ? page.signedPayloads[index] : ""
            switch outcome {
            case .success(let row):
                do throws(NotificationStoreError) {
                    switch try receiver.store.store(row) {
                    case .stored:
                        let entry = NotificationBackfillEntry(
                            notificationUUID: row.notificationUUID, notificationType: row.notificationType, subtype: row.subtype,
                            signedDate: row.signedDate)
                        report.restored.append(entry)
                        onEvent?(.restored(entry))
                    case .duplicate:
                        report.alreadyPresent += 1
                    }
                } catch {
                    guard error.code == .unsupportedValue else { throw error }
                    let rejection = NotificationRejection(check: .body, reason: error.reason, notificationUUID: row.notificationUUID)
                    try reject(rejection, token: token, receivedDate: receivedDate, report: &report, onEvent: onEvent)
                }
            case .failure(let rejection):
                try reject(rejection, token: token, receivedDate: receivedDate, report: &report, onEvent: onEvent)
            }
        }
    }

    /// Keeps a rejected entry as a dead letter whose body is the notification body Apple would
    /// have POSTed (`{"signedPayload": …}`), so that `dead-letters retry` can verify it again.
    func reject(
        _ rejection: NotificationRejection, token: String, receivedDate: Date, report: inout NotificationBackfillReport,
        onEvent: (@Sendable (NotificationBackfillEvent) -> Void)?
    ) throws(NotificationStoreError) {
        let body = JSONValue.object([("signedPayload", .string(token))]).jsonBytes()
        var kept = NotificationBackfillRejection(
            rejection: rejection, deadLetterId: nil, unverifiedNotificationUUID: UnverifiedNotificationFields(body: body).notificationUUID)
        if let deadLetters = receiver.deadLetters {
            switch receiver.keep(rejection, body: body, source: Self.deadLetterSource, receivedDate: receivedDate, in: deadLetters) {
            case .rejected(let withId): kept.deadLetterId = withId.deadLetterId
            case .unavailable(let error): throw error
            case .accepted, .duplicate: break
            }
        }
        report.rejected.append(kept)
        onEvent?(.rejected(kept))
    }
}
