import Foundation
import Internals

// receipt-tool: look inside, verify, build and serve App Store receipts.
// Each subcommand lives in its own file and is registered here.

enum Tool {
    /// Every subcommand, in the order help lists them.
    static let subcommands: [Subcommand] = [
        DumpCommand.subcommand,
        ASN1Command.subcommand,
        VerifyCommand.subcommand,
        MakeCommand.subcommand,
        PKICommand.subcommand,
        ServeCommand.subcommand,
        APICommand.subcommand,
        SimulateCommand.subcommand,
        OfferSignatureCommand.subcommand,
        NotificationsCommand.subcommand,
    ]
}

nonisolated let toolOverview = """
    OVERVIEW: Inspect, verify, build and serve App Store receipts; call the App Store Server API.

    USAGE: receipt-tool <subcommand> [options]

    SUBCOMMANDS:
    \(Tool.subcommands.map { "  " + $0.name.padding(toLength: 16, withPad: " ", startingAt: 0) + $0.summary }.joined(separator: "\n"))

      See 'receipt-tool <subcommand> --help' for detailed help.
    """

nonisolated func runTool(_ arguments: [String]) -> Int32 {
    guard let name = arguments.first else {
        printError("Error: missing subcommand\n\n" + toolOverview)
        return ExitStatus.usage
    }
    if name == "-h" || name == "--help" || name == "help" {
        if name == "help", arguments.count > 1, let sub = Tool.subcommands.first(where: { $0.name == arguments[1] }) {
            printOut("OVERVIEW: \(sub.summary)\n\n\(sub.help)")
        } else {
            printOut(toolOverview)
        }
        return ExitStatus.success
    }
    guard let subcommand = Tool.subcommands.first(where: { $0.name == name }) else {
        printError("Error: unknown subcommand \(ManagementRequests.quoted(name))\nsee 'receipt-tool --help'")
        return ExitStatus.usage
    }
    let rest = Array(arguments.dropFirst())
    if rest.contains("-h") || rest.contains("--help") {
        printOut("OVERVIEW: \(subcommand.summary)\n\n\(subcommand.help)")
        return ExitStatus.success
    }
    do {
        return try subcommand.run(rest)
    } catch let error as UsageError {
        // One line that says what is wrong, and where the whole help is: not the help itself.
        printError("Error: \(message(error.message))\nsee 'receipt-tool \(subcommand.name) --help'")
        return ExitStatus.usage
    } catch let error as ToolFailure {
        printError("Error: \(message(error.message))")
        return ExitStatus.failure
    } catch {
        printError("Error: \(message("\(error)"))")
        return ExitStatus.failure
    }
}

/// An error message as the terminal shows it: secrets masked, then every character of the
/// terminal escaping rule escaped (line breaks included: a message is one line, whatever input it
/// quotes).
nonisolated func message(_ text: String) -> String {
    TerminalEscaping.escaped(Redaction.redacted(text))
}

exit(runTool(CommandLineBytes.arguments))
