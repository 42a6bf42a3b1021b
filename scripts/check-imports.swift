// Compares every target's imports with the dependencies Package.swift declares for it.
//
// Reads `swift package dump-package` on standard input (scripts/check-imports.sh runs it) and the
// Swift sources of each target, and reports:
// - a package target imported but not declared (it builds only by accident, through another
//   target's dependencies);
// - a declared library target that no source of the target imports (a false edge in the graph);
//   executables are exempt, since tests depend on them to have them built, not to import them;
// - COpenSSL imported anywhere but ReceiptCrypto, HTTPClient (its TLS) and CryptoBaselines, CSQLite or CLibPQ anywhere
//   but ServerNotifications;
// - a product whose targets reach CryptoBaselines, CYardsticks or TestSupport.
// - a Docs/Architecture.md whose Layout section (§8) misses a target's directory, or whose import graph (the
//   block after "What each module imports") differs from what the sources import.
// With `--graph` it prints each target's package dependencies instead, one line per target; with
// `--readme-graph` it prints that graph block for the current sources.
// Exit status 0 when everything agrees, 1 otherwise.

import Foundation

struct Target {
    let name: String
    let type: String
    let directory: String
    let dependencies: [String]
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("check-imports: \(message)\n".utf8))
    exit(2)
}

let printGraph = CommandLine.arguments.contains("--graph")
let printReadmeGraph = CommandLine.arguments.contains("--readme-graph")
let input = FileHandle.standardInput.readDataToEndOfFile()
guard let manifest = try? JSONSerialization.jsonObject(with: input) as? [String: Any],
    let targetList = manifest["targets"] as? [[String: Any]],
    let productList = manifest["products"] as? [[String: Any]]
else { fail("standard input is not the JSON of `swift package dump-package`") }

var targets: [String: Target] = [:]
for entry in targetList {
    guard let name = entry["name"] as? String, let type = entry["type"] as? String else { continue }
    let defaultRoot = type == "test" ? "Tests" : "Sources"
    let directory = (entry["path"] as? String) ?? "\(defaultRoot)/\(name)"
    var dependencies: [String] = []
    for dependency in entry["dependencies"] as? [[String: Any]] ?? [] {
        // {"byName": [name, condition]}, {"target": [name, condition]}, {"product": [name, package, …]}
        for key in ["byName", "target"] {
            if let value = dependency[key] as? [Any], let dependencyName = value.first as? String {
                dependencies.append(dependencyName)
            }
        }
    }
    targets[name] = Target(name: name, type: type, directory: directory, dependencies: dependencies)
}

/// The modules a Swift file imports, skipping multi-line string literals and comments.
func imports(in text: String) -> Set<String> {
    let pattern =
        #"^\s*(@[A-Za-z_]+(\([^)]*\))?\s+)*((public|package|internal|private|fileprivate)\s+)?import\s+((typealias|struct|class|enum|protocol|let|var|func)\s+)?([A-Za-z_][A-Za-z0-9_]*)"#
    guard let regex = try? NSRegularExpression(pattern: pattern) else { fail("bad pattern") }
    var result: Set<String> = []
    var inString = false
    for line in text.components(separatedBy: "\n") {
        let quotes = line.components(separatedBy: "\"\"\"").count - 1
        if !inString, let match = regex.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)),
            let range = Range(match.range(at: 7), in: line)
        {
            result.insert(String(line[range]))
        }
        if quotes % 2 == 1 { inString.toggle() }
    }
    return result
}

func swiftFiles(under directory: String) -> [String] {
    guard let enumerator = FileManager.default.enumerator(atPath: directory) else { return [] }
    return enumerator.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.map { directory + "/" + $0 }.sorted()
}

/// Whether the directory holds C sources (a C target has no Swift sources to check).
func isCTarget(_ directory: String) -> Bool {
    guard let enumerator = FileManager.default.enumerator(atPath: directory) else { return false }
    return enumerator.contains { ($0 as? String)?.hasSuffix(".c") == true }
}

var problems: [String] = []
var importsByTarget: [String: Set<String>] = [:]
for target in targets.values.sorted(by: { $0.name < $1.name }) where target.type != "system" {
    var imported: Set<String> = []
    let files = swiftFiles(under: target.directory)
    // A C target (CYardsticks) imports nothing of the package.
    if files.isEmpty && isCTarget(target.directory) { continue }
    if files.isEmpty { problems.append("\(target.name): no Swift sources under \(target.directory)") }
    for file in files {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            problems.append("\(target.name): cannot read \(file)")
            continue
        }
        imported.formUnion(imports(in: text))
    }
    let packageImports = imported.filter { targets[$0] != nil && $0 != target.name }
    importsByTarget[target.name] = packageImports
    let declared = Set(target.dependencies)
    for missing in packageImports.subtracting(declared).sorted() {
        problems.append("\(target.name) imports \(missing) but does not declare it")
    }
    for unused in declared.subtracting(packageImports).sorted() where targets[unused]?.type != "executable" {
        problems.append("\(target.name) declares \(unused) but no source imports it")
    }
    if packageImports.contains("COpenSSL"), !["ReceiptCrypto", "CryptoBaselines", "HTTPClient"].contains(target.name) {
        problems.append("\(target.name) imports COpenSSL (only ReceiptCrypto, HTTPClient (TLS) and CryptoBaselines may)")
    }
    // SQLite and libpq each have one Swift owner.
    for (library, owner) in [("CSQLite", "ServerNotifications"), ("CLibPQ", "ServerNotifications"), ("CZlib", "ServerNotifications")]
    where packageImports.contains(library) && target.name != owner {
        problems.append("\(target.name) imports \(library) (only \(owner) may)")
    }
}

/// Every target `name` links, itself included (test targets never appear in a product).
func closure(of name: String) -> Set<String> {
    var seen: Set<String> = []
    var stack = [name]
    while let next = stack.popLast() {
        guard seen.insert(next).inserted else { continue }
        stack.append(contentsOf: targets[next]?.dependencies ?? [])
    }
    return seen
}

for product in productList {
    guard let name = product["name"] as? String, let productTargets = product["targets"] as? [String] else { continue }
    let linked = productTargets.reduce(into: Set<String>()) { $0.formUnion(closure(of: $1)) }
    for forbidden in ["CryptoBaselines", "CYardsticks", "TestSupport"] where linked.contains(forbidden) {
        problems.append("product \(name) links \(forbidden), which is for tests and Benchmarks only")
    }
}

// Docs/Architecture.md's Layout section: every target's directory is listed, and the import graph block
// matches the sources.
let graphTargets = targets.values.filter { $0.type != "system" && $0.type != "test" }.sorted { $0.name < $1.name }
/// The Layout graph: products and executables first, then the modules only tests and tools use.
func readmeGraph() -> [String] {
    func line(_ target: Target) -> [String] {
        let edges = (importsByTarget[target.name] ?? []).sorted()
        let head = target.name.padding(toLength: 21, withPad: " ", startingAt: 0) + (edges.isEmpty ? "(nothing)" : "→ ")
        guard !edges.isEmpty else { return [head] }
        var lines: [String] = []
        var current = head
        for (index, edge) in edges.enumerated() {
            let piece = edge + (index == edges.count - 1 ? "" : ",")
            if current.count + piece.count + 1 > 100, current != head {
                lines.append(current)
                current = String(repeating: " ", count: 23) + piece
            } else {
                current += (current == head ? "" : " ") + piece
            }
        }
        lines.append(current)
        return lines
    }
    let support: Set<String> = ["CryptoBaselines", "CYardsticks", "TestSupport", "FuzzTargets", "Fuzz", "Benchmarks"]
    var lines: [String] = []
    for target in graphTargets where !support.contains(target.name) { lines += line(target) }
    lines.append("")
    lines.append("tests and tools only:")
    for target in graphTargets where support.contains(target.name) { lines += line(target) }
    return lines
}
if let readme = try? String(contentsOfFile: "Docs/Architecture.md", encoding: .utf8) {
    let lines = readme.components(separatedBy: "\n")
    if let layout = lines.firstIndex(where: { $0.hasPrefix("## ") && $0.hasSuffix(" Layout") }) {
        let section = lines[layout...]
        let text = section.joined(separator: "\n")
        for target in graphTargets where !text.contains(target.directory) {
            problems.append("Docs/Architecture.md's Layout section does not list \(target.directory) (target \(target.name))")
        }
        if let intro = section.firstIndex(where: { $0.hasPrefix("What each module imports") }),
            let open = section[intro...].firstIndex(where: { $0.hasPrefix("```") }),
            let close = section[(open + 1)...].firstIndex(where: { $0.hasPrefix("```") })
        {
            let written = Array(section[(open + 1)..<close])
            if written != readmeGraph() {
                problems.append("Docs/Architecture.md's import graph differs from the sources (scripts/check-imports.sh --readme-graph prints it)")
            }
        } else {
            problems.append("Docs/Architecture.md's Layout section has no import graph block after \"What each module imports\"")
        }
    } else {
        problems.append("Docs/Architecture.md has no \"## … Layout\" section")
    }
}

if printReadmeGraph {
    for line in readmeGraph() { print(line) }
    exit(0)
}

if printGraph {
    for target in targets.values.sorted(by: { $0.name < $1.name }) where target.type != "system" {
        let edges = (importsByTarget[target.name] ?? []).sorted().joined(separator: ", ")
        print("\(target.name) [\(target.type)] -> \(edges.isEmpty ? "(none)" : edges)")
    }
}

if problems.isEmpty {
    if !printGraph { print("check-imports: \(targets.count) targets, every import declared and every dependency imported") }
    exit(0)
}
for problem in problems { print("check-imports: \(problem)") }
exit(1)
