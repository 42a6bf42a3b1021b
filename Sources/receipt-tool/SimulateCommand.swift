import Dispatch
import Foundation
import HTTPServer
import JSON
import ReceiptCrypto
import ReceiptSigning
import StoreTesting

/// `receipt-tool simulate`: a simulated App Store Server API on 127.0.0.1, with everything
/// `receipt-tool api` needs to call it written to a folder, so `api` can be tried offline.
enum SimulateCommand {
    static let subcommand = Subcommand(
        name: "simulate",
        summary: "Serve a simulated App Store Server API on 127.0.0.1 to try 'api' offline.",
        help: """
            USAGE: receipt-tool simulate [--port <n>] [--dir <folder>]

            OPTIONS:
              --port <n>          The port on 127.0.0.1 (default 0: a free one).
              --dir <folder>      Where to write the files below (created if missing; default: a
                                  new temporary folder, named on standard output).
              -h, --help          Show help information.

            Starts the simulated App Store Server API for the app com.example.app (sandbox) with
            a few simulated customers: alice (a monthly subscription that renewed twice, coins)
            and bob (a level, coins twice with the second refunded, a yearly subscription); a
            transaction id answers only its own customer's data. The ids are the same every run
            (alice's first is 2000000500822478). Everything it serves is signed with a test PKI
            made for this run, and it accepts bearer tokens signed with an API key made for this
            run. It writes into the folder:

              AuthKey_<kid>.p8    the API key (PKCS#8 PEM, as App Store Connect's .p8 files),
                                  for 'api --private-key'
              jws-root.der        the test PKI's root certificate, for 'api --anchor'
              simulate.json       baseURL, environment, bundleId, issuerId, keyId, privateKey,
                                  anchor, apiOptions (the options every 'api' call needs, in
                                  order) and customers (name, summary, transactionIds,
                                  transactions)

            prints the same, with a 'receipt-tool api history' line to paste in another terminal,
            and serves until SIGINT (Ctrl-C) or SIGTERM, then exits 0.
            """,
        run: run)

    static func run(_ arguments: [String]) throws -> Int32 {
        let args = try Arguments(arguments, valued: ["--port", "--dir"], flagNames: [])
        if let stray = args.positional.first { throw UsageError("simulate takes no arguments, found \(ManagementRequests.quoted(stray))") }
        var port: UInt16 = 0
        if let text = args.value("--port") {
            guard let value = UInt16(text) else { throw UsageError("--port must be 0-65535, found \(ManagementRequests.quoted(text))") }
            port = value
        }
        let directory = try folder(args.value("--dir"))
        return try MainActor.assumeIsolated { () throws -> Int32 in try serve(port: port, directory: directory) }
    }

    /// The folder to write into: `--dir` (created if missing) or a new temporary one.
    static func folder(_ option: String?) throws -> URL {
        if let option {
            guard !option.isEmpty, option.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else {
                throw UsageError("--dir must name a folder without control characters, found \(ManagementRequests.quoted(option))")
            }
        }
        let url =
            option.map { URL(fileURLWithPath: $0, isDirectory: true).standardizedFileURL }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("receipt-tool-simulate-\(UUID().uuidString.prefix(8))")
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw ToolFailure("cannot create the folder \(terminalQuoted(url.path)): \(error.localizedDescription)")
        }
        return url
    }

    @MainActor
    static func serve(port: UInt16, directory: URL) throws -> Int32 {
        let files = try SimulateFiles.write(into: directory)
        let clock = SimulatedClock()
        let issuer = JWSIssuer(pki: files.pki)
        let server = SimulatedAppStoreServer(
            configuration: .init(
                bundleIdentifier: SimulatedCustomers.bundleID, issuerID: SimulatedCustomers.issuerID, keyID: SimulatedCustomers.keyID,
                publicKey: files.publicKey, http: HTTPServerConfiguration(host: "127.0.0.1", port: port)),
            issuer: issuer, clock: clock)
        let customers = SimulatedCustomers.populate(server, issuer: issuer, clock: clock)
        // Signals are caught before the server starts, so a stop sent right after the banner
        // is never lost.
        let stop = DispatchSemaphore(value: 0)
        let signals = signalSources(signalling: stop)
        do {
            try server.start()
        } catch {
            throw ToolFailure("cannot listen on 127.0.0.1:\(port): \(error)")
        }
        let session = SimulateSession(baseURL: server.baseURL.absoluteString, files: files, customers: customers)
        do {
            try Data(session.json.jsonText(indent: 2).utf8).write(to: files.settings, options: .atomic)
        } catch {
            server.shutdown()
            throw ToolFailure("cannot write \(terminalQuoted(files.settings.path)): \(error.localizedDescription)")
        }
        printOut(session.banner)
        stop.wait()
        printError("simulate: stopping")
        server.shutdown()
        for source in signals { source.cancel() }
        return ExitStatus.success
    }
}

extension SimulateCommand {
    /// Catches SIGINT and SIGTERM (their default action off): each signals `stop`. Nonisolated,
    /// so the handlers run on a dispatch queue, not on the main actor that waits for them.
    nonisolated static func signalSources(signalling stop: DispatchSemaphore) -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.signal() }
            source.resume()
            return source
        }
    }
}

/// The files `simulate` writes: the API key, the JWS root and the settings.
struct SimulateFiles {
    let pki: TestPKI
    let publicKey: PublicKey
    let privateKey: URL
    let anchor: URL
    let settings: URL

    /// Generates the JWS test PKI and the API key, and writes the key (readable by its owner
    /// only) and the root certificate.
    static func write(into directory: URL) throws -> SimulateFiles {
        let pki: TestPKI
        let key: PrivateKey
        let pem: String
        do throws(CryptoError) {
            pki = try TestPKI.jws()
            key = try PrivateKey.generateP256()
            pem = try key.pemEncoded
        } catch {
            throw ToolFailure("cannot generate the keys: \(error)")
        }
        let privateKey = directory.appendingPathComponent("AuthKey_\(SimulatedCustomers.keyID).p8")
        let anchor = directory.appendingPathComponent("jws-root.der")
        try? FileManager.default.removeItem(at: privateKey)
        guard FileManager.default.createFile(atPath: privateKey.path, contents: Data(pem.utf8), attributes: [.posixPermissions: 0o600])
        else { throw ToolFailure("cannot write \(terminalQuoted(privateKey.path))") }
        do {
            try Data(pki.root.derEncoded).write(to: anchor, options: .atomic)
            return SimulateFiles(
                pki: pki, publicKey: try key.publicKey, privateKey: privateKey, anchor: anchor,
                settings: directory.appendingPathComponent("simulate.json"))
        } catch {
            throw ToolFailure("cannot write \(terminalQuoted(anchor.path)): \(error)")
        }
    }
}

/// What `simulate` tells its user, as JSON and as text.
struct SimulateSession {
    let baseURL: String
    let files: SimulateFiles
    let customers: [SimulatedCustomers.Customer]

    /// The options every `receipt-tool api` call against this server needs.
    var apiOptions: [String] {
        [
            "--issuer-id", SimulatedCustomers.issuerID, "--key-id", SimulatedCustomers.keyID, "--private-key", files.privateKey.path,
            "--bundle-id", SimulatedCustomers.bundleID, "--environment", "sandbox", "--base-url", baseURL, "--anchor", files.anchor.path,
        ]
    }

    var json: JSONValue {
        .object([
            ("baseURL", .string(baseURL)), ("environment", .string("sandbox")), ("bundleId", .string(SimulatedCustomers.bundleID)),
            ("issuerId", .string(SimulatedCustomers.issuerID)), ("keyId", .string(SimulatedCustomers.keyID)),
            ("privateKey", .string(files.privateKey.path)), ("anchor", .string(files.anchor.path)),
            ("apiOptions", .array(apiOptions.map { .string($0) })),
            (
                "customers",
                .array(
                    customers.map { customer in
                        .object([
                            ("name", .string(customer.name)), ("summary", .string(customer.summary)),
                            ("transactionIds", .array(customer.purchases.map { .string($0.transactionIdentifier) })),
                            ("transactions", .array(customer.purchases.map(Self.transaction))),
                        ])
                    })
            ),
        ])
    }

    static func transaction(_ purchase: ReceiptInAppPurchase) -> JSONValue {
        .object([
            ("transactionId", .string(purchase.transactionIdentifier)),
            ("originalTransactionId", .string(purchase.originalTransactionIdentifier)),
            ("productId", .string(purchase.productIdentifier)), ("refunded", .bool(purchase.cancellationDate != nil)),
        ])
    }

    /// The text printed once the server listens.
    var banner: String {
        var lines = [
            "receipt-tool simulate: App Store Server API on \(baseURL) (sandbox)",
            "  bundle id    \(SimulatedCustomers.bundleID)",
            "  issuer id    \(SimulatedCustomers.issuerID)",
            "  key id       \(SimulatedCustomers.keyID)",
            "  private key  \(files.privateKey.path)",
            "  anchor       \(files.anchor.path)",
            "  settings     \(files.settings.path)",
            "",
            "Customers (transaction id, original transaction id, product):",
        ]
        for customer in customers {
            lines.append("  \(customer.name): \(customer.summary)")
            for purchase in customer.purchases {
                let refunded = purchase.cancellationDate == nil ? "" : " (refunded)"
                lines.append(
                    "    \(purchase.transactionIdentifier)  \(purchase.originalTransactionIdentifier)  \(purchase.productIdentifier)\(refunded)"
                )
            }
        }
        let first = customers.first?.purchases.first?.transactionIdentifier ?? "<transaction-id>"
        lines += [
            "",
            "Try, in another terminal:",
            "  " + (["receipt-tool", "api", "history", first] + apiOptions).map(Self.shellQuoted).joined(separator: " "),
            "",
            "Serving until Ctrl-C (SIGINT) or SIGTERM.",
        ]
        return lines.joined(separator: "\n")
    }

    /// `word` as one shell word: as is when it holds only safe characters, else in single quotes.
    static func shellQuoted(_ word: String) -> String {
        let safe = word.unicodeScalars.allSatisfy {
            $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_./:=@%+,".unicodeScalars.contains($0))
        }
        if safe, !word.isEmpty { return word }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
