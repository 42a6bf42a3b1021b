import Foundation
import JWS
import ReceiptCrypto
import ReceiptSigning
import ReceiptVerification
import Receipts

#if canImport(Glibc)
    import Glibc
#endif

// Benchmarks: the receipt parser and verifier against RMStore's OpenSSL way and the floors of the
// work (memcpy, one RSA verify plus one digest), side by side in one run on the same bytes.
//
//   swift run -c release Benchmarks [-r RUNS] [-t SECONDS] [--json] [--quick]
//   swift run -c release Benchmarks --file PATH [--anchor CERT] [--json]

struct Options {
    var runs = 5
    var seconds = 0.4
    var json = false
    var quick = false
    var targets = false
    var jws = false
    var ocsp = false
    var file: String?
    var anchor: String?
    var memoryProbe: String?
    var repeatParse: (String, Int)?
    var repeatJSON: (String, Int)?
    var repeatWalk: (String, Int)?
    var repeatFloor: (String, Int)?
    var writeCorpus: String?
    var repeatJWS: (String, Int, Bool)?
    var repeatVerify: (String, String, Int)?
    var repeatJWSVerify: (String, Int)?
    var repeatES256: (String, Int)?
    var repeatCold: (String, Int)?
    var repeatFloorChain: (String, Int)?
    var notifications: (store: String, senders: Int, count: Int)?
    var entitlementQueries: (rows: Int, queries: Int)?
    var database: String?
    var storedBytes: Int?

    init(_ arguments: [String]) throws {
        var i = 0
        func value() throws -> String {
            i += 1
            guard i < arguments.count else { throw BenchmarkError(description: "\(arguments[i - 1]) needs a value") }
            return arguments[i]
        }
        while i < arguments.count {
            switch arguments[i] {
            case "-r", "--runs":
                guard let n = Int(try value()), n > 0 else { throw BenchmarkError(description: "-r needs a positive integer") }
                runs = n
            case "-t", "--seconds":
                guard let s = Double(try value()), s > 0 else { throw BenchmarkError(description: "-t needs a positive number") }
                seconds = s
            case "--json": json = true
            case "--quick": quick = true
            case "--targets": targets = true
            case "--jws": jws = true
            case "--ocsp": ocsp = true
            case "--file": file = try value()
            case "--anchor": anchor = try value()
            case "--memory-probe": memoryProbe = try value()
            case "--notifications":
                let store = try value()
                guard let senders = Int(try value()), senders > 0, let count = Int(try value()), count > 0 else {
                    throw BenchmarkError(description: "--notifications sqlite|postgres SENDERS COUNT")
                }
                notifications = (store, senders, count)
            case "--entitlement-queries":
                guard let rows = Int(try value()), rows > 0 else {
                    throw BenchmarkError(description: "--entitlement-queries ROWS [QUERIES]")
                }
                var queries = 20_000
                if i + 1 < arguments.count, let count = Int(arguments[i + 1]), count > 0 {
                    queries = count
                    i += 1
                }
                entitlementQueries = (rows, queries)
            case "--db": database = try value()
            case "--stored-bytes": storedBytes = 1_000
            case "--repeat-verify":
                // For instruction counting: warm-verify FILE against ANCHOR at its creation date N times.
                let path = try value()
                let anchor = try value()
                guard let n = Int(try value()) else { throw BenchmarkError(description: "--repeat-verify FILE ANCHOR N") }
                repeatVerify = (path, anchor, n)
            case "--repeat-jws", "--repeat-jws-cached":
                // For instruction and allocation counting: decode the JWS transaction in FILE N
                // times (with a header cache for the -cached form).
                let cached = arguments[i] == "--repeat-jws-cached"
                let path = try value()
                guard let n = Int(try value()) else { throw BenchmarkError(description: "--repeat-jws FILE N") }
                repeatJWS = (path, n, cached)
            case "--repeat-jws-verify":
                // For instruction counting: warm-verify the JWS in FILE N times (jws-verify-warm:
                // the shared chain cache and a header cache, at its signed date) against the
                // bundled Apple roots, or --anchor CERT.
                let path = try value()
                guard let n = Int(try value()) else { throw BenchmarkError(description: "--repeat-jws-verify FILE N") }
                repeatJWSVerify = (path, n)
            case "--repeat-cold":
                // For instruction counting: cold-verify the receipt or JWS in FILE N times
                // (receipt-verify-cold / jws-verify-cold; --anchor CERT, needed for a receipt).
                let path = try value()
                guard let n = Int(try value()) else { throw BenchmarkError(description: "--repeat-cold FILE N") }
                repeatCold = (path, n)
            case "--repeat-chain-floor":
                // The C floor of --repeat-cold (receipt-chain-floor / jws-chain-floor), N times.
                let path = try value()
                guard let n = Int(try value()) else { throw BenchmarkError(description: "--repeat-chain-floor FILE N") }
                repeatFloorChain = (path, n)
            case "--repeat-es256":
                // The yardstick of --repeat-jws-verify: es256-verify on the JWS in FILE N times.
                let path = try value()
                guard let n = Int(try value()) else { throw BenchmarkError(description: "--repeat-es256 FILE N") }
                repeatES256 = (path, n)
            case "--repeat-parse":
                // For instruction counting under valgrind: parse FILE N times and exit.
                let path = try value()
                guard let n = Int(try value()) else { throw BenchmarkError(description: "--repeat-parse FILE N") }
                repeatParse = (path, n)
            case "--repeat-json":
                // For instruction counting: parse FILE once, then write its verifyReceipt JSON N times.
                let path = try value()
                guard let n = Int(try value()) else { throw BenchmarkError(description: "--repeat-json FILE N") }
                repeatJSON = (path, n)
            case "--repeat-walk":
                // For instruction counting: the C TLV walker over FILE, N times.
                let path = try value()
                guard let n = Int(try value()) else { throw BenchmarkError(description: "--repeat-walk FILE N") }
                repeatWalk = (path, n)
            case "--repeat-floor":
                // For instruction counting: the RSA floor of FILE (its signer's key parsed once), N times.
                let path = try value()
                guard let n = Int(try value()) else { throw BenchmarkError(description: "--repeat-floor FILE N") }
                repeatFloor = (path, n)
            case "--write-corpus":
                writeCorpus = try value()
            case "-h", "--help":
                print(
                    """
                    USAGE: Benchmarks [-r RUNS] [-t SECONDS] [--json] [--quick]
                           Benchmarks --file PATH [--anchor CERT] [-r RUNS] [-t SECONDS] [--json]

                    -r RUNS       timed runs per measurement (default 5); the median is reported
                    -t SECONDS    time per measurement, split over the runs (default 0.4)
                    --json        one JSON line per measurement instead of the table
                    --quick       only the 1,000-purchase receipt and the real receipts' totals
                    --targets     issue 16's four rows with their yardsticks: parse vs the C TLV walker,
                                  JSON vs parse, warm verify vs the RSA floor, peak memory of 10,000
                    --jws         only the JWS measurements (jws-decode, es256-verify, jws-verify-warm)
                    --ocsp        warm JWS verification with cached OCSP answers against the same without
                                  revocation (jws-verify-warm-ocsp / jws-verify-warm-same-pki; needs openssl)
                    --file PATH   benchmark one receipt (--anchor adds verification against CERT,
                                  and receipt-verify-cold beside receipt-chain-floor), or one JWS or
                                  notification body: jws-verify-warm and es256-verify, then
                                  jws-verify-cold beside jws-chain-floor, against the bundled Apple
                                  roots (or --anchor CERT)

                    For callgrind (each exits after the loop and prints a checksum):
                    --repeat-parse FILE N          parse FILE N times
                    --repeat-json FILE N           parse FILE once, write its JSON (compact) N times
                    --repeat-walk FILE N           the C TLV walker over FILE N times
                    --repeat-verify FILE ANCHOR N  warm-verify FILE against ANCHOR N times
                    --repeat-floor FILE N          one RSA verify with its digest of FILE's payload, N times
                    --repeat-jws FILE N            split and decode the JWS in FILE N times
                    --repeat-jws-verify FILE N     warm-verify the JWS in FILE N times
                    --repeat-es256 FILE N          one bare ES256 verify of the JWS in FILE, N times
                    --repeat-cold FILE N           cold-verify the receipt or JWS in FILE N times (--anchor CERT)
                    --repeat-chain-floor FILE N    its C chain floor, N times (--anchor CERT)
                    --write-corpus DIR             write 1.der, 1000.der, 10000.der and root.der to DIR
                    --entitlement-queries ROWS [QUERIES]
                                  entitlement queries per second by app account token on a
                                  PostgreSQL store of ROWS notifications (its own cluster)
                    --notifications sqlite|postgres SENDERS COUNT [--db DIRECTORY|URL]
                                  acknowledged notifications per second through the receiver and
                                  the store, commits (SQLite) or WAL syncs (PostgreSQL) per
                                  notification (scripts/notifications-bench.sh adds fsync counts)
                    --stored-bytes [--db DIRECTORY]
                                  notification-stored-bytes: bytes per stored real notification (its
                                  row's payload bytes and its share of the certificate rows, and the
                                  SQLite file's bytes per notification), 1,000 stored
                    """)
                exit(0)
            default:
                throw BenchmarkError(description: "unknown argument \(arguments[i])")
            }
            i += 1
        }
    }
}

let options: Options
do {
    options = try Options(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
    exit(64)
}

if let (path, count) = options.repeatParse {
    let bytes = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
    var total = 0
    for _ in 0..<count { total &+= (try? AppReceipt(bytes).inAppPurchases.count) ?? -1 }
    print(total)
    exit(0)
}

if let (path, count) = options.repeatJSON {
    let bytes = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
    guard let receipt = try? AppReceipt(bytes) else { exit(1) }
    var total = 0
    for _ in 0..<count { total &+= receipt.jsonText(indent: 0).utf8.count }
    print(total)
    exit(0)
}

if let (path, count) = options.repeatWalk {
    let bytes = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
    var total = 0
    for _ in 0..<count { total &+= CYardstick.walk(bytes) }
    print(total)
    exit(0)
}

if let (path, count) = options.repeatFloor {
    let bytes = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
    guard let floor = try? RSAFloor(bytes) else { exit(1) }
    var total = 0
    for _ in 0..<count where floor.verify() { total += 1 }
    print(total)
    exit(0)
}

if let directory = options.writeCorpus {
    do {
        try Corpus.write(to: directory)
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
        exit(1)
    }
}

if let (path, count, cached) = options.repeatJWS {
    let bytes = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
    let cache = cached ? JWSHeaderCache() : nil
    var total = 0
    for _ in 0..<count {
        total &+= (try? CompactJWS(bytes, headerCache: cache).decodePayloadToVerify(as: JWSTransaction.self).quantity ?? 0) ?? -1
    }
    print(total)
    exit(0)
}

if let (path, anchorPath, count) = options.repeatVerify {
    let bytes = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
    let anchor = try Certificate.load([UInt8](FileManager.default.contents(atPath: anchorPath) ?? Data()))
    let verifier = AppReceiptVerifier(anchors: anchor, policy: .appStore, cache: ChainCache())
    var valid = 0
    for _ in 0..<count where verifier.verify(bytes).isValid { valid += 1 }
    print(valid)
    exit(0)
}

if let (path, count) = options.repeatJWSVerify {
    let bytes = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
    let anchors =
        try options.anchor.map { TrustAnchors(try Certificate.load([UInt8](FileManager.default.contents(atPath: $0) ?? Data()))) }
        ?? TrustAnchors.appleRoots
    let bench = try JWSVerifyBench(bytes: bytes, anchors: anchors)
    var valid = 0
    for _ in 0..<count where bench.verify(bytes) { valid += 1 }
    print(valid)
    exit(0)
}

if let (path, count) = options.repeatES256 {
    let bytes = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
    guard let jws = try SignedDataInput.detect(bytes)?.jws, let leaf = jws.header.certificateChain?.first else { exit(1) }
    let key = try Certificate(derEncoded: leaf).publicKey
    let signature = JWSDecodeBench.derSignature(jws.signature)
    let input = Array(jws.signingInput)
    var valid = 0
    for _ in 0..<count where key.verify(signature: signature, over: input, digest: .sha256) { valid += 1 }
    print(valid)
    exit(0)
}

if let (path, count) = options.repeatCold ?? options.repeatFloorChain {
    let bytes = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
    let anchorBytes =
        try options.anchor.map { [[UInt8](FileManager.default.contents(atPath: $0) ?? Data())] }
        ?? TrustAnchors.appleRoots.certificates.map(\.derEncoded)
    let operation = try ColdVerificationBench.operation(bytes, anchorBytes: anchorBytes, floor: options.repeatFloorChain != nil)
    var valid = 0
    for _ in 0..<count where operation() == 1 { valid += 1 }
    print(valid)
    exit(0)
}

if let (rows, queries) = options.entitlementQueries {
    do {
        try EntitlementQueriesBenchmark.run(rows: rows, queries: queries)
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
        exit(1)
    }
}

if let count = options.storedBytes {
    do {
        try StoredBytesBenchmark.run(count: count, directory: options.database)
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
        exit(1)
    }
}

if let (store, senders, count) = options.notifications {
    do {
        try NotificationsBenchmark.run(store: store, senders: senders, count: count, location: options.database)
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
        exit(1)
    }
}

if options.ocsp {
    do {
        let report = try OCSPOverheadBench.run(harness: Harness(runs: options.runs, seconds: options.seconds))
        report.print(json: options.json)
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
        exit(1)
    }
}

if let probe = options.memoryProbe {
    exit(MemoryProbe.run(path: probe))
}

do {
    let report = try Suite(options: options).run()
    report.print(json: options.json)
} catch {
    FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
    exit(1)
}
