import Foundation
import Testing

/// A strict reader of Prometheus' text exposition format (version 0.0.4), for the tests of
/// `GET /metrics`: every line is a `# HELP`, a `# TYPE` (once per family, before its samples) or a
/// sample of a declared family; names and label names follow the format's grammar; label values
/// use only the escapes `\\`, `\"` and `\n`; no series appears twice; a histogram's buckets are
/// cumulative and its `+Inf` bucket equals its `_count`.
struct PrometheusText {
    struct Sample: Hashable {
        let name: String
        let labels: [String: String]
        let value: Double
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private(set) var samples: [Sample] = []
    private(set) var types: [String: String] = [:]

    init(_ text: String) throws {
        guard text.hasSuffix("\n") else { throw Failure(description: "the text does not end with a line feed") }
        var seen = Set<String>()
        for line in text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("# TYPE ") {
                let parts = line.dropFirst(7).split(separator: " ").map(String.init)
                guard parts.count == 2, Self.isName(parts[0]), ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[1])
                else {
                    throw Failure(description: "bad TYPE line: \(line)")
                }
                guard types[parts[0]] == nil, !samples.contains(where: { Self.family(of: $0.name, in: [parts[0]: parts[1]]) != nil }) else {
                    throw Failure(description: "TYPE after samples or twice: \(line)")
                }
                types[parts[0]] = parts[1]
            } else if line.hasPrefix("# HELP ") {
                guard let name = line.dropFirst(7).split(separator: " ").first, Self.isName(String(name)) else {
                    throw Failure(description: "bad HELP line: \(line)")
                }
            } else if line.hasPrefix("#") {
                continue
            } else {
                let sample = try Self.sample(line)
                guard Self.family(of: sample.name, in: types) != nil else { throw Failure(description: "undeclared family: \(line)") }
                let key = sample.name + sample.labels.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: ",")
                guard seen.insert(key).inserted else { throw Failure(description: "series twice: \(line)") }
                samples.append(sample)
            }
        }
        try checkHistograms()
    }

    /// The value of the series `name` with exactly `labels` (nil: absent).
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    /// The sum of every series of `name` whose labels include `matching`.
    func sum(_ name: String, _ matching: [String: String] = [:]) -> Double {
        samples.filter { sample in sample.name == name && matching.allSatisfy { sample.labels[$0.key] == $0.value } }.map(\.value)
            .reduce(0, +)
    }

    private func checkHistograms() throws {
        for (family, type) in types where type == "histogram" {
            let buckets = samples.filter { $0.name == family + "_bucket" }
            let groups = Dictionary(grouping: buckets) { $0.labels.filter { $0.key != "le" } }
            for (labels, group) in groups {
                let ordered = try group.map { sample -> (Double, Double) in
                    guard let le = sample.labels["le"], let bound = Self.number(le) else { throw Failure(description: "bucket without le") }
                    return (bound, sample.value)
                }.sorted { $0.0 < $1.0 }
                guard zip(ordered, ordered.dropFirst()).allSatisfy({ $0.1 <= $1.1 }) else {
                    throw Failure(description: "\(family) buckets are not cumulative")
                }
                guard ordered.last?.0 == .infinity, ordered.last?.1 == value(family + "_count", labels),
                    value(family + "_sum", labels) != nil
                else { throw Failure(description: "\(family) lacks +Inf, _sum or _count") }
            }
        }
    }

    private static func family(of name: String, in types: [String: String]) -> String? {
        if types[name] != nil { return name }
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            let base = String(name.dropLast(suffix.count))
            if let type = types[base], type == "histogram" || type == "summary" { return base }
        }
        return nil
    }

    private static func isName(_ text: String, label: Bool = false) -> Bool {
        guard let first = text.unicodeScalars.first, first.isASCII,
            first.properties.isAlphabetic || first == "_" || (!label && first == ":")
        else { return false }
        return text.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || (!label && $0 == ":"))
        }
    }

    private static func number(_ text: String) -> Double? {
        switch text {
        case "+Inf": return .infinity
        case "-Inf": return -.infinity
        case "NaN": return .nan
        default: return Double(text)
        }
    }

    private static func sample(_ line: String) throws -> Sample {
        var rest = Substring(line)
        let name = String(rest.prefix { $0 != "{" && $0 != " " })
        guard isName(name) else { throw Failure(description: "bad metric name: \(line)") }
        rest = rest.dropFirst(name.count)
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                let labelName = String(rest.prefix { $0 != "=" })
                guard isName(labelName, label: true), labels[labelName] == nil else {
                    throw Failure(description: "bad label name: \(line)")
                }
                rest = rest.dropFirst(labelName.count)
                guard rest.hasPrefix("=\"") else { throw Failure(description: "label without a quoted value: \(line)") }
                rest = rest.dropFirst(2)
                var value = ""
                while true {
                    guard let character = rest.first else { throw Failure(description: "unterminated label value: \(line)") }
                    rest = rest.dropFirst()
                    if character == "\"" { break }
                    if character == "\\" {
                        guard let escaped = rest.first else { throw Failure(description: "dangling escape: \(line)") }
                        rest = rest.dropFirst()
                        switch escaped {
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "n": value.append("\n")
                        default: throw Failure(description: "bad escape \\\(escaped): \(line)")
                        }
                    } else {
                        value.append(character)
                    }
                }
                labels[labelName] = value
                if rest.first == "," {
                    rest = rest.dropFirst()
                } else if rest.first != "}" {
                    throw Failure(description: "bad label list: \(line)")
                }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " " else { throw Failure(description: "no space before the value: \(line)") }
        let fields = rest.dropFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard (1...2).contains(fields.count), let value = number(String(fields[0])) else {
            throw Failure(description: "bad value: \(line)")
        }
        if fields.count == 2, Int64(fields[1]) == nil { throw Failure(description: "bad timestamp: \(line)") }
        return Sample(name: name, labels: labels, value: value)
    }
}
