import Foundation
import Receipts

#if canImport(Glibc)
    import Glibc
#endif

/// Peak memory of one parse, read from the OS in a child process that does nothing else:
/// idle → after reading the input → after parsing. The figure is the peak resident set size of
/// the process's own address space (`VmHWM` in /proc/self/status); `getrusage`'s `ru_maxrss` is
/// not used because Linux carries it over from the parent across exec.
enum MemoryProbe {
    static func maxRSSKilobytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.split(whereSeparator: \.isWhitespace).dropFirst().first ?? "") ?? -1
        }
        return -1
    }

    /// The child side: prints `idle input peak purchases` in kilobytes.
    static func run(path: String) -> Int32 {
        // Open the file and size it before reading the idle figure, so the idle process already
        // holds the code and buffers of FileHandle and /proc reading, and the next step is the input.
        guard let handle = FileHandle(forReadingAtPath: path), let size = try? handle.seekToEnd() else { return 1 }
        try? handle.seek(toOffset: 0)
        _ = maxRSSKilobytes()
        let idle = maxRSSKilobytes()
        // Read straight into the array (no intermediate Data) so the input is counted once.
        let bytes = [UInt8](unsafeUninitializedCapacity: Int(size)) { buffer, count in
            count = read(handle.fileDescriptor, buffer.baseAddress, Int(size))
            if count < 0 { count = 0 }
        }
        guard bytes.count == Int(size) else { return 1 }
        let afterInput = maxRSSKilobytes()
        guard let receipt = try? AppReceipt(bytes) else { return 1 }
        let peak = maxRSSKilobytes()
        print(idle, afterInput, peak, receipt.inAppPurchases.count)
        return 0
    }

    /// The parent side: writes the receipt to a file, runs the probe and describes the result.
    static func measure(_ bytes: [UInt8]) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rmstore-bench-\(getpid()).der")
        try Data(bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["--memory-probe", url.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let fields = output.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard process.terminationStatus == 0, fields.count == 4 else { throw BenchmarkError(description: "memory probe failed: \(output)") }
        let (idle, afterInput, peak, purchases) = (fields[0], fields[1], fields[2], fields[3])
        let inputKB = bytes.count / 1024
        let aboveIdle = peak - idle
        return String(
            format:
                "peak memory, %d-purchase parse: input %d KiB; max RSS idle %d KiB → input loaded %d KiB → parsed %d KiB; above idle %d KiB = %.2f× the input (parse alone %.2f×)",
            purchases, inputKB, idle, afterInput, peak, aboveIdle, Double(aboveIdle) / Double(max(inputKB, 1)),
            Double(peak - afterInput) / Double(max(inputKB, 1)))
    }
}
