import Foundation
import Internals
import JSON
import ReceiptCrypto
import ReceiptSigning
import Receipts

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `receipt-tool make`: builds and signs a receipt from a JSON description.
enum MakeCommand {
    static let subcommand = Subcommand(
        name: "make",
        summary: "Build and sign a receipt from a JSON description.",
        help: """
            USAGE: receipt-tool make <description.json> --key <key.pem> --cert <cert.pem>
                                     [--chain <cert.pem> ...] [--ber] [--digest sha1|sha256]
                                     [--device-id <uuid|mac>] [--signed-attributes] [-o <out>]

            ARGUMENTS:
              <description.json>  The receipt as 'receipt-tool dump --json' prints it (a
                                  verifyReceipt "receipt" object, with opaque_value, sha1_hash and
                                  the other receipt-only fields), or a response holding one under
                                  "receipt". '-' reads standard input.

            OPTIONS:
              --key <key.pem>     The signer's private key (PEM: PKCS#8, RSA or EC; unencrypted).
              --cert <cert.pem>   The signer's certificate (PEM or DER).
              --chain <cert.pem>  Certificates embedded after the signer's, in order (repeatable;
                                  a PEM file may hold several). Apple embeds the intermediate and
                                  the root.
              --ber               Xcode layout: BER indefinite lengths, a segmented payload,
                                  attributes in model order. Default: App Store layout (DER).
              --digest <digest>   sha1 or sha256 (default sha256).
              --device-id <id>    Bind the receipt to this device: sets sha1_hash to
                                  SHA-1(device ‖ opaque_value ‖ bundle id).
              --signed-attributes Add PKCS#7 signed attributes (content type, message digest);
                                  Apple's receipts have none.
              -o <out>            Where to write the receipt (default: standard output, which
                                  must not be a terminal).
              -h, --help          Show help information.
            """,
        run: run)

    static func run(_ arguments: [String]) throws -> Int32 {
        let args = try Arguments(
            arguments, valued: ["--key", "--cert", "--chain", "--digest", "--device-id", "-o"],
            flagNames: ["--ber", "--signed-attributes"])
        guard args.positional.count == 1 else {
            throw UsageError(args.positional.isEmpty ? "missing <description.json>" : "expected one <description.json>")
        }
        guard let keyPath = args.value("--key") else { throw UsageError("missing --key <key.pem>") }
        guard let certificatePath = args.value("--cert") else { throw UsageError("missing --cert <cert.pem>") }
        let digest: DigestAlgorithm
        switch args.value("--digest")?.lowercased() ?? "sha256" {
        case "sha1": digest = .sha1
        case "sha256": digest = .sha256
        case let other: throw UsageError("--digest '\(other)' is not sha1 or sha256")
        }
        var device: DeviceIdentifier?
        if let text = args.value("--device-id") {
            guard let parsed = VerifyCommand.parseDevice(text) else {
                throw UsageError("--device-id '\(text)' is neither a UUID, a MAC address, nor base64 of 16 or 6 bytes")
            }
            device = parsed
        }
        let output = args.value("-o")
        if output == nil, isatty(STDOUT_FILENO) == 1 {
            throw UsageError("refusing to write a binary receipt to a terminal; use -o <out> or redirect")
        }

        let descriptionPath = args.positional[0]
        var receipt = try readDescription(descriptionPath)
        if let device {
            guard let hash = receipt.expectedHash(for: device) else {
                throw ToolFailure("\(descriptionPath): --device-id needs opaque_value and bundle_id in the description")
            }
            receipt.sha1Hash = hash
        }
        let key: PrivateKey
        do {
            key = try PrivateKey(pemEncoded: String(decoding: try readInput(keyPath), as: UTF8.self))
        } catch {
            throw ToolFailure("\(keyPath): \(error)")
        }
        guard let certificate = try loadCertificates(certificatePath).first else {
            throw ToolFailure("\(certificatePath): no certificate")
        }
        var chain: [Certificate] = []
        for path in args.values("--chain") { chain += try loadCertificates(path) }

        let signer = ReceiptSigner(
            key: key, certificate: certificate, chain: chain, digest: digest, signedAttributes: args.flag("--signed-attributes"))
        let bytes: [UInt8]
        do {
            bytes = try signer.sign(receipt, layout: args.flag("--ber") ? .xcode : .appStore)
        } catch {
            throw ToolFailure("cannot sign: \(error)")
        }
        if let output {
            do {
                try Data(bytes).write(to: URL(fileURLWithPath: output), options: .atomic)
            } catch {
                throw ToolFailure("\(output): \(error.localizedDescription)")
            }
            printOut(
                "Wrote \(output): \(bytes.count) bytes, \(args.flag("--ber") ? "BER (Xcode)" : "DER (App Store)"), \(digest), "
                    + "\(1 + chain.count) certificate\(chain.isEmpty ? "" : "s"), \(receipt.inAppPurchases.count) in-app purchase\(receipt.inAppPurchases.count == 1 ? "" : "s")"
            )
        } else {
            FileHandle.standardOutput.write(Data(bytes))
        }
        return ExitStatus.success
    }

    static func readDescription(_ path: String) throws(ToolFailure) -> AppReceipt {
        let bytes = try readInput(path)
        let json: JSONValue
        do {
            json = try JSONValue.parse(bytes)
        } catch {
            throw ToolFailure("\(path): \(error)")
        }
        var object = json
        if case .object = json, let inner = json["receipt"], case .object = inner { object = inner }
        do {
            return try AppReceipt(json: object)
        } catch {
            throw ToolFailure("\(path): \(error)")
        }
    }
}

/// `receipt-tool pki`: creates a test PKI shaped like Apple's receipt PKI.
enum PKICommand {
    static let subcommand = Subcommand(
        name: "pki",
        summary: "Create a test PKI (root, intermediate, leaf with Apple-like markers) as PEM files.",
        help: """
            USAGE: receipt-tool pki <directory> [--digest sha1|sha256] [--bits <n>] [--xcode]

            ARGUMENTS:
              <directory>       Where to write the PEM files (created if missing; existing files
                                of the same names are replaced).

            OPTIONS:
              --digest <digest> The certificates' signature digest: sha1 or sha256 (default).
              --bits <n>        RSA key size (default 2048).
              --xcode           Instead, one self-signed StoreKit-like certificate (storekit.pem,
                                storekit-key.pem), the anchor and signer of Xcode-style receipts.
              -h, --help        Show help information.

            FILES (default):
              root.pem, root-key.pem                  self-signed CA
              intermediate.pem, intermediate-key.pem  CA with marker 1.2.840.113635.100.6.2.1
              leaf.pem, leaf-key.pem                  receipt signer with marker 1.2.840.113635.100.6.11.1
            The keys are unencrypted test keys: never trust this PKI outside tests.
            """,
        run: run)

    static func run(_ arguments: [String]) throws -> Int32 {
        let args = try Arguments(arguments, valued: ["--digest", "--bits"], flagNames: ["--xcode"])
        guard args.positional.count == 1 else {
            throw UsageError(args.positional.isEmpty ? "missing <directory>" : "expected one <directory>")
        }
        var options = TestPKI.Options()
        switch args.value("--digest")?.lowercased() ?? "sha256" {
        case "sha1": options.digest = .sha1
        case "sha256": options.digest = .sha256
        case let other: throw UsageError("--digest '\(other)' is not sha1 or sha256")
        }
        if let text = args.value("--bits") {
            guard let bits = Int(text), (1024...8192).contains(bits) else { throw UsageError("--bits '\(text)' is not from 1024 to 8192") }
            options.keyBits = bits
        }
        let directory = URL(fileURLWithPath: args.positional[0])
        var written: [(String, Certificate)] = []
        do {
            if args.flag("--xcode") {
                let storeKit = try TestPKI.storeKitTestCertificate()
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                try Data(storeKit.certificate.pemEncoded.utf8).write(to: directory.appendingPathComponent("storekit.pem"), options: .atomic)
                try Data(try storeKit.key.pemEncoded.utf8).write(
                    to: directory.appendingPathComponent("storekit-key.pem"), options: .atomic)
                written = [("storekit.pem", storeKit.certificate)]
            } else {
                let pki = try TestPKI.generate(options)
                try pki.write(to: directory)
                written = [("root.pem", pki.root), ("intermediate.pem", pki.intermediate), ("leaf.pem", pki.leaf)]
            }
        } catch {
            throw ToolFailure("\(directory.path): \(error)")
        }
        for (name, certificate) in written {
            let fingerprint = (try? certificate.sha256Fingerprint).map { Hex.encode($0) } ?? "?"
            printOut("\((args.positional[0] as NSString).appendingPathComponent(name)): \(certificate.subject) (SHA-256 \(fingerprint))")
        }
        return ExitStatus.success
    }
}
