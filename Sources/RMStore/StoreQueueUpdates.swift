// What the store does when the payment queue reports: transactions to verify, download, finish and
// persist, and the bookkeeping of a restore. Split from Store.swift; the state lives there.

import Foundation

extension Store {
    // MARK: - Queue updates

    func queueUpdated(transactions: [PaymentTransaction]) {
        for transaction in transactions {
            switch transaction.state {
            case .purchased, .restored:
                begin(transaction)
            case .failed:
                // A failure this store already finished (delivered twice) is reported once.
                guard !finishedIdentifiers.contains(transaction.identifier) else { continue }
                fail(transaction, error: transaction.error ?? StoreError(.paymentFailed), finish: true)
            case .deferred:
                post(.rmPaymentTransactionDeferred, transactionInfo(transaction))
            case .purchasing:
                break
            }
        }
    }

    /// Starts the pipeline, unless this transaction is already in it, was finished by this store,
    /// or waits for delivery (duplicate deliveries are ignored, Docs/StoreBehaviour.md §8.3).
    func begin(_ transaction: PaymentTransaction) {
        let id = transaction.identifier
        guard inFlight[id] == nil, !finishedIdentifiers.contains(id), awaitingDelivery[id] == nil else { return }
        if transaction.state == .restored {
            restoreArrived(transaction)
        }
        nextToken += 1
        inFlight[id] = InFlight(transaction: transaction, attempt: nextToken, stage: .verifying)
        verify(id)
    }

    func verify(_ id: String) {
        guard let context = inFlight[id] else { return }
        guard let verifier = receiptVerifier else {
            downloadSelfHostedContent(id)
            return
        }
        let attempt = context.attempt
        verifier.verify(context.transaction) { [weak self] result in
            self?.verified(id, attempt: attempt, result: result)
        }
    }

    func verified(_ id: String, attempt: Int, result: VerificationResult) {
        guard let context = inFlight[id], context.attempt == attempt, context.stage == .verifying else { return }
        switch result {
        case .verified:
            downloadSelfHostedContent(id)
        case .failed(let error):
            fail(context.transaction, error: error, finish: true)
        case .unableToComplete(let error):
            let reported: any Error =
                StoreError.code(of: error) == .unableToCompleteVerification
                ? error
                : StoreError(.unableToCompleteVerification, underlying: error)
            fail(context.transaction, error: reported, finish: false)
        }
    }

    func downloadSelfHostedContent(_ id: String) {
        guard var context = inFlight[id] else { return }
        context.stage = .selfHostedDownload
        inFlight[id] = context
        guard let downloader = contentDownloader else {
            startHostedDownloads(id)
            return
        }
        let attempt = context.attempt
        downloader.downloadContent(for: context.transaction) { [weak self] progress in
            self?.selfHostedProgress(id, attempt: attempt, progress: progress)
        } completion: { [weak self] result in
            self?.selfHostedCompleted(id, attempt: attempt, result: result)
        }
    }

    func selfHostedProgress(_ id: String, attempt: Int, progress: Double) {
        guard let context = inFlight[id], context.attempt == attempt, context.stage == .selfHostedDownload else { return }
        var info = transactionInfo(context.transaction)
        info[StoreNotificationKey.downloadProgress] = progress
        post(.rmDownloadUpdated, info)
    }

    func selfHostedCompleted(_ id: String, attempt: Int, result: Result<Void, any Error>) {
        guard let context = inFlight[id], context.attempt == attempt, context.stage == .selfHostedDownload else { return }
        switch result {
        case .success:
            // Move on before posting, so that a second completion call is ignored.
            var next = context
            next.stage = .hostedDownloads
            inFlight[id] = next
            post(.rmDownloadFinished, transactionInfo(context.transaction))
            startHostedDownloads(id)
        case .failure(let error):
            inFlight.removeValue(forKey: id)
            var info = transactionInfo(context.transaction)
            info[StoreNotificationKey.storeError] = error
            post(.rmDownloadFailed, info)
            fail(context.transaction, error: error, finish: true)
        }
    }

    func startHostedDownloads(_ id: String) {
        guard var context = inFlight[id] else { return }
        context.stage = .hostedDownloads
        // Downloads that already settled (a transaction delivered again) count as they are.
        for download in context.transaction.downloads where context.downloadFailure == nil {
            context.downloadFailure = Self.failure(of: download)
        }
        inFlight[id] = context
        let pending = context.transaction.downloads.filter { $0.state.isPending }
        if pending.isEmpty {
            settleHostedDownloadsIfDone(id)
        } else {
            queue.startDownloads(pending)
        }
    }

    static func failure(of download: Download) -> (any Error)? {
        switch download.state {
        case .failed: return download.error ?? StoreError(.downloadFailed)
        case .cancelled: return StoreError(.downloadCanceled)
        case .waiting, .active, .paused, .finished: return nil
        }
    }

    func queueUpdated(downloads: [Download]) {
        for download in downloads {
            let id = download.transactionIdentifier
            // Updates for transactions this store is not processing cannot be attributed; ignore.
            guard var context = inFlight[id] else { continue }
            if let index = context.transaction.downloads.firstIndex(where: { $0.id == download.id }) {
                context.transaction.downloads[index] = download
            } else {
                context.transaction.downloads.append(download)
            }
            if context.downloadFailure == nil {
                context.downloadFailure = Self.failure(of: download)
            }
            inFlight[id] = context

            var info = transactionInfo(context.transaction)
            info[StoreNotificationKey.storeDownload] = download
            switch download.state {
            case .active:
                info[StoreNotificationKey.downloadProgress] = download.progress
                post(.rmDownloadUpdated, info)
            case .paused:
                post(.rmDownloadPaused, info)
            case .waiting:
                break
            case .finished:
                post(.rmDownloadFinished, info)
            case .failed:
                info[StoreNotificationKey.storeError] = download.error ?? StoreError(.downloadFailed)
                post(.rmDownloadFailed, info)
            case .cancelled:
                post(.rmDownloadCanceled, info)
            }
            if !download.state.isPending {
                settleHostedDownloadsIfDone(id)
            }
        }
    }

    func settleHostedDownloadsIfDone(_ id: String) {
        guard let context = inFlight[id], context.stage == .hostedDownloads else { return }
        guard !context.transaction.downloads.contains(where: { $0.state.isPending }) else { return }
        if let failure = context.downloadFailure {
            fail(context.transaction, error: failure, finish: true)
        } else {
            succeed(id)
        }
    }

    func succeed(_ id: String) {
        guard let context = inFlight.removeValue(forKey: id) else { return }
        let transaction = context.transaction
        let mode = configuration.finishMode
        if mode == .automatic {
            finishedIdentifiers.insert(id)
            queue.finishTransaction(transaction)
        }
        if let persistor = transactionPersistor {
            do {
                try persistor.persist(transaction)
            } catch {
                // Automatic mode: already finished, so the app must learn that the record is
                // missing. After-delivery mode: not finished, so the queue delivers it again.
                report(transaction, error: StoreError(.persistenceFailed, underlying: error))
                return
            }
        }
        if mode == .afterDelivery {
            awaitingDelivery[id] = transaction
        }
        paymentCallbacks.removeValue(forKey: transaction.payment.id)?.success?(transaction)
        post(.rmPaymentTransactionFinished, transactionInfo(transaction))
        restoreSettled(transaction, failure: nil)
    }

    func fail(_ transaction: PaymentTransaction, error: any Error, finish: Bool) {
        inFlight.removeValue(forKey: transaction.identifier)
        if finish {
            finishedIdentifiers.insert(transaction.identifier)
            queue.finishTransaction(transaction)
        }
        report(transaction, error: error)
    }

    func report(_ transaction: PaymentTransaction, error: any Error) {
        paymentCallbacks.removeValue(forKey: transaction.payment.id)?.failure?(transaction, error)
        var info = transactionInfo(transaction)
        info[StoreNotificationKey.storeError] = error
        post(.rmPaymentTransactionFailed, info)
        restoreSettled(transaction, failure: error)
    }

    // MARK: - Restore bookkeeping

    func restoreArrived(_ transaction: PaymentTransaction) {
        // A restored transaction without a restore call (another store started it) gets a
        // session of its own, so that it is still aggregated when the queue says "finished".
        var session = restore ?? .unrequested
        if session.seen.insert(transaction.identifier).inserted {
            session.pending.insert(transaction.identifier)
        }
        restore = session
    }

    func restoreSettled(_ transaction: PaymentTransaction, failure: (any Error)?) {
        guard var session = restore, session.pending.remove(transaction.identifier) != nil else { return }
        if let failure {
            session.failed.append(FailedTransaction(transaction: transaction, error: failure))
        } else {
            session.restored.append(transaction)
        }
        restore = session
        completeRestoreIfDone()
    }

    func queueRestoreFinished() {
        var session = restore ?? .unrequested
        session.queueFinished = true
        restore = session
        completeRestoreIfDone()
    }

    func completeRestoreIfDone() {
        guard let session = restore, session.queueFinished, session.pending.isEmpty else { return }
        restore = nil
        let result = RestoreResult(restoredTransactions: session.restored, failedTransactions: session.failed)
        for callbacks in session.callbacks {
            callbacks.success?(result)
        }
        post(
            .rmRestoreTransactionsFinished,
            [
                StoreNotificationKey.transactions: result.restoredTransactions,
                StoreNotificationKey.failedTransactions: result.failedTransactions,
            ])
    }

    func queueRestoreFailed(_ error: any Error) {
        let session = restore
        restore = nil
        for callbacks in session?.callbacks ?? [] {
            callbacks.failure?(error)
        }
        post(.rmRestoreTransactionsFailed, [StoreNotificationKey.storeError: error])
    }
}
