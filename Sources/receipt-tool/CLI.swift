import Foundation
import Internals
import ReceiptCrypto
import ReceiptVerification
import Receipts

/// A subcommand of `receipt-tool`.
struct Subcommand: Sendable {
    let name: String
    let summary: String
    /// The help text after OVERVIEW: USAGE, ARGUMENTS, OPTIONS.
    let help: String
    /// Runs with the arguments after the subcommand name; returns the exit status.
    let run: @Sendable ([String]) throws -> Int32
}

/// Exit statuses, following swift-argument-parser: 0 success, 1 failure, 64 usage error.
enum ExitStatus {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 64
}

/// A mistake in how the tool was called: printed as one `Error: …` line followed by where the
/// subcommand's help is (`see 'receipt-tool <command> --help'`), exit 64.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// A failure of the work itself (bad input, unreadable file): printed as `Error: …`, exit 1.
struct ToolFailure: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// Writes to standard error. Text from input must be escaped first (``printLogLine(_:)``, the
/// `message` of an error, ``TextLayout/line(_:_:indent:)``).
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Writes one log line to standard error: every character of the terminal escaping rule escaped,
/// line breaks included, so text from input (a request's JSON key, a path) can never start a line
/// of its own.
func printLogLine(_ text: String) {
    FileHandle.standardError.write(Data((TerminalEscaping.escaped(text) + "\n").utf8))
}

/// Arguments of one subcommand: flags, options with values, and positional arguments.
struct Arguments {
    private(set) var positional: [String] = []
    private var options: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// Parses `arguments`; `valued` names the options that take a value (`--at DATE` or `--at=DATE`),
    /// `flagNames` the switches. Anything else starting with `-` is a usage error. `--` ends options.
    init(_ arguments: [String], valued: Set<String>, flagNames: Set<String>) throws(UsageError) {
        var index = 0
        var onlyPositional = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositional || argument == "-" || !argument.hasPrefix("-") {
                positional.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositional = true
                continue
            }
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            if valued.contains(name) {
                if let inlineValue {
                    options[name, default: []].append(inlineValue)
                } else {
                    guard index < arguments.count else { throw UsageError("option \(name) needs a value") }
                    options[name, default: []].append(arguments[index])
                    index += 1
                }
            } else if flagNames.contains(name), inlineValue == nil {
                flags.insert(name)
            } else {
                throw UsageError("unknown option \(ManagementRequests.quoted(argument))")
            }
        }
    }

    func flag(_ name: String) -> Bool { flags.contains(name) }
    func value(_ name: String) -> String? { options[name]?.last }
    func values(_ name: String) -> [String] { options[name] ?? [] }

    /// Refuses operands where `command` takes none: `<command> takes no arguments, found <first>`.
    func requireNoOperands(_ command: String) throws(UsageError) {
        if let first = positional.first { throw UsageError("\(command) takes no arguments, found \(first)") }
    }

    /// The value of an option that must be given, not empty.
    func required(_ name: String) throws(UsageError) -> String {
        guard let value = value(name), !value.isEmpty else { throw UsageError("\(name) is required") }
        return value
    }

    /// The repeatable `--environment production|sandbox|xcode`, mapped to the caller's environment
    /// type (receipts and signed data each have one); nil when the option is absent.
    func environments<Environment: Hashable>(production: Environment, sandbox: Environment, xcode: Environment) throws(UsageError)
        -> Set<Environment>?
    {
        let names = values("--environment")
        guard !names.isEmpty else { return nil }
        var allowed = Set<Environment>()
        for name in names {
            switch name.lowercased() {
            case "production": allowed.insert(production)
            case "sandbox": allowed.insert(sandbox)
            case "xcode": allowed.insert(xcode)
            default: throw UsageError("--environment '\(name)' is not production, sandbox or xcode")
            }
        }
        return allowed
    }
}

/// The most bytes any input may have: the parsers' own limit (`ReceiptLimits` and `ASN1Limits`
/// default to 64 MiB). Inputs are read through `FileBytes`, which stops at this limit while reading.
let inputLimit = 64 << 20

/// A whole input, at most `limit` bytes: a file, FIFO, process substitution or device at `path`, or
/// standard input for `-`. Reading stops at the limit (never more than `limit + 1` bytes are read;
/// a regular file is refused from its size), so `/dev/zero` or an endless pipe fails at once with
/// "input too large".
func readInput(_ path: String, limit: Int = inputLimit) throws(ToolFailure) -> [UInt8] {
    do throws(FileBytes.Failure) {
        if path == "-" { return try FileBytes.readStandardInput(maximumSize: limit) }
        return try FileBytes.read(CommandLineBytes.path(path), maximumSize: limit)
    } catch {
        throw ToolFailure("\(path == "-" ? "standard input" : path): \(error.reason(limit: limit))")
    }
}

/// The command line as bytes: Swift's `CommandLine.arguments` replaces bytes that are not UTF-8,
/// which loses file names that are not UTF-8. Such an argument reaches the subcommands as its
/// escaped form (`caf\xE9.der`, see `FileBytes.escaped`), and ``path(_:)`` turns that form back
/// into the original bytes.
enum CommandLineBytes {
    /// The raw bytes of each argument, the program name first.
    static let raw: [[UInt8]] = (0..<Int(CommandLine.argc)).map { index in
        guard let pointer = CommandLine.unsafeArgv[index] else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)))
    }

    /// The arguments after the program name, those that are not UTF-8 in their escaped form.
    static let arguments: [String] = raw.dropFirst().map { bytes in
        String(validating: bytes, as: UTF8.self) ?? FileBytes.escaped(bytes)
    }

    /// Escaped form → bytes, for the arguments that are not UTF-8. An escaped form that is also
    /// given literally as another argument is left out (ambiguous: both mean the literal text).
    static let escapedPaths: [String: FileBytes.Path] = {
        let literal = Set(raw.dropFirst().compactMap { String(validating: $0, as: UTF8.self) })
        var table: [String: FileBytes.Path] = [:]
        for bytes in raw.dropFirst() where String(validating: bytes, as: UTF8.self) == nil {
            let escaped = FileBytes.escaped(bytes)
            if !literal.contains(escaped) { table[escaped] = FileBytes.Path(bytes: bytes) }
        }
        return table
    }()

    /// The path an argument names: its original bytes when it was not UTF-8.
    static func path(_ argument: String) -> FileBytes.Path {
        escapedPaths[argument] ?? FileBytes.Path(argument)
    }
}

/// The DER or PEM certificates in a file (or standard input for `-`); at least one.
func loadCertificates(_ path: String) throws(ToolFailure) -> [Certificate] {
    let bytes = try readInput(path)
    let certificates: [Certificate]
    do {
        certificates = try Certificate.load(bytes)
    } catch {
        throw ToolFailure("\(path): not a DER or PEM certificate: \(error.reason)")
    }
    guard !certificates.isEmpty else { throw ToolFailure("\(path): no certificate") }
    return certificates
}

/// A pinned intermediate for iOS 6 transaction receipts: the one certificate in the file the
/// option names, or the bundled copy.
func pinnedIntermediate(_ args: Arguments, option: String, bundled: BundledAnchor) throws(ToolFailure) -> Certificate {
    if let path = args.value(option) {
        let certificates = try loadCertificates(path)
        guard certificates.count == 1, let only = certificates.first else {
            throw ToolFailure("\(path): \(option) needs exactly one certificate, found \(certificates.count)")
        }
        return only
    }
    do throws(TrustAnchorError) {
        return try BundledAnchors.certificate(bundled)
    } catch {
        throw ToolFailure("cannot load the bundled \(bundled): \(error)")
    }
}

/// A file path or a name as it reaches the terminal: in double quotes, whole (never shortened),
/// escaped by the one terminal rule with its quotes and backslashes, so that it can neither move
/// the cursor nor end the quote.
func terminalQuoted(_ path: String) -> String {
    TerminalEscaping.quoted(path)
}

/// Lowercase hex of bytes, shortened to `limit` bytes with an ellipsis.
func hexPreview(_ bytes: some Collection<UInt8>, limit: Int = 24) -> String {
    let shown = bytes.prefix(limit).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    return bytes.count > limit ? shown + "…" : shown
}

/// Writes to standard output without buffering surprises when piped. Text from input must be
/// escaped first: JSON by the JSON writer, fields by ``TextLayout/line(_:_:indent:)``.
func printOut(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}
