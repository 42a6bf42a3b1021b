/// Writes JSON text with the key order the caller chooses, optionally indented.
public struct JSONWriter: Sendable {
    /// The text written so far.
    public package(set) var output: [UInt8] = []
    /// Indentation width; 0 writes compact JSON on one line.
    public let indent: Int
    /// How many objects and arrays are open (for writers in other modules of the package that
    /// write bytes themselves and hand the state back).
    package var level = 0
    /// Whether the next value needs a comma before it.
    package var needsComma = false

    /// A writer; `indent` 0 means compact.
    public init(indent: Int = 2) {
        self.indent = indent
        output.reserveCapacity(4096)
    }

    /// The text as a String.
    public var text: String { String(decoding: output, as: UTF8.self) }

    mutating func newline() {
        guard indent > 0 else { return }
        output.append(0x0A)
        output.append(contentsOf: repeatElement(0x20, count: level * indent))
    }

    package mutating func beforeValue() {
        if needsComma { output.append(UInt8(ascii: ",")) }
        if level > 0 { newline() }
    }

    /// Starts an object (as an array element or at top level).
    public mutating func beginObject() {
        beforeValue()
        open(UInt8(ascii: "{"))
    }

    /// Starts an object as the value of `key`.
    public mutating func beginObject(_ key: String) {
        writeKey(key)
        open(UInt8(ascii: "{"))
    }

    /// Ends the current object.
    public mutating func endObject() { close(UInt8(ascii: "}")) }

    /// Starts an array as the value of `key`.
    public mutating func beginArray(_ key: String) {
        writeKey(key)
        open(UInt8(ascii: "["))
    }

    /// Ends the current array.
    public mutating func endArray() { close(UInt8(ascii: "]")) }

    mutating func open(_ bracket: UInt8) {
        output.append(bracket)
        level += 1
        needsComma = false
    }

    mutating func close(_ bracket: UInt8) {
        level -= 1
        if needsComma { newline() }
        output.append(bracket)
        needsComma = true
    }

    package mutating func writeKey(_ key: String) {
        beforeValue()
        writeString(key)
        output.append(UInt8(ascii: ":"))
        if indent > 0 { output.append(0x20) }
        needsComma = true
    }

    /// Writes `"key": "value"`.
    public mutating func string(_ key: String, _ value: String) {
        writeKey(key)
        writeString(value)
    }

    /// Writes a string as an array element.
    public mutating func string(_ value: String) {
        beforeValue()
        writeString(value)
        needsComma = true
    }

    /// Writes `"key": <number>` with the number's text as given.
    public mutating func number(_ key: String, _ text: String) {
        writeKey(key)
        output.append(contentsOf: Array(text.utf8))
    }

    /// Writes `"key": true|false`.
    public mutating func bool(_ key: String, _ value: Bool) {
        writeKey(key)
        output.append(contentsOf: Array((value ? "true" : "false").utf8))
    }

    /// Writes `"key": null`.
    public mutating func null(_ key: String) {
        writeKey(key)
        output.append(contentsOf: Array("null".utf8))
    }

    /// Writes any ``JSONValue`` under `key` (or as an element when `key` is nil).
    public mutating func value(_ key: String?, _ value: JSONValue) {
        switch value {
        case .null: if let key { null(key) } else { raw(Array("null".utf8)) }
        case .bool(let b): if let key { bool(key, b) } else { raw(Array((b ? "true" : "false").utf8)) }
        case .number(let n): if let key { number(key, n) } else { raw(Array(n.utf8)) }
        case .string(let s): if let key { string(key, s) } else { string(s) }
        case .array(let elements):
            if let key {
                beginArray(key)
            } else {
                beforeValue()
                output.append(UInt8(ascii: "["))
                level += 1
                needsComma = false
            }
            for element in elements { self.value(nil, element) }
            endArray()
        case .object(let members):
            if let key { beginObject(key) } else { beginObject() }
            for (k, v) in members { self.value(k, v) }
            endObject()
        }
    }

    package mutating func raw(_ bytes: [UInt8]) {
        beforeValue()
        output.append(contentsOf: bytes)
        needsComma = true
    }

    package mutating func writeString(_ value: String) {
        output.append(UInt8(ascii: "\""))
        // Runs of bytes that need no escape are appended at once (a `latest_receipt` is one run of
        // kilobytes); only the rare escapes go byte by byte.
        let written: Void? = value.utf8.withContiguousStorageIfAvailable { text in
            var run = 0
            for index in 0..<text.count where text[index] < 0x20 || text[index] == 0x22 || text[index] == 0x5C {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: text[run..<index]))
                escape(text[index])
                run = index + 1
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: text[run...]))
        }
        if written == nil {
            for byte in value.utf8 { escape(byte) }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Appends one byte of a string value, escaped when JSON requires it.
    mutating func escape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): output.append(contentsOf: [0x5C, 0x22])
        case UInt8(ascii: "\\"): output.append(contentsOf: [0x5C, 0x5C])
        case 0x0A: output.append(contentsOf: [0x5C, UInt8(ascii: "n")])
        case 0x0D: output.append(contentsOf: [0x5C, UInt8(ascii: "r")])
        case 0x09: output.append(contentsOf: [0x5C, UInt8(ascii: "t")])
        case 0..<0x20:
            let hexDigits = Array("0123456789abcdef".utf8)
            output.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 15)]])
        default: output.append(byte)
        }
    }
}
