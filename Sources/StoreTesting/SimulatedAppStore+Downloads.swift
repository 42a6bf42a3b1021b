// The simulated App Store's hosted downloads: progress, pause, resume, cancel.

import Foundation
import Internals
import JWS
public import RMStore

extension SimulatedAppStore {
    // MARK: - Downloads

    func makeDownloads(for product: SimulatedProduct, transactionIdentifier: String) -> [Download] {
        product.hostedContents.map { content in
            let download = Download(
                id: "\(transactionIdentifier).\(content.contentIdentifier)",
                contentIdentifier: content.contentIdentifier,
                transactionIdentifier: transactionIdentifier,
                state: .waiting,
                contentLength: Int64(content.payload.count),
                contentVersion: content.contentVersion
            )
            downloads[download.id] = DownloadRecord(download: download, content: content)
            return download
        }
    }

    /// The current state of a download, by id.
    public func download(withIdentifier identifier: String) -> Download? {
        downloads[identifier]?.download
    }

    /// Starts the waiting downloads among `downloads` (others are ignored): a `waiting` update,
    /// then the content's progress steps, then its scripted outcome (`finished` writes the content
    /// under ``downloadsDirectory``).
    public func startDownloads(_ downloads: [Download]) {
        for download in downloads {
            guard var record = self.downloads[download.id], record.download.state == .waiting, !record.started else { continue }
            record.started = true
            self.downloads[download.id] = record
            startedDownloadIdentifiers.append(download.id)
            // Like StoreKit: first a waiting update, then progress.
            let snapshot = record.download
            schedule { [weak self] in self?.deliver(downloads: [snapshot]) }
            scheduleStep(download.id, generation: record.generation)
        }
    }

    /// Pauses the waiting or active downloads among `downloads` and reports them `paused`.
    public func pauseDownloads(_ downloads: [Download]) {
        changeDownloads(downloads, from: [.waiting, .active], to: .paused)
    }

    /// Resumes the paused downloads among `downloads`; they report progress again.
    public func resumeDownloads(_ downloads: [Download]) {
        changeDownloads(downloads, from: [.paused], to: .active)
    }

    /// Cancels the downloads among `downloads` that have not settled and reports them `cancelled`.
    public func cancelDownloads(_ downloads: [Download]) {
        changeDownloads(downloads, from: [.waiting, .active, .paused], to: .cancelled)
    }

    func changeDownloads(_ downloads: [Download], from allowed: Set<DownloadState>, to state: DownloadState) {
        for download in downloads {
            guard var record = self.downloads[download.id], allowed.contains(record.download.state) else { continue }
            record.download.state = state
            record.generation += 1
            self.downloads[download.id] = record
            let snapshot = record.download
            schedule { [weak self] in self?.deliver(downloads: [snapshot]) }
            if state == .active {
                scheduleStep(download.id, generation: record.generation)
            }
        }
    }

    func scheduleStep(_ identifier: String, generation: Int) {
        schedule { [weak self] in self?.stepDownload(identifier, generation: generation) }
    }

    func stepDownload(_ identifier: String, generation: Int) {
        guard var record = downloads[identifier], record.generation == generation,
            record.download.state == .waiting || record.download.state == .active
        else { return }
        let steps = record.content.progressSteps
        if record.nextStep < steps.count {
            record.download.state = .active
            record.download.progress = min(max(steps[record.nextStep], 0), 1)
            record.download.timeRemaining = Double(steps.count - record.nextStep)
            record.nextStep += 1
            downloads[identifier] = record
            deliver(downloads: [record.download])
            scheduleStep(identifier, generation: generation)
            return
        }
        switch record.content.outcome {
        case .finished:
            do {
                record.download.contentURL = try writeContent(of: record)
                record.download.state = .finished
                record.download.progress = 1
                record.download.timeRemaining = 0
            } catch {
                record.download.state = .failed
                record.download.error = error
            }
        case .failed(let error):
            record.download.state = .failed
            record.download.error = error
        case .cancelled:
            record.download.state = .cancelled
        }
        downloads[identifier] = record
        deliver(downloads: [record.download])
    }

    func writeContent(of record: DownloadRecord) throws -> URL {
        let directory =
            downloadsDirectory
            .appendingPathComponent(record.download.transactionIdentifier)
            .appendingPathComponent(record.content.contentIdentifier)
        let contents = directory.appendingPathComponent("Contents")
        try FileManager.default.createDirectory(at: contents, withIntermediateDirectories: true)
        try record.content.payload.write(to: contents.appendingPathComponent(record.content.fileName), options: .atomic)
        return directory
    }
}
