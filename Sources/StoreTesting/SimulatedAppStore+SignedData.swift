// The simulated App Store's signed data (StoreKit 2), products, receipt and identifiers.

import Foundation
import Internals
import JWS
public import RMStore

extension SimulatedAppStore {
    // MARK: - Signed data (StoreKit 2)

    /// A purchase record with what its signed transaction says besides the receipt entry: the
    /// product's price, currency and subscription group at purchase time.
    func makeRecord(_ entry: ReceiptInAppPurchase, applicationUsername: String?, reason: TransactionReason) -> PurchaseRecord {
        var record = PurchaseRecord(receiptEntry: entry, applicationUsername: applicationUsername)
        record.transactionReason = reason
        if let simulated = catalog.product(entry.productIdentifier) {
            record.price = simulated.product.price
            record.currency = JWSIssuer.currency(ofLocale: simulated.product.priceLocaleIdentifier)
            record.subscriptionGroupIdentifier = simulated.effectiveSubscriptionGroupIdentifier
        }
        return record
    }

    func transactionContents(for record: PurchaseRecord) -> TransactionContents {
        TransactionContents(
            bundleIdentifier: bundleIdentifier, purchase: record.receiptEntry,
            subscriptionGroupIdentifier: record.subscriptionGroupIdentifier,
            appAccountToken: record.applicationUsername.flatMap { UUID(uuidString: $0) }, transactionReason: record.transactionReason,
            price: record.price, currency: record.currency, revocationReason: record.revocationReason, signedDate: clock.now,
            inAppOwnershipType: record.ownershipType)
    }

    /// The signed transaction of a record for a reported transaction; a failure is kept in
    /// `lastJWSError` and gives no JWS.
    func signedTransaction(for record: PurchaseRecord) -> String? {
        guard let jwsIssuer else { return nil }
        do {
            let token = try jwsIssuer.issueTransaction(transactionContents(for: record))
            lastJWSError = nil
            return token
        } catch {
            lastJWSError = error
            return nil
        }
    }

    func requireJWSIssuer() throws -> any JWSIssuing {
        guard let jwsIssuer else { throw JWSIssuingError("the simulated App Store has no JWS issuer") }
        return jwsIssuer
    }

    /// The signed transaction of a purchase (renewals included), signed now, with its current
    /// state (revocation fields after a refund): what the App Store Server API's Get Transaction
    /// Info would return. `nil` when the store has no such purchase.
    /// - Throws: ``JWSIssuingError`` without a ``jwsIssuer``; the issuer's errors.
    public func signedTransaction(transactionIdentifier: String) throws -> String? {
        let issuer = try requireJWSIssuer()
        guard let record = purchases.last(where: { $0.receiptEntry.transactionIdentifier == transactionIdentifier }) else { return nil }
        return try issuer.issueTransaction(transactionContents(for: record))
    }

    /// The renewal state of the subscription that started with `originalTransactionIdentifier`,
    /// now: the product, whether it renews, when, at what price, and why it expired.
    /// `nil` when no subscription started with that transaction.
    public func renewalInfoContents(originalTransactionIdentifier: String) -> RenewalInfoContents? {
        guard let state = subscriptions[originalTransactionIdentifier] else { return nil }
        let now = clock.now
        let product = catalog.product(state.productIdentifier)?.product
        let expired = state.expirationDate <= now && !state.inBillingRetry
        let intent: ExpirationIntent? = expired && !state.autoRenews ? (state.expiredByBilling ? .billingError : .customerCancelled) : nil
        return RenewalInfoContents(
            originalTransactionIdentifier: originalTransactionIdentifier, productIdentifier: state.productIdentifier,
            autoRenewStatus: state.autoRenews ? .on : .off, expirationIntent: intent,
            isInBillingRetryPeriod: state.inBillingRetry, recentSubscriptionStartDate: state.originalPurchaseDate,
            renewalDate: state.expirationDate, renewalPrice: state.increasedPrice ?? product?.price,
            currency: product.flatMap { JWSIssuer.currency(ofLocale: $0.priceLocaleIdentifier) },
            appAccountToken: state.applicationUsername.flatMap { UUID(uuidString: $0) }, gracePeriodExpiresDate: state.gracePeriodExpires,
            signedDate: now, priceIncreaseStatus: state.priceIncreaseStatus)
    }

    /// The signed renewal info of the subscription that started with
    /// `originalTransactionIdentifier` (see ``renewalInfoContents(originalTransactionIdentifier:)``),
    /// signed now. `nil` when no subscription started with that transaction.
    /// - Throws: ``JWSIssuingError`` without a ``jwsIssuer``; the issuer's errors.
    public func signedRenewalInfo(originalTransactionIdentifier: String) throws -> String? {
        let issuer = try requireJWSIssuer()
        guard let contents = renewalInfoContents(originalTransactionIdentifier: originalTransactionIdentifier) else { return nil }
        return try issuer.issueRenewalInfo(contents)
    }

    /// Every auto-renewable subscription of the app, by subscription group (in order of first
    /// purchase), each with its status now and its latest transaction and renewal info signed
    /// now: the shape of the App Store Server API's Get All Subscription Statuses.
    /// - Throws: ``JWSIssuingError`` without a ``jwsIssuer``; the issuer's errors.
    public func subscriptionGroupStatuses() throws -> [SimulatedSubscriptionGroupStatus] {
        let issuer = try requireJWSIssuer()
        return try subscriptionStatusContents().map { group in
            SimulatedSubscriptionGroupStatus(
                subscriptionGroupIdentifier: group.subscriptionGroupIdentifier,
                lastTransactions: try group.lastTransactions.map { item in
                    SimulatedSubscriptionStatus(
                        status: item.status, originalTransactionIdentifier: item.originalTransactionIdentifier,
                        signedTransactionInfo: try issuer.issueTransaction(item.transaction),
                        signedRenewalInfo: try issuer.issueRenewalInfo(item.renewalInfo))
                })
        }
    }

    // MARK: - Products and receipt

    /// Answers from the catalog, in identifier order: known identifiers as products, the rest as
    /// invalid identifiers. Fails with ``productsRequestError`` when it is set. Each call counts in
    /// ``productsRequestCount``.
    public func requestProducts(
        identifiers: Set<String>,
        completion: @escaping @MainActor @Sendable (Result<ProductsResponse, any Error>) -> Void
    ) {
        productsRequestCount += 1
        answerLater(
            failure: { $0.productsRequestError }, completion: completion,
            answer: { store in
                let sorted = identifiers.sorted()
                return .success(
                    ProductsResponse(
                        products: sorted.compactMap { store.catalog.product($0)?.product },
                        invalidProductIdentifiers: sorted.filter { store.catalog.product($0) == nil }
                    ))
            })
    }

    /// Issues a new receipt for everything bought so far and writes it to ``receiptURL``. Fails
    /// with ``refreshError`` when it is set, or with the issuer's error. Each call counts in
    /// ``refreshRequestCount``.
    public func refreshReceipt(completion: @escaping @MainActor @Sendable (Result<Void, any Error>) -> Void) {
        refreshRequestCount += 1
        answerLater(failure: { $0.refreshError }, completion: completion, answer: { $0.issueReceipt() })
    }

    /// Answers `completion` on a later event: with the failure a test set (`failure` of the
    /// store), else with `answer`.
    func answerLater<Success>(
        failure: @escaping @MainActor (SimulatedAppStore) -> (any Error)?,
        completion: @escaping @MainActor @Sendable (Result<Success, any Error>) -> Void,
        answer: @escaping @MainActor (SimulatedAppStore) -> Result<Success, any Error>
    ) {
        schedule { [weak self] in
            guard let self else { return }
            if let error = failure(self) {
                completion(.failure(error))
                return
            }
            completion(answer(self))
        }
    }

    /// The receipt contents as they are now.
    public func currentReceiptContents() -> ReceiptContents? {
        guard let receiptURL else { return nil }
        return ReceiptContents(
            bundleIdentifier: bundleIdentifier,
            appVersion: appVersion,
            originalApplicationVersion: originalApplicationVersion,
            creationDate: clock.now,
            receiptURL: receiptURL,
            inAppPurchases:
                purchases
                .filter { !($0.receiptEntry.productType == .consumable && $0.finished) }
                .map(\.receiptEntry)
        )
    }

    func issueReceiptAfterPurchase() {
        if case .failure(let error) = issueReceipt() {
            lastReceiptError = error
        } else {
            lastReceiptError = nil
        }
    }

    func issueReceipt() -> Result<Void, any Error> {
        guard let receiptIssuer, let contents = currentReceiptContents() else { return .success(()) }
        do {
            let bytes = try receiptIssuer.issueReceipt(for: contents)
            try FileManager.default.createDirectory(
                at: contents.receiptURL.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try AtomicFile.write(bytes, to: contents.receiptURL, permissions: 0o644)
            receiptIssueCount += 1
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    // MARK: - Identifiers

    func nextTransactionIdentifier() -> String {
        lastTransactionNumber += 1 + random.next() % 89
        return String(lastTransactionNumber)
    }

    func nextWebOrderLineItemID() -> Int64 {
        lastWebOrderLineItemID += 1 + Int64(random.next() % 89)
        return lastWebOrderLineItemID
    }
}
