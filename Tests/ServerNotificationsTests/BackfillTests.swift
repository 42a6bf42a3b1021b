import Foundation
import Internals
import JSON
import JWS
import ReceiptSigning
import ReceiptVerification
import ServerNotifications
import StoreTesting
import TestSupport
import Testing

/// Get Notification History served from memory: each page by its token, each request counted; a
/// token listed in `refused` fails as Apple's expired tokens do.
struct ScriptedHistory: NotificationHistorySource {
    let pages: [String?: NotificationHistorySourcePage]
    let refused: Set<String>
    let requests = Locked<[String?]>([])

    init(pages: [String?: NotificationHistorySourcePage], refused: Set<String> = []) {
        self.pages = pages
        self.refused = refused
    }

    func page(start: Date, end: Date, paginationToken: String?) async throws(NotificationStoreError) -> NotificationHistorySourcePage {
        requests.withLock { $0.append(paginationToken) }
        if let paginationToken, refused.contains(paginationToken) {
            throw NotificationStoreError(.historyUnavailable, "errorCode 4000017 (paginationTokenExpired)")
        }
        guard let page = pages[paginationToken] else { throw NotificationStoreError(.historyUnavailable, "no such page") }
        return page
    }
}

/// `NotificationBackfill` in the library, against a history served from memory and a SQLite store.
@Suite struct BackfillTests {
    static let now = Date()
    static let range = NotificationBackfillRange(
        scope: "\(IDs.bundle)/Production", start: StoredNotification.milliseconds(now) - 3_600_000,
        end: StoredNotification.milliseconds(now) + 3_600_000)

    /// A genuine TEST notification's token of `bundle`.
    static func token(_ uuid: String, bundle: String = IDs.bundle) throws -> String {
        let body = try DeadLetterTests.body(bundle: bundle, uuid: uuid)
        return try #require(try JSONValue.parse(body)["signedPayload"]?.stringValue)
    }

    static func open(_ path: String) throws -> SQLiteNotificationStore { try SQLiteNotificationStore(path: path) }

    /// An entry of another app and one whose signature was altered are kept as dead letters with
    /// their reason (and the store's retry can read their bodies); the genuine ones are stored;
    /// the progress is complete; a second run finds every genuine entry already stored.
    @Test func failingEntries_areDeadLettered_theRestStored() async throws {
        let store = try Self.open(temporaryDatabase())
        defer { store.close() }
        let receiver = try DeadLetterTests.receiver(bundle: IDs.bundle, store: store, deadLetters: store)
        var forged = Array(try Self.token("uuid-d").utf8)
        forged[forged.count - 5] = forged[forged.count - 5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let history = ScriptedHistory(pages: [
            nil: NotificationHistorySourcePage(
                signedPayloads: [try Self.token("uuid-a"), try Self.token("uuid-c", bundle: "com.other.app")], paginationToken: "p2",
                hasMore: true),
            "p2": NotificationHistorySourcePage(
                signedPayloads: [try Self.token("uuid-b"), String(decoding: forged, as: UTF8.self)], paginationToken: nil, hasMore: false),
        ])
        let backfill = NotificationBackfill(receiver: receiver, source: history, progress: store)
        let report = try await backfill.run(Self.range)
        #expect(report.restored.map(\.notificationUUID) == ["uuid-a", "uuid-b"])
        #expect(report.restored.allSatisfy { $0.notificationType == "TEST" })
        #expect(report.rejected.map(\.rejection.check) == [.bundleIdentifier, .signature])
        #expect(report.rejected.map(\.unverifiedNotificationUUID) == ["uuid-c", "uuid-d"])
        #expect(report.rejected.allSatisfy { $0.deadLetterId != nil })
        let letters = try store.deadLetters(DeadLetterQuery())
        #expect(letters.map(\.sourceAddress) == [NotificationBackfill.deadLetterSource, NotificationBackfill.deadLetterSource])
        #expect(letters.map(\.unverified.notificationUUID) == ["uuid-c", "uuid-d"])
        let saved = try store.backfillProgress(scope: Self.range.scope, start: Self.range.start)
        #expect(saved.count == 1 && saved.first?.isComplete == true && saved.first?.pages == 2 && saved.first?.paginationToken == nil)
        #expect(Set(try store.notifications(.all).map(\.notificationUUID)) == ["uuid-a", "uuid-b"])

        let again = try await backfill.run(Self.range)
        #expect(again.restored.isEmpty && again.alreadyPresent == 2 && !again.resumed)
    }

    /// A run whose time limit is already spent reads no page; the error names the limit.
    @Test func spentTimeLimit_readsNothing() async throws {
        let store = try Self.open(temporaryDatabase())
        defer { store.close() }
        let history = ScriptedHistory(pages: [nil: NotificationHistorySourcePage(signedPayloads: [], paginationToken: nil, hasMore: false)])
        let backfill = NotificationBackfill(
            receiver: try DeadLetterTests.receiver(bundle: IDs.bundle, store: store, deadLetters: store), source: history, progress: store,
            limits: NotificationBackfill.Limits(maximumDuration: .zero))
        await #expect(throws: NotificationStoreError.self) { try await backfill.run(Self.range) }
        do throws(NotificationStoreError) {
            _ = try await backfill.run(Self.range)
        } catch {
            #expect(error.code == .limitReached && error.reason.contains("limit"))
        }
        #expect(history.requests.withLock { $0 }.isEmpty)
    }

    /// A receiver without dead letters is refused before any page is read: an entry that fails
    /// would be passed over once its page's token is saved.
    @Test func withoutDeadLetters_isRefused() async throws {
        let store = try Self.open(temporaryDatabase())
        defer { store.close() }
        let history = ScriptedHistory(pages: [nil: NotificationHistorySourcePage(signedPayloads: [], paginationToken: nil, hasMore: false)])
        let backfill = NotificationBackfill(receiver: try receiver(store: store), source: history, progress: store)
        do throws(NotificationStoreError) {
            _ = try await backfill.run(Self.range)
            Issue.record("a backfill without dead letters ran")
        } catch {
            #expect(error.code == .invalidConfiguration && error.reason.contains("dead letters"))
        }
        #expect(history.requests.withLock { $0 }.isEmpty)
    }

    /// A saved token the server refuses: the run reads the range from its first page; a failing
    /// entry is reported and kept as a dead letter.
    @Test func refusedSavedToken_readsTheRangeAgain() async throws {
        let store = try Self.open(temporaryDatabase())
        defer { store.close() }
        try store.saveBackfillProgress(
            NotificationBackfillProgress(range: Self.range, paginationToken: "stale", pages: 3, isComplete: false, updatedDate: 0))
        let history = ScriptedHistory(
            pages: [
                nil: NotificationHistorySourcePage(
                    signedPayloads: [try Self.token("uuid-a"), try Self.token("uuid-x", bundle: "com.other.app")], paginationToken: nil,
                    hasMore: false)
            ], refused: ["stale"])
        let backfill = NotificationBackfill(
            receiver: try DeadLetterTests.receiver(bundle: IDs.bundle, store: store, deadLetters: store), source: history, progress: store)
        let report = try await backfill.run(Self.range)
        #expect(history.requests.withLock { $0 } == ["stale", nil])
        #expect(!report.resumed && report.pages == 1 && report.restored.map(\.notificationUUID) == ["uuid-a"])
        #expect(report.rejected.count == 1 && report.rejected.first?.deadLetterId != nil)
        let saved = try store.backfillProgress(scope: Self.range.scope, start: Self.range.start)
        #expect(saved.first?.pages == 1 && saved.first?.isComplete == true)
    }
}
