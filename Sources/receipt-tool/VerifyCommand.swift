import Dispatch
import Foundation
import Internals
import JSON
import ReceiptCrypto
import ReceiptVerification
import Receipts

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `receipt-tool verify`: verifies receipts and StoreKit 2 signed data (one, many, a directory, or
/// JSON lines on stdin) and prints every check.
enum VerifyCommand {
    static let subcommand = Subcommand(
        name: "verify",
        summary: "Verify receipts and StoreKit 2 signed data: signature, chain to a pinned anchor, policy and expectations.",
        help: """
            USAGE: receipt-tool verify <input>... [--bundle-id <id>] [--app-version <v>]
                                       [--device-id <uuid|mac>] [--environment <env> ...]
                                       [--anchor apple|xcode|<path> ...] [--policy appstore|xcode]
                                       [--product-id <id> ...] [--itunes-ca <path>] [--wwdr-ca <path>]
                                       [--app-apple-id <id>] [--max-age <seconds>]
                                       [--device-verification-id <uuid>]
                                       [--app-account-token <uuid>]
                                       [--at signed|now|<date>] [--kind <kind>]
                                       [--revocation off|ocsp|ocsp-soft] [--ocsp-response <file> ...]
                                       [--json] [--jobs <n>]

            ARGUMENTS:
              <input>       A receipt file (DER, BER, a legacy iOS 6 transaction receipt, base64
                            text of either, or a verifyReceipt request body), StoreKit 2 signed
                            data (a compact JWS: a transaction, renewal info, app transaction or
                            notification; or a notification body {"signedPayload": "<JWS>"}),
                            a directory (every file below it, in name order; entries that cannot
                            be read, such as dangling links, link loops or FIFOs, are reported as
                            unreadable), or '-' for JSON lines on standard input, one
                            {"receipt-data": "<base64>"} object, one {"signedPayload": "<JWS>"}
                            body or one bare JWS per line, read as they come. Receipts and signed
                            data may be mixed freely. Each input (each line) may have up to 64 MiB.

            OPTIONS:
              --bundle-id <id>        The bundle identifier the receipt or payload must name.
              --app-version <v>       Receipts: the app version the receipt must name.
              --device-id <id>        Receipts: the device the receipt hash must bind: a UUID
                                      (3B76A7BD-8F5B-46A4-BCB1-CCE8DBD1B3CD), a MAC address
                                      (f8:ff:c2:1e:91:82), or base64 of either.
              --environment <env>     Allowed environment: production, sandbox or xcode (repeatable;
                                      compared with a payload's Production, Sandbox or Xcode
                                      without regard to case).
              --anchor <anchor>       A trust anchor (repeatable; they add up): 'apple' (the bundled
                                      Apple Inc. Root, G2 and G3), 'xcode' (the bundled StoreKit
                                      test certificate of Xcode receipts) or a certificate file,
                                      DER or PEM. An unreadable anchor is an error. Default: apple.
              --policy <policy>       appstore (chain of 3 with Apple's marker extensions; for
                                      signed data an x5c of exactly 3) or xcode (the signer is the
                                      anchor; an Xcode JWS carries its own self-signed certificate,
                                      trusted only when given as --anchor <path>). Default: xcode
                                      when every anchor is 'xcode', appstore otherwise.
              --at <time>             When the chain must be valid: 'signed' (the default; also
                                      'creation': the input's own signed date: a receipt's creation
                                      date, a transaction receipt's purchase date, a JWS's
                                      signedDate, an app transaction's receiptCreationDate), 'now',
                                      or a date (2026-11-29, 2026-11-29T12:00:00Z).
              --product-id <id>       Transaction receipts: an allowed product-id (repeatable).
              --itunes-ca <path>      Transaction receipts with version-2 signatures: the
                                      intermediate to pin instead of the bundled Apple iTunes
                                      Store CA. They chain through it to the anchors (the bundled
                                      Apple Inc. Root by default); --bundle-id and --app-version
                                      check their bid and bvrs.
              --wwdr-ca <path>        Transaction receipts with version-3 signatures: the
                                      intermediate to pin instead of the bundled Apple WWDR CA
                                      (2013).
              --app-apple-id <id>     Signed data: the app's Apple id (checked on production
                                      payloads only, as Apple does).
              --max-age <seconds>     Signed data: the most seconds the signed date may lie before
                                      now (the clock, whatever --at says; check maximumAge).
              --device-verification-id <uuid>
                                      Signed data: the device's verification id (any case) the
                                      payload's deviceVerification must be bound to.
              --app-account-token <uuid>
                                      Signed data: the appAccountToken the payload must carry.
              --kind <kind>           What every input must be: receipt, transaction-receipt,
                                      transaction, renewal, app-transaction or notification. An
                                      input of another kind fails the check 'kind'. Without it
                                      the kind is detected (a payload of no known kind, such as
                                      a renewal info with only environment and signedDate, needs
                                      --kind).
            \(RevocationOption.help)
              --json                  One JSON object per input, one per line; the summary goes
                                      to standard error.
              --jobs <n>              Inputs verified at once (default: the number of cores).
              -h, --help              Show help information.

              An expectation option that does not apply to an input's kind (--app-version on
              a JWS, --app-account-token on a receipt) makes that input fail the check
              notApplicable, which names the option.

            EXIT STATUS:
              0 when every input is valid, 1 when any is invalid or unreadable (or an anchor
              cannot be loaded), 64 for a usage error. A progress bar is drawn on standard error
              when it is a terminal.
            """,
        run: run)

    static func run(_ arguments: [String]) throws -> Int32 {
        let args = try Arguments(
            arguments,
            valued: [
                "--bundle-id", "--app-version", "--device-id", "--environment", "--anchor", "--policy", "--at", "--jobs",
                "--product-id", "--itunes-ca", "--wwdr-ca", "--app-apple-id", "--max-age", "--device-verification-id",
                "--app-account-token", "--kind", "--revocation", "--ocsp-response",
            ],
            flagNames: ["--json"])
        guard !args.positional.isEmpty else { throw UsageError("missing <input>") }
        guard args.positional.filter({ $0 == "-" }).count <= 1 else { throw UsageError("'-' may be given once") }

        var settings = try VerificationSettings(options: args)
        var expectations = ReceiptExpectations()
        expectations.bundleIdentifier = args.value("--bundle-id")
        expectations.appVersion = args.value("--app-version")
        if let text = args.value("--device-id") {
            guard let device = parseDevice(text) else {
                throw UsageError("--device-id '\(text)' is neither a UUID, a MAC address, nor base64 of 16 or 6 bytes")
            }
            expectations.deviceIdentifier = device
        }
        if let allowed = try args.environments(production: ReceiptEnvironment.production, sandbox: .sandbox, xcode: .xcode) {
            expectations.allowedEnvironments = allowed
        }
        settings.receiptExpectations = expectations
        let products = args.values("--product-id")
        settings.transactionReceiptExpectations = TransactionReceiptExpectations(
            bundleIdentifier: expectations.bundleIdentifier, bundleVersion: expectations.appVersion,
            productIdentifiers: products.isEmpty ? nil : Set(products), allowedEnvironments: expectations.allowedEnvironments)
        settings.jwsExpectations = try SignedDataVerification.expectations(args)
        var jobs = ProcessInfo.processInfo.activeProcessorCount
        if let text = args.value("--jobs") {
            guard let value = Int(text), value >= 1, value <= 1024 else {
                throw UsageError("--jobs '\(text)' is not a number from 1 to 1024")
            }
            jobs = value
        }
        let verifiers = try Verifiers(settings: settings, arguments: args)

        let inputs = collectInputs(args.positional)
        let json = args.flag("--json")
        let summary = Batch(inputs: inputs, jobs: jobs).run { item in
            Self.verify(item, verifiers, json: json)
        }
        guard summary.total > 0 else { throw ToolFailure("no inputs found in \(args.positional.joined(separator: " "))") }
        // "receipts" when every input was a receipt, "inputs" once signed data is among them.
        let noun = summary.signedData == 0 ? "receipt" : "input"
        let line =
            "\(summary.total) \(noun)\(summary.total == 1 ? "" : "s"): \(summary.valid) valid, \(summary.invalid) invalid, \(summary.unreadable) unreadable"
        if json { printError(line) } else { printOut(line) }
        return summary.valid == summary.total ? ExitStatus.success : ExitStatus.failure
    }

    // MARK: Options

    static func parseDevice(_ text: String) -> DeviceIdentifier? {
        if let device = DeviceIdentifier(text) { return device }
        guard let bytes = try? Base64.decode(Array(text.utf8)), bytes.count == 16 || bytes.count == 6 else { return nil }
        return DeviceIdentifier(bytes: bytes)
    }

    // MARK: Inputs

    /// One receipt to verify.
    struct Item: Sendable {
        enum Source: Sendable {
            /// A file to read when its turn comes; `regularFileOnly` for directory entries (a FIFO
            /// or device found in a directory is not opened).
            case file(FileBytes.Path, regularFileOnly: Bool)
            case bytes([UInt8])
            case unreadable(String)
        }

        let label: String
        let source: Source
    }

    /// The inputs in command-line order: receipts known up front (files, directory entries), and
    /// standard input, whose JSON lines are read one at a time while the batch runs.
    enum Input: Sendable {
        case items([Item])
        case standardInput
    }

    /// The inputs named on the command line. Every path yields at least one item: a file, the
    /// entries of a directory (those that cannot be read as unreadable items, with the reason), or
    /// an unreadable item (no such file, a symbolic link loop, …). Paths are used as bytes, so names
    /// that are not UTF-8 work; labels show them escaped.
    static func collectInputs(_ arguments: [String]) -> [Input] {
        var inputs: [Input] = []
        for argument in arguments {
            if argument == "-" {
                inputs.append(.standardInput)
                continue
            }
            let path = CommandLineBytes.path(argument)
            switch FileBytes.kind(of: path) {
            case .unreadable(let failure):
                inputs.append(.items([Item(label: argument, source: .unreadable(failure.reason(limit: inputLimit)))]))
            case .readable:
                inputs.append(.items([Item(label: argument, source: .file(path, regularFileOnly: false))]))
            case .directory:
                do throws(FileBytes.Failure) {
                    let entries = try FileBytes.walk(path)
                    // Labels: the argument as given, then the names below it, escaped.
                    let prefix = path.bytes.count
                    inputs.append(
                        .items(
                            entries.map { entry in
                                let label = argument + FileBytes.escaped(Array(entry.path.bytes.dropFirst(prefix)))
                                if let problem = entry.problem { return Item(label: label, source: .unreadable(problem)) }
                                return Item(label: label, source: .file(entry.path, regularFileOnly: true))
                            }))
                } catch {
                    inputs.append(
                        .items([Item(label: argument, source: .unreadable("cannot list the directory: \(error.reason(limit: 0))"))]))
                }
            }
        }
        return inputs
    }

    // MARK: One receipt

    enum Status: String, Sendable {
        case valid, invalid, unreadable
    }

    struct Outcome: Sendable {
        let status: Status
        let output: String
        /// Whether the input was StoreKit 2 signed data rather than a receipt.
        var signedData = false
    }

    /// The verifiers of every input kind, made once from the command's settings.
    struct Verifiers: Sendable {
        let settings: VerificationSettings
        let appReceipts: AppReceiptVerifier
        let legacy: LegacyVerification
        let signedData: SignedDataVerification

        init(settings: VerificationSettings, arguments: Arguments) throws {
            self.settings = settings
            appReceipts = settings.appReceiptVerifier()
            legacy = try LegacyVerification(settings: settings, arguments: arguments)
            signedData = try SignedDataVerification(settings: settings, arguments: arguments)
        }

        /// Detects what `bytes` are, once, and verifies them by that format (or by `--kind`).
        func verify(_ label: String, _ raw: [UInt8], json: Bool) -> Outcome {
            let time = settings.validationTime
            let forced = signedData.forcedKind
            let (bytes, reading) = InputReading.read(raw)
            let detected: SignedInput
            switch reading {
            case .success(let value): detected = value
            case .failure(let error):
                // Shaped like signed data but malformed: the JWS parse check says why.
                if error.code == .malformedSignedData { return signedData.malformed(label, bytes, time: time, json: json) }
                if let forced, forced.payloadKind != nil {
                    return forced.mismatch(label, found: "neither a receipt nor signed data", json: json)
                }
                // The receipt verifier's parse check says what was tried.
                if forced == .transactionReceipt { return legacy.verify(label, bytes, time: time, json: json) }
                return appReceipt(label, bytes, json: json)
            }
            // A receipt where signed data was asked for, or the reverse, or the other receipt
            // format. (A JWS of another kind goes to the kind asked for, whose check says so.)
            if let forced, let family = ForcedKind.family(of: detected), forced != family,
                forced.payloadKind == nil || family.payloadKind == nil
            {
                return forced.mismatch(label, found: detected.described, json: json)
            }
            switch detected {
            case .signedData(let input, let kind): return signedData.verify(label, input, kind: kind, time: time, json: json)
            case .transactionReceipt(let text): return legacy.verify(label, text, time: time, json: json)
            case .appReceipt(let der): return appReceipt(label, der, json: json)
            }
        }

        func appReceipt(_ label: String, _ bytes: [UInt8], json: Bool) -> Outcome {
            let verdict = legacy.options.refusing(
                appReceipts.verify(bytes, expecting: settings.receiptExpectations, at: settings.validationTime), as: .appReceipt)
            let status: Status = verdict.isValid ? .valid : (verdict.receipt == nil ? .unreadable : .invalid)
            return Outcome(status: status, output: json ? jsonLine(label, status, verdict) : text(label, status, verdict))
        }
    }

    static func verify(_ item: Item, _ verifiers: Verifiers, json: Bool) -> Outcome {
        let bytes: [UInt8]
        switch item.source {
        case .unreadable(let reason):
            return unreadable(item.label, reason, json: json)
        case .bytes(let value):
            bytes = value
        case .file(let path, let regularFileOnly):
            do throws(FileBytes.Failure) {
                bytes = try FileBytes.read(path, maximumSize: inputLimit, regularFilesOnly: regularFileOnly)
            } catch {
                return unreadable(item.label, error.reason(limit: inputLimit), json: json)
            }
        }
        return verifiers.verify(item.label, bytes, json: json)
    }

    static func unreadable(_ label: String, _ reason: String, json: Bool) -> Outcome {
        if json {
            var writer = JSONWriter(indent: 0)
            writer.beginObject()
            writer.string("input", label)
            writer.string("status", Status.unreadable.rawValue)
            writer.bool("valid", false)
            writer.string("error", reason)
            writer.endObject()
            return Outcome(status: .unreadable, output: writer.text)
        }
        return Outcome(status: .unreadable, output: "\(label): UNREADABLE (\(reason))")
    }

    static func text(_ label: String, _ status: Status, _ verdict: Verdict<AppReceipt>) -> String {
        VerdictReport.text(label, status, verdict)
    }

    static func jsonLine(_ label: String, _ status: Status, _ verdict: Verdict<AppReceipt>) -> String {
        VerdictReport.json(label, status, verdict, kind: "app_receipt") { writer in
            if let receipt = verdict.receipt {
                if let bundle = receipt.bundleIdentifier { writer.string("bundle_id", bundle) }
                if let version = receipt.appVersion { writer.string("application_version", version) }
                if let type = receipt.receiptType { writer.string("receipt_type", type) }
                if let created = receipt.creationDate { writer.string("receipt_creation_date", ReceiptDate.rfc3339(created)) }
            }
        }
    }
}

/// How `verify` prints a verdict of any format: one text layout and one JSON object shape.
enum VerdictReport {
    /// `label: STATUS (detail) (validated at …)`, one line per check, then what was not checked.
    static func text<Payload>(_ label: String, _ status: VerifyCommand.Status, _ verdict: Verdict<Payload>, detail: String? = nil)
        -> String
    {
        var heading = "\(label): \(status.rawValue.uppercased())"
        if let detail { heading += " (\(detail))" }
        if let time = verdict.validationTime { heading += " (validated at \(ReceiptDate.rfc3339(time)))" }
        var lines = [heading]
        for check in verdict.checks {
            // Names pad to 20 columns; longer ones (signedAppTransactionInfo) are never cut.
            let name = check.name.rawValue
            let padded = name.count >= 20 ? name : name.padding(toLength: 20, withPad: " ", startingAt: 0)
            lines.append("  \(check.passed ? "✓" : "✗") \(padded) \(check.reason)")
        }
        if !verdict.unchecked.isEmpty, verdict.payload != nil {
            lines.append("  · not checked: " + verdict.unchecked.map(\.rawValue).joined(separator: ", "))
        }
        return lines.joined(separator: "\n")
    }

    /// One JSON object: `input`, `kind`, `status`, `valid`, `assurance` (when valid),
    /// `validation_time`, the payload's identifying fields (written by `fields`), then `checks`
    /// (`name`, `passed`, `reason`), `unchecked` and `chain`.
    static func json<Payload>(
        _ label: String, _ status: VerifyCommand.Status, _ verdict: Verdict<Payload>, kind: String, fields: (inout JSONWriter) -> Void
    ) -> String {
        var writer = JSONWriter(indent: 0)
        writer.beginObject()
        writer.string("input", label)
        writer.string("kind", kind)
        writer.string("status", status.rawValue)
        writer.bool("valid", verdict.isValid)
        if let assurance = verdict.assurance { writer.string("assurance", assurance.rawValue) }
        if let time = verdict.validationTime { writer.string("validation_time", ReceiptDate.rfc3339(time)) }
        fields(&writer)
        writer.beginArray("checks")
        for check in verdict.checks {
            writer.beginObject()
            writer.string("name", check.name.rawValue)
            writer.bool("passed", check.passed)
            writer.string("reason", check.reason)
            if let report = check.revocationReport { RevocationOption.write(report, into: &writer) }
            writer.endObject()
        }
        writer.endArray()
        writer.beginArray("unchecked")
        for name in verdict.unchecked { writer.string(name.rawValue) }
        writer.endArray()
        if let chain = verdict.chain {
            writer.beginArray("chain")
            for certificate in chain { writer.string("\(certificate.subject)") }
            writer.endArray()
        }
        writer.endObject()
        return writer.text
    }
}

/// Whitespace as the receipt input detector sees it.
enum ReceiptInputSpace {
    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) }
}

/// A concurrent work queue over the inputs: `jobs` workers take the next item, results are printed
/// in input order as soon as every earlier one is done, and a progress bar is drawn on standard
/// error when it is a terminal. Standard input is read one line at a time as workers ask for the
/// next item, so its length does not bound memory (each line is at most `inputLimit` bytes).
struct Batch: Sendable {
    struct Summary: Sendable {
        var total = 0
        var valid = 0
        var invalid = 0
        var unreadable = 0
        /// How many of the inputs were StoreKit 2 signed data.
        var signedData = 0
    }

    let inputs: [VerifyCommand.Input]
    let jobs: Int

    /// Hands out the items in order, reading standard input lazily.
    private final class Source: Sendable {
        struct State: ~Copyable {
            var inputIndex = 0
            var itemIndex = 0
            var nextNumber = 0
            var lines: FileBytes.LineReader?
            var standardInputOpened = false
        }

        let inputs: [VerifyCommand.Input]
        let state = Locked(State())

        init(_ inputs: [VerifyCommand.Input]) { self.inputs = inputs }

        /// The number of items when it is known up front (no standard input).
        var knownCount: Int? {
            var count = 0
            for input in inputs {
                guard case .items(let items) = input else { return nil }
                count += items.count
            }
            return count
        }

        /// The next item and its position in the output, or `nil` when every input is done.
        func next() -> (Int, VerifyCommand.Item)? {
            state.withLock { state -> (Int, VerifyCommand.Item)? in
                while state.inputIndex < inputs.count {
                    switch inputs[state.inputIndex] {
                    case .items(let items):
                        if state.itemIndex < items.count {
                            state.itemIndex += 1
                            state.nextNumber += 1
                            return (state.nextNumber - 1, items[state.itemIndex - 1])
                        }
                    case .standardInput:
                        if !state.standardInputOpened {
                            state.standardInputOpened = true
                            state.lines = FileBytes.LineReader(fileDescriptor: STDIN_FILENO, maximumLineLength: inputLimit)
                        }
                        if let item = Self.nextLine(&state.lines) {
                            state.nextNumber += 1
                            return (state.nextNumber - 1, item)
                        }
                    }
                    state.inputIndex += 1
                    state.itemIndex = 0
                }
                return nil
            }
        }

        /// The next non-blank line of standard input as an item; an unreadable item (and the end
        /// of standard input) for a line over the limit or a read error.
        static func nextLine(_ reader: inout FileBytes.LineReader?) -> VerifyCommand.Item? {
            // Moved out (not copied), so that its buffer is not copied on write.
            guard var lines = reader.take() else { return nil }
            while true {
                do throws(FileBytes.Failure) {
                    guard let line = try lines.next() else { return nil }
                    guard line.contains(where: { !ReceiptInputSpace.isSpace($0) }) else { continue }
                    reader = lines
                    return VerifyCommand.Item(label: "stdin:\(lines.lineNumber)", source: .bytes(line))
                } catch {
                    let rest = "the rest of standard input is not read"
                    let reason =
                        error == .tooLarge
                        ? "input too large (a line longer than \(FileBytes.describeSize(inputLimit)); \(rest))"
                        : "standard input: \(error.reason(limit: inputLimit)); \(rest)"
                    return VerifyCommand.Item(label: "stdin:\(lines.lineNumber + 1)", source: .unreadable(reason))
                }
            }
        }
    }

    private final class Shared: Sendable {
        struct State: Sendable {
            var pending: [Int: VerifyCommand.Outcome] = [:]
            var nextToPrint = 0
            var done = 0
            var summary = Summary()
        }

        let state = Locked(State())
    }

    func run(_ work: @escaping @Sendable (VerifyCommand.Item) -> VerifyCommand.Outcome) -> Summary {
        let shared = Shared()
        let source = Source(inputs)
        let total = source.knownCount
        let progress = (total ?? 2) > 1 && isatty(STDERR_FILENO) == 1
        let group = DispatchGroup()
        for _ in 0..<max(1, min(jobs, total ?? jobs)) {
            DispatchQueue.global().async(group: group) {
                while let (index, item) = source.next() {
                    let outcome = work(item)
                    shared.state.withLock { state in
                        state.pending[index] = outcome
                        state.done += 1
                        state.summary.total += 1
                        if outcome.signedData { state.summary.signedData += 1 }
                        switch outcome.status {
                        case .valid: state.summary.valid += 1
                        case .invalid: state.summary.invalid += 1
                        case .unreadable: state.summary.unreadable += 1
                        }
                        var text: [String] = []
                        while let ready = state.pending.removeValue(forKey: state.nextToPrint) {
                            text.append(ready.output)
                            state.nextToPrint += 1
                        }
                        if progress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
                        if !text.isEmpty { printOut(text.joined(separator: "\n")) }
                        if progress { FileHandle.standardError.write(Data(Batch.bar(state.done, of: total).utf8)) }
                    }
                }
            }
        }
        group.wait()
        if progress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        return shared.state.withLock { $0.summary }
    }

    /// `[#####     ] 5/10`, or `5 done` when the total is not known (standard input).
    static func bar(_ done: Int, of total: Int?) -> String {
        guard let total else { return "\r\(done) done" }
        let width = 30
        let filled = total > 0 ? min(width, done * width / total) : width
        return "\r[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "] \(done)/\(total)"
    }
}
