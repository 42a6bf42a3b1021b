// The simulated App Store as a payment queue: payments, restores, finishing, observers.

import Foundation
import Internals
import JWS
public import RMStore

extension SimulatedAppStore {
    // MARK: - PaymentQueue

    /// Records the payment in ``addedPayments`` and schedules it: a `purchasing` transaction, then
    /// the outcome scripted for this payment or its product (a purchase by default). It fails with
    /// `paymentNotAllowed` when ``canMakePayments`` is false, and with `paymentInvalid` for a
    /// product that is not in the catalog.
    public func add(_ payment: Payment) {
        addedPayments.append(payment)
        schedule { [weak self] in self?.beginPayment(payment) }
    }

    func beginPayment(_ payment: Payment) {
        let identifier = nextTransactionIdentifier()
        guard canMakePayments else {
            failPurchase(payment, identifier: identifier, error: StoreError(.paymentNotAllowed))
            return
        }
        guard catalog.product(payment.productIdentifier) != nil else {
            failPurchase(
                payment, identifier: identifier,
                error: StoreError(.paymentInvalid, "No product \(payment.productIdentifier) in the catalog"))
            return
        }
        deliver(transactions: [PaymentTransaction(identifier: identifier, state: .purchasing, payment: payment)])
        schedule { [weak self] in self?.resolve(payment, identifier: identifier) }
    }

    func resolve(_ payment: Payment, identifier: String) {
        switch takeOutcome(for: payment) {
        case .purchased:
            completePurchase(payment, identifier: identifier)
        case .failed(let error):
            failPurchase(payment, identifier: identifier, error: error)
        case .cancelled:
            failPurchase(payment, identifier: identifier, error: StoreError(.paymentCancelled))
        case .deferred(let resolution):
            askToBuy[payment.id] = PendingPayment(payment: payment, identifier: identifier)
            deliver(transactions: [PaymentTransaction(identifier: identifier, state: .deferred, payment: payment, date: clock.now)])
            switch resolution {
            case .approved: approveAskToBuy(payment.id)
            case .declined: declineAskToBuy(payment.id)
            case .pending: break
            }
        case .interrupted(let resolution):
            interrupted[payment.id] = payment
            failPurchase(payment, identifier: identifier, error: StoreError(.paymentInterrupted))
            if case .resolved = resolution {
                resolveInterruptedPurchase(payment.id)
            }
        }
    }

    func failPurchase(_ payment: Payment, identifier: String, error: any Error) {
        let transaction = PaymentTransaction(identifier: identifier, state: .failed, payment: payment, date: clock.now, error: error)
        unfinishedTransactions.append(transaction)
        deliver(transactions: [transaction])
    }

    func completePurchase(_ payment: Payment, identifier: String) {
        guard let simulated = catalog.product(payment.productIdentifier) else {
            failPurchase(payment, identifier: identifier, error: StoreError(.paymentInvalid))
            return
        }
        let product = simulated.product
        let now = clock.now
        var transaction = PaymentTransaction(identifier: identifier, state: .purchased, payment: payment, date: now)
        var entry = ReceiptInAppPurchase(
            productIdentifier: product.identifier,
            transactionIdentifier: identifier,
            originalTransactionIdentifier: identifier,
            purchaseDate: now,
            originalPurchaseDate: now,
            quantity: payment.quantity,
            productType: product.kind
        )
        if product.kind == .autoRenewableSubscription, let period = product.subscriptionPeriod, let expiry = period.advance(now) {
            let webOrder = nextWebOrderLineItemID()
            transaction.expirationDate = expiry
            transaction.webOrderLineItemID = webOrder
            entry.expirationDate = expiry
            entry.webOrderLineItemID = webOrder
            subscriptions[identifier] = SubscriptionState(
                productIdentifier: product.identifier,
                originalTransactionIdentifier: identifier,
                originalPurchaseDate: now,
                expirationDate: expiry,
                period: period,
                autoRenews: true,
                applicationUsername: payment.applicationUsername
            )
        }
        transaction.downloads = makeDownloads(for: simulated, transactionIdentifier: identifier)
        let record = makeRecord(entry, applicationUsername: payment.applicationUsername, reason: .purchase)
        transaction.jwsRepresentation = signedTransaction(for: record)
        purchases.append(record)
        unfinishedTransactions.append(transaction)
        issueReceiptAfterPurchase()
        deliver(transactions: [transaction])
        if product.kind == .autoRenewableSubscription {
            notify(.subscribed, .initialBuy, original: identifier, transaction: identifier)
        } else {
            notify(.oneTimeCharge, nil, original: nil, transaction: identifier)
        }
    }

    /// Removes the transaction from ``unfinishedTransactions`` and records its identifier in
    /// ``finishedTransactionIdentifiers``; finishing an unknown or already finished transaction
    /// does nothing.
    public func finishTransaction(_ transaction: PaymentTransaction) {
        guard let index = unfinishedTransactions.firstIndex(where: { $0.identifier == transaction.identifier }) else { return }
        unfinishedTransactions.remove(at: index)
        finishedTransactionIdentifiers.append(transaction.identifier)
        if let record = purchases.firstIndex(where: { $0.receiptEntry.transactionIdentifier == transaction.identifier }) {
            purchases[record].finished = true
        }
    }

    /// Schedules a restore: a new `restored` transaction for every non-consumable and
    /// auto-renewable purchase made so far (of this user, when one is given), each pointing at its
    /// original purchase, then the "restore finished" callback. Fails with ``restoreError`` when
    /// it is set.
    public func restoreCompletedTransactions(applicationUsername: String?) {
        restoreRequests.append(applicationUsername)
        schedule { [weak self] in self?.performRestore(applicationUsername: applicationUsername) }
    }

    func performRestore(applicationUsername: String?) {
        if let restoreError {
            deliver { $0.paymentQueue(self, restoreCompletedTransactionsFailedWithError: restoreError) }
            return
        }
        let now = clock.now
        var restored: [PaymentTransaction] = []
        for record in purchases {
            let entry = record.receiptEntry
            guard entry.productType == .nonConsumable || entry.productType == .autoRenewableSubscription,
                applicationUsername == nil || record.applicationUsername == applicationUsername,
                let simulated = catalog.product(entry.productIdentifier)
            else { continue }
            let identifier = nextTransactionIdentifier()
            var transaction = PaymentTransaction(
                identifier: identifier,
                state: .restored,
                payment: Payment(
                    productIdentifier: entry.productIdentifier, quantity: entry.quantity, applicationUsername: record.applicationUsername),
                date: now,
                original: OriginalTransaction(identifier: entry.transactionIdentifier, date: entry.purchaseDate),
                expirationDate: entry.expirationDate,
                webOrderLineItemID: entry.webOrderLineItemID
            )
            transaction.downloads = makeDownloads(for: simulated, transactionIdentifier: identifier)
            transaction.jwsRepresentation = signedTransaction(for: record)
            restored.append(transaction)
            unfinishedTransactions.append(transaction)
        }
        if !restored.isEmpty {
            deliver(transactions: restored)
        }
        schedule { [weak self] in
            guard let self else { return }
            self.deliver { $0.paymentQueueRestoreCompletedTransactionsFinished(self) }
        }
    }

    /// Adds the observer (held weakly, added once) and, like StoreKit at launch, schedules the
    /// delivery of every unfinished transaction that is neither deferred nor still purchasing.
    public func addObserver(_ observer: any PaymentQueueObserver) {
        observers.removeAll { $0.value == nil }
        guard !observers.contains(where: { $0.value === observer }) else { return }
        observers.append(WeakQueueObserver(value: observer))
        // Like StoreKit at launch: what was not finished is delivered again to the new observer.
        guard unfinishedTransactions.contains(where: { $0.state != .deferred && $0.state != .purchasing }) else { return }
        schedule { [weak self, weak observer] in
            guard let self, let observer else { return }
            let pending = self.unfinishedTransactions.filter { $0.state != .deferred && $0.state != .purchasing }
            guard !pending.isEmpty else { return }
            observer.paymentQueue(self, updatedTransactions: pending)
        }
    }

    /// Removes the observer; it receives nothing scheduled afterwards.
    public func removeObserver(_ observer: any PaymentQueueObserver) {
        observers.removeAll { $0.value == nil || $0.value === observer }
    }
}
