import Foundation
import HTTPServer
import ReceiptCrypto
import ReceiptServer
import ReceiptVerification
import Receipts
import VerifyReceipt

/// `receipt-tool serve`: a local stand-in for Apple's verifyReceipt endpoint that verifies offline.
enum ServeCommand {
    static let subcommand = Subcommand(
        name: "serve",
        summary: "Answer POST /verifyReceipt like Apple did, verifying receipts offline.",
        help: """
            USAGE: receipt-tool serve [--host <address>] [--port <n>] [--environment production|sandbox]
                                      [--anchor <anchor>]... [--itunes-ca <file>] [--wwdr-ca <file>] [--shared-secret <secret>]
                                      [--at creation|now|<date>] [--max-connections <n>]
                                      [--max-connections-per-client <n>] [--trusted-proxy <address>]...
                                      [--max-body-bytes <n>] [--request-timeout <seconds>] [--quiet]

            OPTIONS:
              --host <address>        Address to listen on (default 127.0.0.1; 0.0.0.0 for all).
              --port <n>              Port (default 8080; 0 picks a free one, printed at start).
              --environment <env>     Which Apple endpoint to stand in for: production (default)
                                      answers 21007 to sandbox receipts, sandbox answers 21008 to
                                      production receipts.
              --anchor <anchor>       A trust anchor (repeatable): 'apple' (the bundled Apple Inc.
                                      Root, G2 and G3), 'xcode' (the bundled StoreKit test
                                      certificate, with the Xcode policy) or a certificate file,
                                      DER or PEM. Default: apple. Transaction receipts chain to the
                                      same anchors.
              --itunes-ca <file>      The intermediate pinned for iOS 6 transaction receipts
                                      with version-2 signatures (default: the bundled Apple
                                      iTunes Store CA).
              --wwdr-ca <file>        The intermediate pinned for version-3 signatures (default:
                                      the bundled Apple WWDR CA of 2013).
              --shared-secret <s>     Require this "password" (21004 otherwise; subscriptions only
                                      when the request has none).
              --at <when>             Validation time of certificate chains: 'creation' (default:
                                      an app receipt's creation date, a transaction receipt's
                                      purchase date, as Apple's endpoint accepted receipts whose
                                      certificates have expired since), 'now', or an RFC 3339 date.
              --max-connections <n>   Connections served at once (default 128; more get 503).
              --max-connections-per-client <n>
                                      Of those, at most this many from one client address (an
                                      IPv4 address or an IPv6 /64); more from it get 503 while
                                      others are served. Default 32; 0 turns the cap off.
              --trusted-proxy <address>
                                      An address exempt from the per-client cap (repeatable): a
                                      reverse proxy or load balancer in front, which carries many
                                      clients' connections and should limit them itself.
              --max-body-bytes <n>    Largest request body (default 4194304; larger get 413).
              --request-timeout <s>   Seconds allowed per request (default 10; slower get 408).
              --quiet                 Do not log requests to standard error.
              -h, --help              Show help information.

            Routes: POST /verifyReceipt, GET /health. Stateless: run as many instances as needed
            behind any load balancer. SIGINT or SIGTERM stops it gracefully (requests in progress
            finish, then exit 0).
            """,
        run: run)

    static func run(_ arguments: [String]) throws -> Int32 {
        let args = try Arguments(
            arguments,
            valued: [
                "--host", "--port", "--environment", "--anchor", "--itunes-ca", "--wwdr-ca", "--shared-secret", "--at", "--max-connections",
                "--max-connections-per-client", "--trusted-proxy", "--max-body-bytes", "--request-timeout",
            ],
            flagNames: ["--quiet"])
        guard args.positional.isEmpty else { throw UsageError("serve takes no arguments, found \(args.positional[0])") }

        var configuration = HTTPServerConfiguration(host: args.value("--host") ?? "127.0.0.1", port: 8080)
        if let text = args.value("--port") {
            guard let port = UInt16(text) else { throw UsageError("--port must be 0-65535, found \(text)") }
            configuration.port = port
        }
        if let text = args.value("--max-connections") {
            guard let value = Int(text), value > 0, value <= 10_000 else { throw UsageError("--max-connections must be 1-10000") }
            configuration.maximumConnections = value
        }
        if let text = args.value("--max-connections-per-client") {
            guard let value = Int(text), value >= 0, value <= 10_000 else {
                throw UsageError("--max-connections-per-client must be 0-10000 (0: no cap)")
            }
            configuration.maximumConnectionsPerClient = value
        }
        for proxy in args.values("--trusted-proxy") {
            guard ClientAddress(literal: proxy) != nil else {
                throw UsageError("--trusted-proxy '\(proxy)' is not an IPv4 or IPv6 address")
            }
            configuration.trustedProxies.append(proxy)
        }
        if let text = args.value("--max-body-bytes") {
            guard let value = Int(text), value > 0, value <= 1 << 30 else { throw UsageError("--max-body-bytes must be 1-1073741824") }
            configuration.maximumBodySize = value
        }
        if let text = args.value("--request-timeout") {
            guard let value = Double(text), value > 0, value <= 3600 else { throw UsageError("--request-timeout must be 0-3600 seconds") }
            configuration.requestTimeout = .milliseconds(Int(value * 1000))
        }
        let environment: VerifyReceiptEnvironment
        switch args.value("--environment")?.lowercased() {
        case nil, "production": environment = .production
        case "sandbox": environment = .sandbox
        case let other?: throw UsageError("--environment must be production or sandbox, found \(other)")
        }
        let time: ValidationTime
        switch args.value("--at") {
        case nil, "creation": time = .signedDate
        case "now": time = .now
        case let text?:
            guard let date = (try? ReceiptDate.parse(text)) ?? nil else {
                throw UsageError("--at must be 'creation', 'now' or an RFC 3339 date, found \(text)")
            }
            time = .fixed(date)
        }
        let quiet = args.flag("--quiet")
        if !quiet { configuration.log = { printError("serve: \($0)") } }

        let anchorNames = args.values("--anchor").isEmpty ? ["apple"] : args.values("--anchor")
        let anchors = try VerifyCommand.loadAnchors(anchorNames)
        let policy: VerificationPolicy = anchorNames.allSatisfy { $0 == "xcode" } ? .xcode : .appStore
        let transactionVerifier = try transactionReceiptVerifier(args, anchors: anchors)
        let endpoint = VerifyReceiptEndpoint(
            configuration: .init(
                environment: environment, sharedSecret: args.value("--shared-secret"), appReceiptTime: time, transactionReceiptTime: time),
            appReceiptVerifier: AppReceiptVerifier(anchors: anchors, policy: policy),
            transactionReceiptVerifier: transactionVerifier)
        let server = HTTPServer(configuration: configuration, handler: LoggingEndpoint(endpoint: endpoint, quiet: quiet))
        do {
            try server.start()
        } catch {
            throw ToolFailure("cannot listen on \(configuration.host):\(configuration.port): \(error)")
        }
        let signals = server.stopOnSignals()
        printOut("receipt-tool serve: listening on http://\(configuration.host):\(server.port) (\(environment.rawValue.lowercased()))")
        server.waitUntilStopped()
        withExtendedLifetime(signals) {}
        return ExitStatus.success
    }
}

/// The endpoint, with one line per verifyReceipt request on standard error.
struct LoggingEndpoint: HTTPHandler {
    let endpoint: VerifyReceiptEndpoint
    let quiet: Bool

    func respond(to request: HTTPRequest) -> HTTPResponse {
        guard request.method == "POST", request.path == endpoint.configuration.path else {
            return endpoint.respond(to: request)
        }
        let answer = endpoint.verifyReceipt(body: request.body)
        if !quiet { printError("serve: POST \(request.path) → \(answer.status.rawValue): \(answer.reason)") }
        return .json(answer.body)
    }
}
