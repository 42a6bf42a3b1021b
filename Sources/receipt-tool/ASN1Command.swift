import ASN1
import Foundation
import Internals
import Receipts

/// `receipt-tool asn1`: an annotated ASN.1 tree, like `openssl asn1parse -i`, that also opens the
/// receipt payload and names each receipt attribute by its meaning.
enum ASN1Command {
    static let subcommand = Subcommand(
        name: "asn1",
        summary: "Print the annotated ASN.1 structure of a receipt or any DER/BER file.",
        help: """
            USAGE: receipt-tool asn1 <file> [--der] [--no-payload]

            ARGUMENTS:
              <file>          DER/BER bytes, base64 text or '-' for standard input.

            OPTIONS:
              --der           Enforce DER (reject indefinite lengths and other BER-only forms).
              --no-payload    Do not open OCTET STRINGs that hold ASN.1 (the receipt payload).
              -h, --help      Show help information.

            Each line shows: offset, depth (d), header length (hl), content length (l, 'inf' for
            indefinite), primitive or constructed, the tag and a value preview. Receipt attributes are
            named (for example 'attribute 2 bundle_id'). Offsets inside a segmented (BER) payload are
            relative to the concatenated payload and marked with '+'.
            """,
        run: run)

    static func run(_ arguments: [String]) throws -> Int32 {
        let args = try Arguments(arguments, valued: [], flagNames: ["--der", "--no-payload"])
        guard args.positional.count == 1 else { throw UsageError("expected one <file>") }
        let path = args.positional[0]
        var bytes = try readInput(path)
        if bytes.first != 0x30, Base64.looksLikeBase64(bytes) {
            do {
                bytes = try Base64.decode(bytes)
            } catch {
                throw ToolFailure("\(path): \(error)")
            }
        }
        var printer = TreePrinter(openPayload: !args.flag("--no-payload"))
        do {
            var reader = try ASN1Reader(bytes, rules: args.flag("--der") ? .der : .ber)
            let root = try reader.readElement()
            try printer.print(root, depth: 0, context: .none, relative: false)
            try reader.finish()
        } catch let error as ASN1Error {
            printOut(printer.lines.joined(separator: "\n"))
            throw ToolFailure("\(path): \(error)")
        }
        printOut(printer.lines.joined(separator: "\n"))
        return ExitStatus.success
    }
}

struct TreePrinter {
    enum Context {
        case none
        case payloadSet(inApp: Bool)
        case attribute(inApp: Bool)
    }

    let openPayload: Bool
    var lines: [String] = []

    mutating func print(_ element: ASN1Element, depth: Int, context: Context, relative: Bool, note: String = "") throws {
        let id = element.identifier
        let offset = (relative ? "+" : "") + String(element.offset)
        let length = element.isIndefiniteLength ? "inf" : String(element.contentLength)
        let prefix =
            offset.leftPad(6) + ":d=\(depth)".padding(toLength: 5, withPad: " ", startingAt: 0)
            + " hl=\(element.headerLength)".padding(toLength: 5, withPad: " ", startingAt: 0)
            + " l=" + length.leftPad(5) + (id.isConstructed ? " cons: " : " prim: ")
        let tag = String(repeating: " ", count: depth) + id.description
        var line = prefix + tag.padding(toLength: max(tag.count, 24), withPad: " ", startingAt: 0)
        let preview = id.isConstructed ? "" : self.preview(element)
        if !preview.isEmpty { line += " " + preview }
        if !note.isEmpty { line += "  ; " + note }
        lines.append(line)

        if id.isConstructed {
            var children = try element.children()
            var index = 0
            while !children.isAtEnd {
                let child = try children.readElement()
                var childContext: Context = .none
                var childNote = ""
                switch context {
                case .payloadSet(let inApp):
                    childContext = .attribute(inApp: inApp)
                    if let type = attributeType(child) { childNote = "attribute \(type) \(AttributeNames.name(type))" }
                case .attribute(let inApp):
                    childContext = index == 2 ? .attribute(inApp: inApp) : .none
                    if index == 0 { childNote = "type" } else if index == 1 { childNote = "version" } else { childNote = "value" }
                case .none:
                    break
                }
                if case .attribute = context, index == 2 {
                    try printValue(child, depth: depth + 1, relative: relative, note: childNote, parent: element)
                } else {
                    try print(child, depth: depth + 1, context: childContext, relative: relative, note: childNote)
                }
                index += 1
            }
        } else if openPayload, id == .octetString || (id.tagNumber == 4 && id.tagClass == .universal), case .none = context {
            try openIfPayload(element, depth: depth, relative: relative)
        }
        // A segmented OCTET STRING: open the concatenation, unless a single segment already showed it.
        if id.isConstructed, id.tagNumber == 4, id.tagClass == .universal, openPayload, case .none = context {
            var segments = try element.children()
            var count = 0
            while !segments.isAtEnd, count < 2 {
                try segments.skipElement()
                count += 1
            }
            if count > 1 { try openIfPayload(element, depth: depth, relative: relative) }
        }
    }

    /// Prints an attribute's value OCTET STRING and what it holds.
    mutating func printValue(_ element: ASN1Element, depth: Int, relative: Bool, note: String, parent: ASN1Element) throws {
        let type = attributeType(parent)
        let octets = try element.octets()
        if type == 17, let set = parseSingle(octets), set.identifier == .set {
            try print(element, depth: depth, context: .attribute(inApp: false), relative: relative, note: "in-app purchase record")
            lines.removeLast()  // re-print with the nested record below
            lines.append(lineFor(element, depth: depth, relative: relative, note: "in-app purchase record"))
            try print(set, depth: depth + 1, context: .payloadSet(inApp: true), relative: relative)
            return
        }
        var detail = note
        if let inner = parseSingle(octets), !inner.identifier.isConstructed {
            let value = preview(inner)
            detail += " = \(inner.identifier) \(value.isEmpty ? "(empty)" : value)"
        }
        lines.append(lineFor(element, depth: depth, relative: relative, note: detail))
    }

    func lineFor(_ element: ASN1Element, depth: Int, relative: Bool, note: String) -> String {
        let offset = (relative ? "+" : "") + String(element.offset)
        let length = element.isIndefiniteLength ? "inf" : String(element.contentLength)
        let tag = String(repeating: " ", count: depth) + element.identifier.description
        return offset.leftPad(6) + ":d=\(depth)".padding(toLength: 5, withPad: " ", startingAt: 0)
            + " hl=\(element.headerLength)".padding(toLength: 5, withPad: " ", startingAt: 0) + " l=" + length.leftPad(5)
            + (element.identifier.isConstructed ? " cons: " : " prim: ")
            + tag.padding(toLength: max(tag.count, 24), withPad: " ", startingAt: 0) + "  ; " + note
    }

    /// If an OCTET STRING holds a receipt payload (a SET of attribute SEQUENCEs), prints it.
    mutating func openIfPayload(_ element: ASN1Element, depth: Int, relative: Bool) throws {
        let octets = try element.octets()
        guard let inner = parseSingle(octets), inner.identifier == .set || inner.identifier == .sequence else { return }
        let segmented = element.identifier.isConstructed
        lines.append(
            String(repeating: " ", count: 6) + "  -- contents of the OCTET STRING at \(element.offset)"
                + (segmented ? " (segments concatenated; offsets relative to it, marked +)" : "") + " --")
        var isPayload = false
        if inner.identifier == .set, var children = try? inner.children(), var first = try? children.readSequence() {
            isPayload = (try? first.readInteger(Int.self)) != nil
        }
        try print(
            inner, depth: depth + 1, context: isPayload ? .payloadSet(inApp: false) : .none, relative: relative || segmented,
            note: isPayload ? "receipt payload" : "")
    }

    func parseSingle(_ bytes: ArraySlice<UInt8>) -> ASN1Element? {
        guard var reader = try? ASN1Reader(bytes, rules: .ber), let element = try? reader.readElement(), reader.isAtEnd else {
            return nil
        }
        return (try? ASN1Tree.depthFirstNodes(element.encodedBytes, rules: .ber)) != nil ? element : nil
    }

    func attributeType(_ sequence: ASN1Element) -> Int? {
        guard sequence.identifier == .sequence, var children = try? sequence.children() else { return nil }
        return try? children.readInteger(Int.self)
    }

    func preview(_ element: ASN1Element) -> String {
        let id = element.identifier
        guard id.tagClass == .universal else { return ":" + hexPreview(element.content, limit: 16) }
        switch id.tagNumber {
        case 1: return (try? element.boolean()).map { $0 ? ":TRUE" : ":FALSE" } ?? ":<bad BOOLEAN>"
        case 2:
            if let value = try? element.integer(Int64.self) { return ":\(value)" }
            return ":0x" + hexPreview(element.content, limit: 32)
        case 5: return ""
        case 6: return (try? element.objectIdentifier()).map { ":" + OIDNames.describe($0.description) } ?? ":<bad OID>"
        case 12, 19, 22, 26:
            if let text = try? element.anyString() { return ":\"" + String(text.prefix(80)) + (text.count > 80 ? "…\"" : "\"") }
            return ":<invalid string> " + hexPreview(element.content)
        case 23, 24: return (try? element.time()).map { ":" + $0.description } ?? ":<bad time>"
        case 3, 4: return element.contentLength == 0 ? "" : "[HEX]:" + hexPreview(element.content, limit: 20)
        default: return ":" + hexPreview(element.content, limit: 16)
        }
    }
}

extension String {
    func leftPad(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
