import Foundation

/// One measured operation: `run` performs it once and returns a checksum the harness verifies,
/// so a broken implementation cannot look fast.
struct Measurement {
    let name: String
    /// Bytes processed per operation (for MB/s); 0 when throughput means nothing.
    let bytes: Int
    let expected: Int?
    let run: () throws -> Int
}

/// Timing results of one measurement.
struct Result {
    let name: String
    let bytes: Int
    let nsPerOp: Double
    let runs: Int
    /// (max − min) / median of the per-run figures, in percent.
    let spreadPercent: Double
    var mbPerSecond: Double { bytes == 0 ? 0 : Double(bytes) / nsPerOp * 1000 }
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
}

/// Times each measurement: a warm-up, then `runs` timed runs of about `seconds / runs` each; the
/// figure per run is nanoseconds per operation, and the median across runs is reported.
struct Harness {
    var runs: Int
    var seconds: Double

    func measure(_ m: Measurement) throws -> Result {
        let clock = ContinuousClock()
        // Warm-up: at least one operation and about a tenth of a run.
        let warmUpEnd = clock.now.advanced(by: .milliseconds(Int(seconds * 1000 / Double(runs) / 10)))
        var warm = 0
        repeat {
            let checksum = try m.run()
            if let expected = m.expected, checksum != expected {
                throw BenchmarkError(description: "\(m.name): checksum \(checksum), expected \(expected) — refusing to time a wrong result")
            }
            warm += 1
        } while clock.now < warmUpEnd
        var perRun: [Double] = []
        let budget = Duration.nanoseconds(Int64(seconds * 1e9 / Double(runs)))
        for _ in 0..<runs {
            perRun.append(try nanosecondsPerOperation(m, budget: budget))
        }
        perRun.sort()
        let median = perRun.count % 2 == 1 ? perRun[perRun.count / 2] : (perRun[perRun.count / 2 - 1] + perRun[perRun.count / 2]) / 2
        let spread = median > 0 ? ((perRun.last ?? 0) - (perRun.first ?? 0)) / median * 100 : 0
        return Result(name: m.name, bytes: m.bytes, nsPerOp: median, runs: runs, spreadPercent: spread)
    }
}

extension Harness {
    /// Runs `m` repeatedly for `budget` and returns the mean time of one run, in nanoseconds (the
    /// checksums are kept from the optimiser).
    func nanosecondsPerOperation(_ m: Measurement, budget: Duration) throws -> Double {
        let clock = ContinuousClock()
        var operations = 0
        var sink = 0
        let start = clock.now
        var elapsed = Duration.zero
        repeat {
            sink &+= try m.run()
            operations += 1
            elapsed = clock.now - start
        } while elapsed < budget
        blackHole(sink)
        return (Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9) / Double(operations)
    }

    /// Times two measurements interleaved: for each run, `a` for its share of the time, then `b`.
    /// Load that comes and goes on a shared machine then falls on both alike, so the ratio of the
    /// two figures of one run is steadier than the ratio of two separate medians. Returns both
    /// results (medians of their runs) and the median of the per-run ratios `a ÷ b`.
    func measurePair(_ a: Measurement, _ b: Measurement) throws -> (Result, Result, ratio: Double) {
        for m in [a, b] {
            let checksum = try m.run()
            if let expected = m.expected, checksum != expected {
                throw BenchmarkError(description: "\(m.name): checksum \(checksum), expected \(expected) — refusing to time a wrong result")
            }
        }
        let budget = Duration.nanoseconds(Int64(seconds * 1e9 / Double(runs) / 2))
        func timed(_ m: Measurement) throws -> Double { try nanosecondsPerOperation(m, budget: budget) }
        // Warm-up: one short round of each.
        _ = try timed(a)
        _ = try timed(b)
        var figuresA: [Double] = []
        var figuresB: [Double] = []
        var ratios: [Double] = []
        for _ in 0..<runs {
            let x = try timed(a)
            let y = try timed(b)
            figuresA.append(x)
            figuresB.append(y)
            ratios.append(y > 0 ? x / y : 0)
        }
        func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
        func result(_ m: Measurement, _ figures: [Double]) -> Result {
            let mid = median(figures)
            let spread = mid > 0 ? ((figures.max() ?? 0) - (figures.min() ?? 0)) / mid * 100 : 0
            return Result(name: m.name, bytes: m.bytes, nsPerOp: mid, runs: runs, spreadPercent: spread)
        }
        return (result(a, figuresA), result(b, figuresB), median(ratios))
    }
}

@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// Formats nanoseconds with a unit.
func formatTime(_ ns: Double) -> String {
    if ns >= 1e9 { return String(format: "%.2f s", ns / 1e9) }
    if ns >= 1e6 { return String(format: "%.2f ms", ns / 1e6) }
    if ns >= 1e3 { return String(format: "%.2f µs", ns / 1e3) }
    return String(format: "%.0f ns", ns)
}
