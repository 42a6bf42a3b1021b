// The store's app-receipt verifier: RMStore's RMStoreAppReceiptVerifier on ReceiptVerification,
// with the transaction matched by id, refresh coalesced and its failures kept apart from verdicts.

public import Foundation
import Internals
public import RMStore
import ReceiptVerification
public import Receipts

/// Verifies purchased and restored transactions against the app receipt (iOS 7+ style), for the
/// store's `receiptVerifier` (RMStore's `RMStoreAppReceiptVerifier`, Docs/StoreBehaviour.md §2.3 and §4.6).
///
/// ## What is checked
/// 1. The receipt file at ``Configuration/receiptURL`` is read (at most
///    `ReceiptLimits.maximumInputSize` bytes).
/// 2. `ReceiptVerification.AppReceiptVerifier` checks the PKCS#7 signature over the payload, the
///    certificate chain to one of the configured anchors at the validation time, the chain policy
///    (``Configuration/trust``, ``StoreVerifierTrust/policy``), and the receipt's bundle identifier, app version, device hash,
///    environment and expiration date against the configuration.
/// 3. The receipt must hold **this transaction**, by transaction identifier (RMStore accepted any
///    purchase of the same product, so an old purchase validated a new charge):
///    - a purchased transaction (including a subscription renewal) by its own identifier;
///    - a restored transaction by its own identifier **or** by its original transaction's
///      identifier, because the App Store lists a restored purchase under the original purchase
///      (the restore transaction's own id is new and may not be in the receipt);
///    - the record found must be for the transaction's product (else
///      ``StoreVerifierError/Code/productMismatch``) and must not be cancelled (refunded; else
///      ``StoreVerifierError/Code/transactionCancelled``).
///
/// ## Validation time
/// By default the chain is checked at the receipt's creation date (field 12), as Apple's
/// verifyReceipt endpoint did: Apple's receipt-signing certificates expire long before the
/// receipts they signed stop mattering. That date comes from the signed payload, but whoever
/// signed can choose it. `ValidationTime.clock` checks at a time from a clock you trust
/// instead. The verifier never reads the system clock by itself.
///
/// ## Refresh, then retry once
/// When the receipt is missing, unreadable, fails a check, or does not hold the transaction, the
/// verifier refreshes the receipt **once** through ``refresher`` and verifies again:
/// - the refresh fails (network, sign-in cancelled, no store) → `.unableToComplete`: the
///   transaction stays unfinished and is verified again when the queue delivers it again
///   (RMStore reported the refresh error as a plain failure, which finished the transaction);
/// - the second attempt fails → `.failed` (the transaction is finished), except a receipt file
///   that still cannot be read (an I/O error, no verdict) → `.unableToComplete`.
///
/// A product mismatch or a refunded record is final at once (a refresh cannot change it). A
/// configuration error (anchors that could not be loaded, ``configurationError``) fails at once,
/// without reading the receipt and without refreshing: a visible failure rather than a silent
/// pass (RMStore's fail-open) or an endless unable-to-complete loop. With no ``refresher`` the
/// first failure is final.
///
/// Concurrent verifications that need a refresh share one refresh; with
/// ``init(configuration:store:)`` the refresh also goes through the store, so it joins any refresh
/// already in flight there (RMStore had a single refresh slot and dropped all callers but the
/// last, Docs/StoreBehaviour.md §4.6).
///
/// ## Errors
/// Rejections are `StoreError(.verificationFailed)` and "no verdict" is
/// `StoreError(.unableToCompleteVerification)`, each with a ``StoreVerifierError`` as
/// `underlying` (use ``StoreVerifierError/from(_:)``). Its message names the failed checks.
///
/// ## Isolation
/// Main-actor isolated like the store. Reading and verifying the receipt run off the main actor;
/// the completion and all state changes happen on the main actor.
@MainActor
public final class AppReceiptStoreVerifier: AsyncReceiptVerifier {
    /// What the receipt must say and how it is checked. Nothing is read from the process (no main
    /// bundle, no system clock): everything is here.
    public struct Configuration: Sendable {
        /// Where the app receipt file is (the analogue of `appStoreReceiptURL`).
        public var receiptURL: URL
        /// The app's bundle identifier, compared exactly with field 2. Hard-code it rather than
        /// reading it from a file the user can edit.
        public var bundleIdentifier: String
        /// The app version, compared exactly with field 3 (CFBundleVersion on iOS,
        /// CFBundleShortVersionString on macOS).
        public var appVersion: String
        /// The device the receipt must be bound to (field 5 = SHA-1(device ‖ opaque ‖ bundle id)).
        public var deviceIdentifier: DeviceIdentifier
        /// The environments the receipt type (field 0) may name. Default production and sandbox:
        /// App Review and TestFlight run production builds with sandbox receipts. Xcode receipts
        /// prove nothing about a real purchase and are not allowed by default.
        public var allowedEnvironments: Set<ReceiptEnvironment>
        /// Whom the receipt's chain must lead to, under which policy, at what time. Default: Apple's
        /// (the bundled roots, `.appStore`, the receipt's creation date, the shared chain cache).
        public var trust: StoreVerifierTrust
        /// Parser bounds for the untrusted receipt file.
        public var limits: ReceiptLimits

        /// Creates a configuration.
        public init(
            receiptURL: URL,
            bundleIdentifier: String,
            appVersion: String,
            deviceIdentifier: DeviceIdentifier,
            allowedEnvironments: Set<ReceiptEnvironment> = [.production, .sandbox],
            trust: StoreVerifierTrust = StoreVerifierTrust(),
            limits: ReceiptLimits = .default
        ) {
            self.receiptURL = receiptURL
            self.bundleIdentifier = bundleIdentifier
            self.appVersion = appVersion
            self.deviceIdentifier = deviceIdentifier
            self.allowedEnvironments = allowedEnvironments
            self.trust = trust
            self.limits = limits
        }
    }

    /// The configuration (fixed at creation; the anchors were loaded then).
    public let configuration: Configuration
    /// Refreshes the receipt when verification fails (`nil`: never; the first failure is final).
    public let refresher: (any ReceiptRefreshing)?
    /// Why the verifier cannot verify anything (the anchors could not be loaded), or `nil`. Check
    /// it at launch: while it is set, every transaction fails with
    /// ``StoreVerifierError/Code/anchorsUnavailable``.
    public var configurationError: StoreVerifierError? {
        if case .failure(let error) = checker.verifier { return error }
        return nil
    }
    /// The receipt of the last successful verification (of a transaction, or by
    /// ``verifiedReceipt()``), for app-level queries such as
    /// `containsActiveAutoRenewableSubscription(ofProduct:at:)`.
    public private(set) var lastVerifiedReceipt: AppReceipt?
    /// How many verifications asked for a refresh. Requests made while a refresh is in flight join
    /// it, so this can exceed the number of refreshes actually made.
    public private(set) var refreshRequestCount = 0

    private let checker: AppReceiptChecker
    private var refreshWaiters: [@MainActor (Result<Void, any Error>) -> Void] = []

    /// Creates a verifier. The anchors are loaded now; see ``configurationError``.
    /// - Parameters:
    ///   - configuration: what to expect and whom to trust.
    ///   - refresher: what refreshes the receipt; prefer ``init(configuration:store:)``, which
    ///     goes through the store.
    public init(configuration: Configuration, refresher: (any ReceiptRefreshing)?) {
        self.configuration = configuration
        self.refresher = refresher
        checker = AppReceiptChecker(configuration: configuration)
    }

    /// Creates a verifier that refreshes through `store` (held weakly, see
    /// ``StoreReceiptRefresher``). Assign it to `store.receiptVerifier` afterwards.
    public convenience init(configuration: Configuration, store: Store) {
        self.init(configuration: configuration, refresher: StoreReceiptRefresher(store: store))
    }

    // MARK: - AsyncReceiptVerifier

    /// Verifies `transaction` against the app receipt (see the type's documentation): refresh
    /// once, retry once.
    public func verify(_ transaction: PaymentTransaction) async -> VerificationResult {
        let first: StoreVerifierError
        switch await checker.check(transaction) {
        case .success(let receipt):
            lastVerifiedReceipt = receipt
            return .verified
        case .failure(let error):
            first = error
        }
        guard Self.refreshMayHelp(first.code), refresher != nil else {
            return Self.result(for: first)
        }
        if case .failure(let refreshError) = await refreshReceipt() {
            return StoreVerifierError(
                .refreshFailed, "\(first.message); refreshing the receipt failed, so the transaction stays unfinished",
                underlying: refreshError
            ).asUnableToComplete
        }
        switch await checker.check(transaction) {
        case .success(let receipt):
            lastVerifiedReceipt = receipt
            return .verified
        case .failure(let error):
            return Self.result(for: error)
        }
    }

    // MARK: - App-level queries

    /// Reads and verifies the app receipt now (off the main actor), without refreshing it and
    /// without looking for any transaction. Use the result for app-level questions, for example
    /// `containsActiveAutoRenewableSubscription(ofProduct:at:)` with a date from a clock you trust.
    /// - Throws: ``StoreVerifierError`` (`anchorsUnavailable`, `receiptMissing`,
    ///   `receiptUnreadable`, `receiptInvalid`).
    public func verifiedReceipt() async throws(StoreVerifierError) -> AppReceipt {
        let receipt = try await checker.checkReceipt().get()
        lastVerifiedReceipt = receipt
        return receipt
    }

    // MARK: - Refresh

    /// One refresh for every verification that asks while it is in flight.
    private func refreshReceipt() async -> Result<Void, any Error> {
        await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, any Error>, Never>) in
            requestRefresh { result in continuation.resume(returning: result) }
        }
    }

    private func requestRefresh(_ done: @escaping @MainActor (Result<Void, any Error>) -> Void) {
        refreshRequestCount += 1
        refreshWaiters.append(done)
        guard refreshWaiters.count == 1 else { return }
        guard let refresher else {
            refreshCompleted(.failure(StoreError(.receiptRefreshFailed, "No receipt refresher is configured")))
            return
        }
        refresher.refreshReceipt { [weak self] result in
            self?.refreshCompleted(result)
        }
    }

    private func refreshCompleted(_ result: Result<Void, any Error>) {
        let waiters = refreshWaiters
        refreshWaiters = []
        for waiter in waiters { waiter(result) }
    }

    // MARK: - Outcomes

    /// Whether a fresh receipt could turn this failure into a success.
    static func refreshMayHelp(_ code: StoreVerifierError.Code) -> Bool {
        switch code {
        case .receiptMissing, .receiptUnreadable, .receiptInvalid, .transactionNotInReceipt: return true
        default: return false
        }
    }

    /// The store's verdict for a final failure: an unreadable file is no verdict on the
    /// transaction; everything else is a rejection.
    static func result(for error: StoreVerifierError) -> VerificationResult {
        error.code == .receiptUnreadable ? error.asUnableToComplete : error.asFailure
    }
}

/// The part of the verifier that does the work: immutable and `Sendable`, so it runs off the main
/// actor.
struct AppReceiptChecker: Sendable {
    let configuration: AppReceiptStoreVerifier.Configuration
    let verifier: Result<AppReceiptVerifier, StoreVerifierError>
    let expectations: ReceiptExpectations

    init(configuration: AppReceiptStoreVerifier.Configuration) {
        self.configuration = configuration
        let trust = configuration.trust
        verifier = trust.loadAnchors(consequence: "no receipt can be verified")
            .map { AppReceiptVerifier(anchors: $0, policy: trust.policy, cache: trust.cache, limits: configuration.limits) }
        expectations = ReceiptExpectations(
            bundleIdentifier: configuration.bundleIdentifier,
            appVersion: configuration.appVersion,
            deviceIdentifier: configuration.deviceIdentifier,
            allowedEnvironments: configuration.allowedEnvironments,
            requireNotExpired: true)
    }

    /// Reads and verifies the receipt, then finds the transaction in it.
    @concurrent
    func check(_ transaction: PaymentTransaction) async -> Result<AppReceipt, StoreVerifierError> {
        checkReceiptNow().flatMap { receipt in
            Self.match(transaction, in: receipt).map { _ in receipt }
        }
    }

    /// Reads and verifies the receipt.
    @concurrent
    func checkReceipt() async -> Result<AppReceipt, StoreVerifierError> {
        checkReceiptNow()
    }

    private func checkReceiptNow() -> Result<AppReceipt, StoreVerifierError> {
        let verifier: AppReceiptVerifier
        switch self.verifier {
        case .success(let value): verifier = value
        case .failure(let error): return .failure(error)
        }
        let bytes: [UInt8]
        switch ReceiptFile.read(configuration.receiptURL, maximumSize: configuration.limits.maximumInputSize) {
        case .success(let read): bytes = read
        case .failure(let error): return .failure(error)
        }
        let verdict = verifier.verify(bytes, expecting: expectations, at: configuration.trust.validationTime)
        guard verdict.isValid, let receipt = verdict.receipt else {
            return .failure(StoreVerifierError(.receiptInvalid, "The app receipt failed verification", naming: verdict.failures))
        }
        return .success(receipt)
    }

    /// The receipt's record of `transaction` (see `AppReceiptStoreVerifier` for the rules).
    static func match(_ transaction: PaymentTransaction, in receipt: AppReceipt) -> Result<InAppPurchase, StoreVerifierError> {
        let identifiers = transaction.acceptedIdentifiers
        let records = receipt.inAppPurchases.filter { record in
            record.transactionIdentifier.map { identifiers.contains($0) } ?? false
        }
        let described =
            identifiers.count == 1
            ? "transaction \(transaction.identifier)"
            : "restored transaction \(transaction.identifier) (original \(identifiers[1]))"
        guard !records.isEmpty else {
            return .failure(
                StoreVerifierError(
                    .transactionNotInReceipt,
                    "The app receipt does not contain \(described) of \(transaction.productIdentifier)"))
        }
        let sameProduct = records.filter { $0.productIdentifier == transaction.productIdentifier }
        guard !sameProduct.isEmpty else {
            let products = Set(records.compactMap(\.productIdentifier)).sorted().map(quoted).joined(separator: ", ")
            return .failure(
                StoreVerifierError(
                    .productMismatch,
                    "The app receipt lists \(described) for \(products), not for \(transaction.productIdentifier)"))
        }
        guard let record = sameProduct.first(where: { $0.cancellationDate == nil }) else {
            return .failure(
                StoreVerifierError(
                    .transactionCancelled, "The app receipt lists \(described) of \(transaction.productIdentifier) as cancelled (refunded)")
            )
        }
        return .success(record)
    }
}

/// Reading the untrusted receipt file, through the package's bounded reader (a file larger than
/// the limit is refused from its size; nothing past the limit plus one byte is ever read).
enum ReceiptFile {
    /// The file's bytes; `receiptMissing` when there is no file, `receiptUnreadable` when it cannot
    /// be read, `receiptInvalid` (check `parse`) when it is larger than `maximumSize`.
    static func read(_ url: URL, maximumSize: Int) -> Result<[UInt8], StoreVerifierError> {
        let limit = max(0, maximumSize)
        do throws(FileBytes.Failure) {
            return .success(try FileBytes.read(FileBytes.Path(url.path), maximumSize: limit))
        } catch .missing {
            return .failure(StoreVerifierError(.receiptMissing, "There is no app receipt at \(url.path)"))
        } catch .tooLarge {
            let check = VerificationCheck(name: .parse, passed: false, reason: "the file is larger than \(limit) bytes")
            return .failure(StoreVerifierError(.receiptInvalid, "The app receipt failed verification", naming: [check]))
        } catch {
            return .failure(
                StoreVerifierError(
                    .receiptUnreadable, "The app receipt at \(url.path) cannot be read: \(error.reason(limit: limit))", underlying: error))
        }
    }
}
