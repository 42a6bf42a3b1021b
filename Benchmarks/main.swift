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
    var jws = false
    var file: String?
    var anchor: String?
    var memoryProbe: String?
    var repeatParse: (String, Int)?
    var repeatJWS: (String, Int, Bool)?
    var repeatVerify: (String, String, Int)?
    var notifications: (store: String, senders: Int, count: Int)?
    var database: String?

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
            case "--jws": jws = true
            case "--file": file = try value()
            case "--anchor": anchor = try value()
            case "--memory-probe": memoryProbe = try value()
            case "--notifications":
                let store = try value()
                guard let senders = Int(try value()), senders > 0, let count = Int(try value()), count > 0 else {
                    throw BenchmarkError(description: "--notifications sqlite|postgres SENDERS COUNT")
                }
                notifications = (store, senders, count)
            case "--db": database = try value()
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
            case "--repeat-parse":
                // For instruction counting under valgrind: parse FILE N times and exit.
                let path = try value()
                guard let n = Int(try value()) else { throw BenchmarkError(description: "--repeat-parse FILE N") }
                repeatParse = (path, n)
            case "-h", "--help":
                print(
                    """
                    USAGE: Benchmarks [-r RUNS] [-t SECONDS] [--json] [--quick]
                           Benchmarks --file PATH [--anchor CERT] [-r RUNS] [-t SECONDS] [--json]

                    -r RUNS       timed runs per measurement (default 5); the median is reported
                    -t SECONDS    time per measurement, split over the runs (default 0.4)
                    --json        one JSON line per measurement instead of the table
                    --quick       only the 1,000-purchase receipt and the real receipts' totals
                    --jws         only the JWS decode measurements (jws-decode, es256-verify)
                    --file PATH   benchmark one receipt; --anchor adds verification against CERT
                    --notifications sqlite|postgres SENDERS COUNT [--db DIRECTORY|URL]
                                  acknowledged notifications per second through the receiver and
                                  the store, commits (SQLite) or WAL syncs (PostgreSQL) per
                                  notification (scripts/notifications-bench.sh adds fsync counts)
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

if let (path, count, cached) = options.repeatJWS {
    let bytes = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
    let cache = cached ? JWSHeaderCache() : nil
    var total = 0
    for _ in 0..<count {
        total &+= (try? CompactJWS(bytes, headerCache: cache).decodeUnverifiedPayload(as: JWSTransaction.self).quantity ?? 0) ?? -1
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

if let (store, senders, count) = options.notifications {
    do {
        try NotificationsBenchmark.run(store: store, senders: senders, count: count, location: options.database)
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
