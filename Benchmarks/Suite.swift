import CryptoBaselines
import Foundation
import JWS
import ReceiptCrypto
import ReceiptSigning
import ReceiptVerification
import Receipts
import TestSupport

/// A benchmark receipt: its bytes and what parsing must find in it.
struct CorpusReceipt {
    let name: String
    let bytes: [UInt8]
    let purchases: Int
    let product: String
}

/// Everything measured in one run, plus the ratios between them.
struct Report {
    var results: [Result] = []
    var ratios: [(String, Double)] = []
    var notes: [String] = []

    subscript(name: String) -> Result? { results.first { $0.name == name } }

    mutating func ratio(_ label: String, _ slower: String, _ faster: String) {
        guard let a = self[slower], let b = self[faster], b.nsPerOp > 0 else { return }
        ratios.append((label, a.nsPerOp / b.nsPerOp))
    }

    func print(json: Bool) {
        if json {
            for r in results {
                Swift.print(
                    "{\"name\":\"\(r.name)\",\"bytes\":\(r.bytes),\"ns_per_op\":\(String(format: "%.1f", r.nsPerOp)),"
                        + "\"mb_per_s\":\(String(format: "%.1f", r.mbPerSecond)),\"runs\":\(r.runs),\"spread\":\(String(format: "%.1f", r.spreadPercent))}"
                )
            }
            for (label, value) in ratios {
                Swift.print("{\"ratio\":\"\(label)\",\"value\":\(String(format: "%.3f", value))}")
            }
            for note in notes { Swift.print("{\"note\":\"\(note.replacingOccurrences(of: "\"", with: "'"))\"}") }
            return
        }
        let width = max(36, (results.map(\.name.count).max() ?? 0) + 2)
        Swift.print(
            "name".padding(toLength: width, withPad: " ", startingAt: 0) + "bytes".leftPadded(10) + "time/op".leftPadded(12)
                + "MB/s".leftPadded(10) + "spread".leftPadded(9))
        for r in results {
            Swift.print(
                r.name.padding(toLength: width, withPad: " ", startingAt: 0) + String(r.bytes).leftPadded(10)
                    + formatTime(r.nsPerOp).leftPadded(12) + (r.bytes > 0 ? String(format: "%.0f", r.mbPerSecond) : "-").leftPadded(10)
                    + String(format: "%.1f%%", r.spreadPercent).leftPadded(9))
        }
        if !ratios.isEmpty {
            Swift.print("\nratios (how many times the first is slower than the second)")
            let labelWidth = max(64, (ratios.map(\.0.count).max() ?? 0) + 2)
            for (label, value) in ratios {
                Swift.print("  " + label.padding(toLength: labelWidth, withPad: " ", startingAt: 0) + String(format: "%.2f×", value))
            }
        }
        for note in notes { Swift.print(note) }
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}

struct Suite {
    let options: Options
    var harness: Harness { Harness(runs: options.runs, seconds: options.seconds) }

    func run() throws -> Report {
        if let path = options.file { return try runFile(path) }
        if options.targets { return try runTargets() }
        var report = Report()
        if options.jws {
            try JWSDecodeBench.measure(with: harness, into: &report)
            return report
        }
        let pki = try TestPKI.generate()
        let sizes = options.quick ? [1000] : [1, 100, 1000, 10000]
        var corpus: [(CorpusReceipt, String)] = []
        for n in sizes {
            let receipt = SyntheticReceipts.receipt(purchases: n)
            for (layout, label) in [(ReceiptLayout.appStore, "der"), (.xcode, "ber")] {
                let bytes = try pki.signer().sign(receipt, layout: layout)
                corpus.append(
                    (CorpusReceipt(name: "\(n)/\(label)", bytes: bytes, purchases: n, product: SyntheticReceipts.markerProduct), label))
            }
        }
        for (receipt, layout) in corpus {
            try measureParsing(receipt, into: &report, baselines: true)
            if layout == "der" && receipt.purchases == 1000 {
                report.ratio("parse 1000/der vs RMStore's OpenSSL parse", "openssl-rmstore-parse/1000/der", "parse/1000/der")
                report.ratio("parse 1000/der vs memcpy", "parse/1000/der", "memcpy/1000/der")
                report.ratio("parse 1000/der vs the C TLV walker (target ≤ 1.0)", "parse/1000/der", "c-walk/1000/der")
                report.ratio("JSON 1000/der vs its parse (target ≤ 3)", "json/1000/der", "parse/1000/der")
            }
        }
        for n in sizes where sizes.contains(10000) && n == 10000 {
            report.ratio("parse 10000/der ÷ parse 1000/der (linear: 9–11)", "parse/10000/der", "parse/1000/der")
            report.ratio("full parse vs lazy query, 10000/der", "parse/10000/der", "query/10000/der")
        }
        // Verification: a 1-purchase receipt signed by a test PKI shaped like Apple's, and a real
        // App Store receipt checked against Apple Inc. Root at its creation date.
        if let one = corpus.first(where: { $0.0.name == "1/der" })?.0 ?? corpus.first?.0 {
            try VerificationBench(
                name: one.name, bytes: one.bytes, anchor: pki.root, time: Date(timeIntervalSince1970: 1_700_000_000),
                purchases: one.purchases
            )
            .measure(with: harness, into: &report, suffix: "/\(one.name)")
        }
        if let real = try realReceiptBench() {
            try real.measure(with: harness, into: &report, suffix: "/receipt-sandbox-g5")
        }
        try measureRealReceipts(into: &report)
        try JWSDecodeBench.measure(with: harness, into: &report)
        try measureDates(into: &report)
        try measureParallel(corpus.first { $0.0.name == "1/der" }?.0 ?? corpus[0].0, into: &report)
        if sizes.contains(10000), let big = corpus.first(where: { $0.0.name == "10000/der" })?.0 {
            report.notes.append(try MemoryProbe.measure(big.bytes))
        }
        return report
    }

    func measureParsing(_ receipt: CorpusReceipt, into report: inout Report, baselines: Bool) throws {
        let bytes = receipt.bytes
        let n = receipt.purchases
        let product = receipt.product
        let parsed = try AppReceipt(bytes)
        report.results.append(
            try harness.measure(
                Measurement(name: "envelope/\(receipt.name)", bytes: bytes.count, expected: parsed.payload.count) {
                    try ReceiptEnvelope(bytes).payload.count
                }))
        report.results.append(
            try harness.measure(
                Measurement(name: "parse/\(receipt.name)", bytes: bytes.count, expected: n) {
                    try AppReceipt(bytes).inAppPurchases.count
                }))
        // The lazy query looks for a product the receipt does not hold, so it walks every record
        // (DER sorts the records, so a product that is there may be found after a few).
        _ = product
        report.results.append(
            try harness.measure(
                Measurement(name: "query/\(receipt.name)", bytes: bytes.count, expected: 0) {
                    try LazyAppReceipt(bytes).containsInAppPurchase(ofProduct: "com.example.absent.product") ? 1 : 0
                }))
        let jsonLength = parsed.jsonText(indent: 0).utf8.count
        report.results.append(
            try harness.measure(
                Measurement(name: "json/\(receipt.name)", bytes: jsonLength, expected: jsonLength) {
                    parsed.jsonText(indent: 0).utf8.count
                }))
        guard baselines else { return }
        report.results.append(
            try harness.measure(
                Measurement(name: "openssl-rmstore-parse/\(receipt.name)", bytes: bytes.count, expected: n) {
                    OpenSSLBaselines.rmstoreStyleParse(bytes) ?? -1
                }))
        report.results.append(
            try harness.measure(
                Measurement(name: "memcpy/\(receipt.name)", bytes: bytes.count, expected: bytes.count) {
                    var copy = [UInt8](repeating: 0, count: bytes.count)
                    copy.withUnsafeMutableBytes { destination in
                        bytes.withUnsafeBytes { source in
                            if let d = destination.baseAddress, let s = source.baseAddress { memcpy(d, s, bytes.count) }
                        }
                    }
                    return copy.count
                }))
        // The parse yardstick: a zero-allocation C TLV walker over the same bytes (DER only).
        if CYardstick.walk(bytes) == n {
            report.results.append(
                try harness.measure(
                    Measurement(name: "c-walk/\(receipt.name)", bytes: bytes.count, expected: n) {
                        CYardstick.walk(bytes)
                    }))
        }
    }

    /// The real SHA-256 App Store receipt with Apple Inc. Root, at its creation date.
    func realReceiptBench() throws -> VerificationBench? {
        guard let data = FileManager.default.contents(atPath: Fixtures.root.appendingPathComponent("receipt-sandbox-g5.der").path),
            let root = FileManager.default.contents(
                atPath: Fixtures.root.appendingPathComponent("certs/AppleIncRootCertificate.cer").path)
        else { return nil }
        let bytes = [UInt8](data)
        let receipt = try AppReceipt(bytes)
        guard let created = receipt.creationDate else { return nil }
        return VerificationBench(
            name: "receipt-sandbox-g5", bytes: bytes, anchor: try Certificate(derEncoded: [UInt8](root)), time: created,
            purchases: receipt.inAppPurchases.count)
    }

    /// Every receipt in TestReceipts/: parse and RMStore's OpenSSL parse, totalled.
    func measureRealReceipts(into report: inout Report) throws {
        let directory = Fixtures.root
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else {
            report.notes.append("TestReceipts/ not found next to the sources; real receipts skipped")
            return
        }
        var receipts: [(String, [UInt8], Int)] = []
        for name in names.sorted() where name.hasSuffix(".der") {
            let bytes = [UInt8](FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) ?? Data())
            guard let receipt = try? AppReceipt(bytes) else { continue }
            receipts.append((name, bytes, receipt.inAppPurchases.count))
        }
        let total = receipts.reduce(0) { $0 + $1.1.count }
        let expected = receipts.reduce(0) { $0 + $1.2 }
        report.results.append(
            try harness.measure(
                Measurement(name: "parse/TestReceipts (all \(receipts.count))", bytes: total, expected: expected) {
                    try receipts.reduce(0) { $0 + (try AppReceipt($1.1).inAppPurchases.count) }
                }))
        report.results.append(
            try harness.measure(
                Measurement(name: "openssl-rmstore-parse/TestReceipts (all \(receipts.count))", bytes: total, expected: expected) {
                    receipts.reduce(0) { $0 + (OpenSSLBaselines.rmstoreStyleParse($1.1) ?? -1_000_000) }
                }))
        report.ratio(
            "parse TestReceipts vs RMStore's OpenSSL parse", "openssl-rmstore-parse/TestReceipts (all \(receipts.count))",
            "parse/TestReceipts (all \(receipts.count))")
        if let legacy = receipts.first(where: { $0.0 == "receipt-sandbox-legacy.der" }) {
            report.results.append(
                try harness.measure(
                    Measurement(name: "parse/receipt-sandbox-legacy (187 IAPs)", bytes: legacy.1.count, expected: 187) {
                        try AppReceipt(legacy.1).inAppPurchases.count
                    }))
        }
    }

    /// Our RFC 3339 parser against Foundation's ISO8601DateFormatter on the same strings.
    func measureDates(into report: inout Report) throws {
        var strings: [String] = []
        var seconds: Int64 = 1_594_755_400
        for i in 0..<1000 {
            seconds += Int64(i * 7919)
            strings.append(ReceiptDate.rfc3339(Date(timeIntervalSince1970: TimeInterval(seconds))))
        }
        let formatter = ISO8601DateFormatter()
        let expected = strings.count
        report.results.append(
            try harness.measure(
                Measurement(name: "dates/ours (1000 RFC 3339 strings)", bytes: 0, expected: expected) {
                    var count = 0
                    for s in strings where try ReceiptDate.parse(s) != nil { count += 1 }
                    return count
                }))
        report.results.append(
            try harness.measure(
                Measurement(name: "dates/ISO8601DateFormatter (same strings)", bytes: 0, expected: expected) {
                    var count = 0
                    for s in strings where formatter.date(from: s) != nil { count += 1 }
                    return count
                }))
        report.ratio(
            "ISO8601DateFormatter vs our date parser", "dates/ISO8601DateFormatter (same strings)", "dates/ours (1000 RFC 3339 strings)")
    }

    /// Receipts per second parsing 1-purchase receipts on every core.
    func measureParallel(_ receipt: CorpusReceipt, into report: inout Report) throws {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let batch = 2000
        let bytes = receipt.bytes
        report.results.append(
            try harness.measure(
                Measurement(name: "parse/parallel batch of \(batch) (\(cores) cores)", bytes: bytes.count * batch, expected: batch) {
                    let counter = Counter()
                    DispatchQueue.concurrentPerform(iterations: cores) { worker in
                        var local = 0
                        for _ in stride(from: worker, to: batch, by: cores) where (try? AppReceipt(bytes)) != nil { local += 1 }
                        counter.add(local)
                    }
                    return counter.value
                }))
        if let r = report["parse/parallel batch of \(batch) (\(cores) cores)"] {
            report.notes.append(String(format: "parallel parse: %.0f receipts/s on %d cores", Double(batch) / r.nsPerOp * 1e9, cores))
        }
    }

    /// `--targets`: issue 16's four rows and their yardsticks, in one run: parse of the
    /// 1,000-purchase DER receipt against the C TLV walker, its JSON against its parse, warm verify
    /// of the 1-purchase receipt against the RSA floor, and peak memory of the 10,000-purchase parse.
    func runTargets() throws -> Report {
        var report = Report()
        let pki = try TestPKI.generate()
        let thousand = try pki.signer().sign(SyntheticReceipts.receipt(purchases: 1000), layout: .appStore)
        let parsed = try AppReceipt(thousand)
        let parse = Measurement(name: "parse/1000/der", bytes: thousand.count, expected: 1000) {
            try AppReceipt(thousand).inAppPurchases.count
        }
        let walk = Measurement(name: "c-walk/1000/der", bytes: thousand.count, expected: 1000) { CYardstick.walk(thousand) }
        let jsonLength = parsed.jsonText(indent: 0).utf8.count
        let json = Measurement(name: "json/1000/der", bytes: jsonLength, expected: jsonLength) {
            parsed.jsonText(indent: 0).utf8.count
        }
        let one = try pki.signer().sign(SyntheticReceipts.receipt(purchases: 1), layout: .appStore)
        let warm = AppReceiptVerifier(anchors: [pki.root], policy: .appStore, cache: ChainCache())
        let at = ValidationTime.fixed(Date(timeIntervalSince1970: 1_700_000_000))
        let verify = Measurement(name: "verify-warm/1/der", bytes: one.count, expected: 1) {
            let verdict = warm.verify(one, at: at)
            return verdict.isValid ? (verdict.receipt?.inAppPurchases.count ?? -2) : -1
        }
        let floor = try RSAFloor(one)
        let rsa = Measurement(name: "rsa-verify-floor/1/der", bytes: one.count, expected: 1) { floor.verify() ? 1 : 0 }
        // Each row against its yardstick, interleaved run by run (see `Harness.measurePair`).
        for (row, label) in [
            ((parse, walk), "parse 1000/der vs the C TLV walker (target ≤ 1.0)"),
            ((json, parse), "JSON 1000/der vs its parse (target ≤ 3)"),
            ((verify, rsa), "verify-warm vs rsa-verify-floor/1/der (target ≤ 1.25)"),
        ] {
            let (a, b, ratio) = try harness.measurePair(row.0, row.1)
            report.results.append(a)
            report.results.append(
                Result(
                    name: b.name + (b.name == "parse/1000/der" ? " (again, with JSON)" : ""), bytes: b.bytes,
                    nsPerOp: b.nsPerOp, runs: b.runs, spreadPercent: b.spreadPercent))
            report.ratios.append((label, ratio))
        }
        report.notes.append("each ratio: the median over the runs of (first ÷ second), the two timed one after the other in each run")
        let big = try pki.signer().sign(SyntheticReceipts.receipt(purchases: 10000), layout: .appStore)
        report.notes.append(try MemoryProbe.measure(big))
        return report
    }

    /// `--file PATH [--anchor CERT]`: the fixed measurement names outside scripts compare.
    func runFile(_ path: String) throws -> Report {
        guard let data = FileManager.default.contents(atPath: path) else { throw BenchmarkError(description: "\(path): cannot be read") }
        let input = [UInt8](data)
        if try SignedDataInput.detect(input) != nil { return try runJWSFile(input) }
        guard case .appReceipt(let bytes) = try ReceiptInput.detect(input) else {
            throw BenchmarkError(description: "\(path) is not an app receipt")
        }
        let parsed = try AppReceipt(bytes)
        var report = Report()
        let receipt = CorpusReceipt(
            name: "file", bytes: bytes, purchases: parsed.inAppPurchases.count,
            product: parsed.inAppPurchases.first?.productIdentifier ?? "none")
        try measureParsing(receipt, into: &report, baselines: true)
        // Fixed names for scripts: drop the "/file" suffix.
        report.results = report.results.map {
            Result(
                name: $0.name.replacingOccurrences(of: "/file", with: ""), bytes: $0.bytes, nsPerOp: $0.nsPerOp, runs: $0.runs,
                spreadPercent: $0.spreadPercent)
        }
        if parsed.inAppPurchases.isEmpty, let query = report.results.firstIndex(where: { $0.name == "query" }) {
            report.notes.append("the receipt has no in-app purchases; 'query' looked for a product that is not there")
            _ = query
        }
        if let anchorPath = options.anchor {
            guard let anchorData = FileManager.default.contents(atPath: anchorPath),
                let anchor = try Certificate.load([UInt8](anchorData)).first
            else { throw BenchmarkError(description: "\(anchorPath): not a certificate") }
            guard let created = parsed.creationDate else { throw BenchmarkError(description: "the receipt has no creation date") }
            try VerificationBench(name: "file", bytes: bytes, anchor: anchor, time: created, purchases: parsed.inAppPurchases.count)
                .measure(with: harness, into: &report, suffix: "")
            try ColdVerificationBench.measureReceipt(bytes, anchorBytes: [[UInt8](anchorData)], with: harness, into: &report)
        } else {
            // Without --anchor: the cold case against the bundled Apple roots, read from their bytes.
            let roots = try TrustAnchors.appleRoots.certificates.map(\.derEncoded)
            try ColdVerificationBench.measureReceipt(bytes, anchorBytes: roots, with: harness, into: &report)
        }
        report.ratio("parse vs openssl-rmstore-parse", "openssl-rmstore-parse", "parse")
        report.ratio("parse vs memcpy", "parse", "memcpy")
        return report
    }
}

extension Suite {
    /// `--file` with a JWS or notification body: `jws-verify-warm` and `es256-verify` on it,
    /// against `--anchor CERT` or the bundled Apple roots, at its signed date; then
    /// `jws-verify-cold` beside `jws-chain-floor` (the anchors parsed from their bytes per operation).
    func runJWSFile(_ bytes: [UInt8]) throws -> Report {
        let anchors: TrustAnchors
        let anchorBytes: [[UInt8]]
        if let anchorPath = options.anchor {
            guard let anchorData = FileManager.default.contents(atPath: anchorPath) else {
                throw BenchmarkError(description: "\(anchorPath): cannot be read")
            }
            anchors = TrustAnchors(try Certificate.load([UInt8](anchorData)))
            anchorBytes = [[UInt8](anchorData)]
        } else {
            anchors = try TrustAnchors.appleRoots
            anchorBytes = anchors.certificates.map(\.derEncoded)
        }
        var report = Report()
        try JWSVerifyBench(bytes: bytes, anchors: anchors).measure(with: harness, into: &report)
        try ColdVerificationBench.measureJWS(bytes, anchorBytes: anchorBytes, with: harness, into: &report)
        return report
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var total = 0
    func add(_ n: Int) {
        lock.lock()
        total += n
        lock.unlock()
    }
    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return total
    }
}
