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
        let output = OutputBuffer()
        var printer = TreePrinter(openPayload: !args.flag("--no-payload"), output: output)
        do {
            var reader = try ASN1Reader(bytes, rules: args.flag("--der") ? .der : .ber)
            let root = try reader.readElement()
            try printer.print(root, depth: 0, context: .none, relative: false)
            try reader.finish()
        } catch let error as ASN1Error {
            output.flush()
            throw ToolFailure("\(path): \(error)")
        }
        output.flush()
        return ExitStatus.success
    }
}

/// Standard output through a 64 KiB buffer, written with `write(2)` whenever it fills: `asn1`
/// prints one line per node, and lines leave as they are made, so memory does not grow with the
/// number of nodes.
final class OutputBuffer {
    private var buffer: [UInt8] = []
    private let capacity = 64 << 10

    init() { buffer.reserveCapacity(capacity) }

    /// Appends `text` and a newline; writes out the buffer when it is full.
    func line(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        buffer.append(0x0A)
        if buffer.count >= capacity { flush() }
    }

    /// Writes everything buffered to standard output.
    func flush() {
        var offset = 0
        while offset < buffer.count {
            let written = buffer.withUnsafeBytes { raw in write(STDOUT_FILENO, raw.baseAddress.map { $0 + offset }, raw.count - offset) }
            if written > 0 {
                offset += written
            } else if written < 0, errno == EINTR {
                continue
            } else {
                break  // standard output is gone (a closed pipe): nothing more can be shown
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Prints an ASN.1 tree a line per element, as it walks it. Memory is bounded by the nesting
/// depth, never by the number of elements: nothing is collected, and the check that an OCTET
/// STRING holds ASN.1 walks it without keeping nodes.
///
/// Depth: the outer reader allows 50 levels, and an opened OCTET STRING's contents get only what
/// is left of those 50 levels, so nested payloads cannot nest the printer deeper than 50 levels
/// (each level of recursion is one level of printed depth).
struct TreePrinter {
    enum Context {
        case none
        case payloadSet(inApp: Bool)
        case attribute(inApp: Bool)
    }

    /// The deepest printed level, payloads included.
    static let maximumDepth = ASN1Limits.default.maximumDepth

    let openPayload: Bool
    let output: OutputBuffer

    mutating func print(_ element: ASN1Element, depth: Int, context: Context, relative: Bool, note: String = "") throws {
        let id = element.identifier
        emit(element, depth: depth, relative: relative, preview: id.isConstructed ? "" : preview(element), note: note)

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
        if type == 17, let set = parseSingle(octets, depth: depth + 1), set.identifier == .set {
            emit(element, depth: depth, relative: relative, preview: "", note: "in-app purchase record", alwaysNote: true)
            try print(set, depth: depth + 1, context: .payloadSet(inApp: true), relative: relative)
            return
        }
        var detail = note
        if let inner = parseSingle(octets, depth: depth + 1), !inner.identifier.isConstructed {
            let value = preview(inner)
            detail += " = \(inner.identifier) \(value.isEmpty ? "(empty)" : value)"
        }
        emit(element, depth: depth, relative: relative, preview: "", note: detail, alwaysNote: true)
    }

    /// Writes one line: offset, depth, header length, length, form, indented tag, preview, note.
    func emit(_ element: ASN1Element, depth: Int, relative: Bool, preview: String, note: String, alwaysNote: Bool = false) {
        let offset = (relative ? "+" : "") + String(element.offset)
        let length = element.isIndefiniteLength ? "inf" : String(element.contentLength)
        var line = offset.leftPad(6)
        line += (":d=" + String(depth)).rightPad(5)
        line += (" hl=" + String(element.headerLength)).rightPad(5)
        line += " l=" + length.leftPad(5) + (element.identifier.isConstructed ? " cons: " : " prim: ")
        line += (String(repeating: " ", count: depth) + element.identifier.description).rightPad(24)
        if !preview.isEmpty { line += " " + preview }
        if !note.isEmpty || alwaysNote { line += "  ; " + note }
        output.line(line)
    }

    /// If an OCTET STRING holds a receipt payload (a SET of attribute SEQUENCEs), prints it.
    mutating func openIfPayload(_ element: ASN1Element, depth: Int, relative: Bool) throws {
        let octets = try element.octets()
        guard let inner = parseSingle(octets, depth: depth + 1), inner.identifier == .set || inner.identifier == .sequence else {
            return
        }
        let segmented = element.identifier.isConstructed
        output.line(
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

    /// The one element `bytes` hold when they are exactly one well-formed BER element whose whole
    /// tree fits in what is left of the depth limit below `depth`; checked by walking it, without
    /// keeping nodes.
    func parseSingle(_ bytes: ArraySlice<UInt8>, depth: Int) -> ASN1Element? {
        let limits = ASN1Limits(maximumDepth: max(0, Self.maximumDepth - depth), maximumInputSize: ASN1Limits.default.maximumInputSize)
        guard limits.maximumDepth > 0, var reader = try? ASN1Reader(bytes, rules: .ber, limits: limits),
            let element = try? reader.readElement(), reader.isAtEnd, Self.isWellFormed(element)
        else { return nil }
        return element
    }

    /// Whether every element below `element` reads (recursion bounded by the reader's depth limit).
    static func isWellFormed(_ element: ASN1Element) -> Bool {
        guard element.identifier.isConstructed else { return true }
        guard var children = try? element.children() else { return false }
        while !children.isAtEnd {
            guard let child = try? children.readElement(), isWellFormed(child) else { return false }
        }
        return true
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

    func rightPad(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
