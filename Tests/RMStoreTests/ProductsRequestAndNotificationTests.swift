// RMProducstRequestDelegateTests.m and NSNotification+RMStoreTests.m (Docs/StoreBehaviour.md §7).

import Foundation
import RMStore
import StoreTesting
import TestSupport
import Testing

@Suite("RMProducstRequestDelegateTests.m")
@MainActor
struct RMProducstRequestDelegateTests_m {
    /// testProductsRequestDidReceiveResponse_Empty (blocks and notification)
    @Test func productsRequestDidReceiveResponse_Empty_emptyArraysInBlockAndNotification() throws {
        let f = Fixture()
        var answered: ([Product], [String])?
        f.store.requestProducts([]) {
            answered = ($0, $1)
        } failure: { _ in
            Issue.record("failure")
        }
        f.sim.processAllEvents()
        #expect(answered?.0.isEmpty == true)
        #expect(answered?.1.isEmpty == true)
        let notification = try #require(f.log.first(.rmProductsRequestFinished))
        #expect(notification.rm.products?.isEmpty == true)
        #expect(notification.rm.invalidProductIdentifiers?.isEmpty == true)
    }

    /// testProductsRequestDidReceiveResponse_OneProduct
    @Test func productsRequestDidReceiveResponse_OneProduct_isReturnedCachedAndPosted() throws {
        let f = Fixture()
        var answered: ([Product], [String])?
        f.store.requestProducts([IDs.coins]) { answered = ($0, $1) }
        f.sim.processAllEvents()
        #expect(answered?.0.map(\.identifier) == [IDs.coins])
        #expect(answered?.0.first?.price == Decimal(string: "0.99"))
        #expect(answered?.1 == [])
        #expect(f.store.product(forIdentifier: IDs.coins)?.localizedTitle == "Coins")
        let notification = try #require(f.log.first(.rmProductsRequestFinished))
        #expect(notification.rm.products?.map(\.identifier) == [IDs.coins])
        #expect(notification.object as? Store === f.store)
    }

    /// testProductsRequestDidReceiveResponse_OneInvalidProduct
    @Test func productsRequestDidReceiveResponse_OneInvalidProduct_isListedAndNotCached() throws {
        let f = Fixture()
        var answered: ([Product], [String])?
        f.store.requestProducts(["com.example.nope"]) { answered = ($0, $1) }
        f.sim.processAllEvents()
        #expect(answered?.0.isEmpty == true)
        #expect(answered?.1 == ["com.example.nope"])
        #expect(f.store.product(forIdentifier: "com.example.nope") == nil)
        let notification = try #require(f.log.first(.rmProductsRequestFinished))
        #expect(notification.rm.invalidProductIdentifiers == ["com.example.nope"])
    }

    /// testRequestDidFailWithError (blocks and notification): the error passes through.
    @Test func requestDidFailWithError_errorPassesThroughBlockAndNotification() throws {
        let f = Fixture()
        f.sim.productsRequestError = TestError("offline")
        var error: (any Error)?
        f.store.requestProducts([IDs.coins]) { _, _ in
            Issue.record("success")
        } failure: {
            error = $0
            f.log.timeline.append("failure")
        }
        f.sim.processAllEvents()
        #expect(error as? TestError == TestError("offline"))
        #expect(f.log.timeline == ["failure", Notification.Name.rmProductsRequestFailed.short])
        #expect(f.log.first(.rmProductsRequestFailed)?.rm.storeError as? TestError == TestError("offline"))
        #expect(f.store.product(forIdentifier: IDs.coins) == nil)
    }

    /// The block runs before the notification (Docs/StoreBehaviour.md §2.1).
    @Test func productsRequest_blockRunsBeforeTheNotification() {
        let f = Fixture()
        f.store.requestProducts([IDs.coins]) { _, _ in f.log.timeline.append("success") }
        f.sim.processAllEvents()
        #expect(f.log.timeline == ["success", Notification.Name.rmProductsRequestFinished.short])
    }

    /// Notifications also reach `NotificationCenter` observers, with the store as object.
    @Test func productsRequest_notificationReachesNotificationCenter() throws {
        let center = NotificationCenter()
        let sim = SimulatedAppStore(catalog: defaultCatalog(), deliversAutomatically: false)
        let store = Store(appStore: sim, notificationCenter: center)
        let received = LockedBox<[String]>([])
        let token = center.addObserver(forName: .rmProductsRequestFinished, object: store, queue: nil) { notification in
            received.mutate { $0 += notification.rm.products?.map(\.identifier) ?? [] }
        }
        defer { center.removeObserver(token) }
        store.requestProducts([IDs.level])
        sim.processAllEvents()
        #expect(received.value == [IDs.level])
    }
}

/// A value shared with `@Sendable` notification blocks.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
    func mutate(_ body: (inout Value) -> Void) {
        lock.lock()
        body(&stored)
        lock.unlock()
    }
}

@Suite("NSNotification+RMStoreTests.m")
struct NSNotification_RMStoreTests_m {
    /// testRMDownloadProgress, testRMInvalidProductIdentifiers, testRMProductIdentifier,
    /// testRMProducts, testRMStoreDownload, testRMStoreError, testRMTransaction, testRMTransactions:
    /// every accessor is nil on a notification without userInfo.
    @Test func accessors_areNilOnAnEmptyNotification() {
        let notification = Notification(name: .rmPaymentTransactionFinished)
        #expect(notification.rm.downloadProgress == nil)
        #expect(notification.rm.invalidProductIdentifiers == nil)
        #expect(notification.rm.productIdentifier == nil)
        #expect(notification.rm.products == nil)
        #expect(notification.rm.download == nil)
        #expect(notification.rm.storeError == nil)
        #expect(notification.rm.transaction == nil)
        #expect(notification.rm.transactions == nil)
        #expect(notification.rm.failedTransactions == nil)
    }

    /// Each accessor reads its key, and a value of the wrong type reads as nil.
    @Test func accessors_readTheirKeysAndRejectWrongTypes() {
        let transaction = PaymentTransaction(identifier: "2000000000000001", state: .purchased, payment: Payment(productIdentifier: "p"))
        let download = Download(
            id: "d", contentIdentifier: "c", transactionIdentifier: transaction.identifier, state: .active, progress: 0.25)
        let notification = Notification(
            name: .rmDownloadUpdated,
            userInfo: [
                StoreNotificationKey.transaction: transaction,
                StoreNotificationKey.productIdentifier: "p",
                StoreNotificationKey.downloadProgress: 0.25,
                StoreNotificationKey.storeDownload: download,
                StoreNotificationKey.storeError: TestError("x"),
                StoreNotificationKey.products: [Product(identifier: "p", price: 1)],
                StoreNotificationKey.invalidProductIdentifiers: ["q"],
                StoreNotificationKey.transactions: [transaction],
            ])
        #expect(notification.rm.transaction?.identifier == transaction.identifier)
        #expect(notification.rm.productIdentifier == "p")
        #expect(notification.rm.downloadProgress == 0.25)
        #expect(notification.rm.download?.id == "d")
        #expect(notification.rm.storeError as? TestError == TestError("x"))
        #expect(notification.rm.products?.map(\.identifier) == ["p"])
        #expect(notification.rm.invalidProductIdentifiers == ["q"])
        #expect(notification.rm.transactions?.map(\.identifier) == [transaction.identifier])
        let wrong = Notification(name: .rmDownloadUpdated, userInfo: [StoreNotificationKey.transaction: "not a transaction"])
        #expect(wrong.rm.transaction == nil)
    }

    /// The 14 names exist, are distinct, and keep RMStore's strings.
    @Test func names_areTheFourteenOfRMStore() {
        let names = Notification.Name.rmAllStoreNotifications
        #expect(names.count == 14)
        #expect(Set(names.map(\.rawValue)).count == 14)
        #expect(names.allSatisfy { $0.rawValue.hasPrefix("RMSK") })
        #expect(Notification.Name.rmDownloadCanceled.rawValue == "RMSKDownloadCanceled")
    }
}
