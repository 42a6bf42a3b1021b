import Foundation
import FuzzTargets

// Built two ways:
// - by scripts/fuzz.sh with `-DFUZZING` and `-sanitize=fuzzer,address`: libFuzzer provides main()
//   and calls LLVMFuzzerTestOneInput; the target comes from the FUZZ_TARGET environment variable;
// - by a plain `swift build`: a main that replays files or directories through a target, so the
//   driver always compiles and crash inputs can be re-run without sanitizers.

#if FUZZING
    nonisolated(unsafe) var selectedTarget: FuzzTargets.Target?

    /// libFuzzer's start-up hook: selects the target named by the `FUZZ_TARGET` environment
    /// variable, or exits with status 2 listing the valid names.
    @_cdecl("LLVMFuzzerInitialize")
    public func fuzzerInitialize(
        _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
    ) -> Int32 {
        let name = ProcessInfo.processInfo.environment["FUZZ_TARGET"] ?? ""
        guard let target = FuzzTargets.target(named: name) else {
            FileHandle.standardError.write(
                Data("FUZZ_TARGET must be one of: \(FuzzTargets.all.map(\.name).joined(separator: ", "))\n".utf8))
            exit(2)
        }
        selectedTarget = target
        return 0
    }

    /// libFuzzer's per-input hook: runs the selected target, whose oracle stops the process on a
    /// violation, over one input. Always returns 0, as libFuzzer expects.
    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
        selectedTarget?.run(Array(UnsafeBufferPointer(start: data, count: size)))
        return 0
    }
#else
    @main
    struct FuzzReplay {
        static func main() {
            let arguments = Array(CommandLine.arguments.dropFirst())
            guard let name = arguments.first, let target = FuzzTargets.target(named: name) else {
                print("USAGE: Fuzz <target> <file-or-directory>...\ntargets: \(FuzzTargets.all.map(\.name).joined(separator: " "))")
                exit(arguments.first == "--list" ? 0 : 64)
            }
            var count = 0
            for path in arguments.dropFirst() {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
                let files =
                    isDirectory.boolValue
                    ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).map { path + "/" + $0 } : [path]
                for file in files {
                    guard let data = FileManager.default.contents(atPath: file) else { continue }
                    target.run([UInt8](data))
                    count += 1
                }
            }
            print("replayed \(count) inputs through \(name) without a crash")
        }
    }
#endif
