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

/// Dead letters in both stores: a body refused because of our configuration is kept and answered
/// 5xx; once the configuration names its app, a retry stores it exactly once; a forgery stays
/// dead; the retention limit holds; purge deletes.
@Suite struct DeadLetterTests {
    @Test func sqlite() throws {
        let store = try SQLiteNotificationStore(path: temporaryDatabase())
        defer { store.close() }
        try Self.story(store: store, deadLetters: store)
    }

    @Test(.enabled(if: PostgresCluster.isAvailable, "\(PostgresCluster.unavailableReason ?? "")"), .timeLimit(.minutes(2)))
    func postgres() throws {
        let cluster = try PostgresCluster.start(label: "deadletters")
        defer { cluster.stop() }
        let store = try PostgresNotificationStore(url: try cluster.createDatabase("letters"))
        defer { store.close() }
        try Self.story(store: store, deadLetters: store)
    }

    /// A store opened read-only refuses every write of its dead letters and customer history with
    /// `readOnly`, naming the file, and writes nothing.
    @Test func sqliteOpenedReadOnly_refusesWrites() throws {
        let path = temporaryDatabase()
        try SQLiteNotificationStore(path: path).close()
        let store = try SQLiteNotificationStore(path: path, options: .reading)
        defer { store.close() }
        let letter = DeadLetter(receivedDate: 0, sourceAddress: nil, check: "body", reason: "refused", body: [])
        let writes: [(String, () throws -> Void)] = [
            ("keep", { _ = try store.keep(letter, retention: .standard) }),
            ("markRetried", { _ = try store.markRetried(id: 1, notificationUUID: "u", at: 0) }),
            ("purgeDeadLetters", { _ = try store.purgeDeadLetters(before: nil) }),
            ("storeCustomerHistory", { _ = try store.storeCustomerHistory([]) }),
        ]
        for (name, write) in writes {
            let error = #expect(throws: NotificationStoreError.self, "\(name)") { try write() }
            #expect(error?.code == .readOnly, "\(name)")
            #expect(error?.reason == "\(path) was opened read-only", "\(name): \(error?.reason ?? "")")
        }
        #expect(try store.deadLetters(DeadLetterQuery()).isEmpty)
    }

    /// A receiver for `bundle` keeping dead letters in `deadLetters`.
    static func receiver(
        bundle: String, store: any NotificationStore, deadLetters: any DeadLetterStore, retention: DeadLetterRetention = .standard
    ) throws -> NotificationReceiver {
        NotificationReceiver(
            verifier: NotificationVerifier(anchors: [try PKIs.jws.get().root], cache: nil),
            expectations: JWSExpectations(bundleIdentifier: bundle, appAppleId: IDs.appAppleId, environments: [.production]),
            store: store, deadLetters: deadLetters, retention: retention)
    }

    /// A genuine TEST notification body of `bundle`.
    static func body(bundle: String, uuid: String) throws -> [UInt8] {
        let sender = AppStoreNotificationSender(
            url: URL(fileURLWithPath: "/"), signer: try PKIs.jws.get().jwsSigner(), bundleIdentifier: bundle, appAppleId: IDs.appAppleId,
            environment: .production, clock: SimulatedClock())
        return try sender.signedBody(for: ServerNotificationEvent(type: .test), notificationUUID: uuid, signedDate: Date())
    }

    static func story(store: any NotificationStore, deadLetters: any DeadLetterStore) throws {
        let newApp = "com.example.new\"app\n"
        let configured = try receiver(bundle: IDs.bundle, store: store, deadLetters: deadLetters)
        let uuid = "0d1e2a3d-0000-4000-8000-000000000001"
        let unconfiguredBody = try body(bundle: newApp, uuid: uuid)

        // An app we do not know yet: dead-lettered, and 5xx so that Apple retries.
        guard case .rejected(let rejection) = configured.receive(body: unconfiguredBody, source: "192.0.2.7") else {
            Issue.record("a notification of an unconfigured app was not rejected")
            return
        }
        #expect(rejection.check == .bundleIdentifier && rejection.mayBeOurConfiguration)
        let id = try #require(rejection.deadLetterId)

        // A forgery (signature bytes changed): not Apple's, 400, dead-lettered too.
        let genuine = try body(bundle: IDs.bundle, uuid: "0d1e2a3d-0000-4000-8000-000000000002")
        let token = try #require(try JSONValue.parse(genuine)["signedPayload"]?.stringValue)
        let forgedToken = String(token.dropLast(4)) + (token.hasSuffix("AAAA") ? "BBBB" : "AAAA")
        guard case .rejected(let forgery) = configured.receive(body: Array(#"{"signedPayload":"\#(forgedToken)"}"#.utf8)) else {
            Issue.record("a forgery was not rejected")
            return
        }
        #expect(forgery.check == .signature && !forgery.mayBeOurConfiguration && forgery.deadLetterId != nil)

        let letters = try deadLetters.deadLetters(DeadLetterQuery())
        #expect(letters.map(\.id) == [id, try #require(forgery.deadLetterId)])
        let letter = try #require(letters.first)
        #expect(letter.check == "bundleIdentifier" && letter.sourceAddress == "192.0.2.7")
        #expect(letter.body == unconfiguredBody && letter.bodyLength == Int64(unconfiguredBody.count) && !letter.isTruncated)
        #expect(letter.unverified.bundleId == newApp && letter.unverified.notificationUUID == uuid)
        #expect(letter.unverified.notificationType == "TEST" && !letter.isRetried)
        #expect(try store.notifications(.all).isEmpty)

        // The app is configured now: the retry stores it, once.
        let fixed = try receiver(bundle: newApp, store: store, deadLetters: deadLetters)
        let outcomes = try deadLetters.deadLetters(DeadLetterQuery(pendingOnly: true)).map { fixed.retry($0).name }
        #expect(outcomes == ["stored", "rejected"])
        let rows = try store.notifications(.all)
        #expect(rows.map(\.notificationUUID) == [uuid] && rows.first?.bundleId == newApp)
        #expect(rows.first?.receivedDate == letter.receivedDate)
        // A second retry finds only the forgery pending, and stores nothing.
        let pending = try deadLetters.deadLetters(DeadLetterQuery(pendingOnly: true))
        #expect(pending.map(\.id) == [forgery.deadLetterId])
        #expect(pending.map { fixed.retry($0).name } == ["rejected"])
        // A retry of a stale copy of the retried letter stores nothing either.
        #expect(fixed.retry(letter).name == "alreadyRetried")
        #expect(try store.notifications(.all).count == 1)
        let retried = try #require(try deadLetters.deadLetters(DeadLetterQuery(id: id)).first)
        #expect(retried.isRetried && retried.retriedNotificationUUID == uuid)

        // A body over 256 KiB keeps its first 256 KiB and its length; it cannot be retried.
        let large = Array(repeating: UInt8(ascii: "x"), count: DeadLetter.maximumKeptBytes + 10)
        guard case .rejected(let largeRejection) = configured.receive(body: large) else {
            Issue.record("a large body was not rejected")
            return
        }
        let largeId = try #require(largeRejection.deadLetterId)
        let kept = try #require(try deadLetters.deadLetters(DeadLetterQuery(id: largeId)).first)
        #expect(kept.body.count == DeadLetter.maximumKeptBytes && kept.bodyLength == Int64(large.count) && kept.isTruncated)
        #expect(fixed.retry(kept).name == "rejected")

        // Retention by count: at most three letters, the newest.
        let limited = try receiver(
            bundle: IDs.bundle, store: store, deadLetters: deadLetters, retention: DeadLetterRetention(maximumCount: 3))
        var newest: [Int64] = []
        for index in 0..<5 {
            guard case .rejected(let kept) = limited.receive(body: Array("not json \(index)".utf8)), let id = kept.deadLetterId else {
                Issue.record("body \(index) was not kept")
                continue
            }
            newest.append(id)
        }
        #expect(try deadLetters.deadLetters(DeadLetterQuery()).map(\.id) == Array(newest.suffix(3)))
        // Retention by age: a letter older than the limit goes when the next one arrives.
        let now = StoredNotification.milliseconds(Date())
        let ageLimit = DeadLetterRetention(maximumCount: 100, maximumAge: 60)
        let old = try deadLetters.keep(
            DeadLetter(receivedDate: now - 120_000, sourceAddress: nil, check: "body", reason: "old", body: []), retention: ageLimit)
        #expect(try deadLetters.deadLetters(DeadLetterQuery(id: old)).count == 1)
        let recent = try deadLetters.keep(
            DeadLetter(receivedDate: now, sourceAddress: nil, check: "body", reason: "new\u{0}", body: [0, 1, 2]), retention: ageLimit)
        #expect(try deadLetters.deadLetters(DeadLetterQuery(id: old)).isEmpty)
        let recentLetter = try #require(try deadLetters.deadLetters(DeadLetterQuery(id: recent)).first)
        #expect(recentLetter.body == [0, 1, 2] && recentLetter.reason == "new\\u0000")

        // Purge: before a date, then everything.
        #expect(try deadLetters.purgeDeadLetters(before: now - 60_000) == 0)
        #expect(try deadLetters.purgeDeadLetters(before: nil) == 4)
        #expect(try deadLetters.deadLetters(DeadLetterQuery()).isEmpty)
    }
}
