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

/// `receipt-tool make`: builds and signs a receipt, or signs a JWS payload, from a JSON
/// description.
enum MakeCommand {
    static let subcommand = Subcommand(
        name: "make",
        summary: "Build and sign a receipt, or sign StoreKit 2 signed data (JWS), from a JSON description.",
        help: """
            USAGE: receipt-tool make <description.json> --key <key.pem> --cert <cert.pem>
                                     [--chain <cert.pem> ...] [--ber] [--digest sha1|sha256]
                                     [--device-id <uuid|mac>] [--signed-attributes] [-o <out>]
                   receipt-tool make <payload.json> --jws --key <key.pem> --cert <cert.pem>
                                     [--chain <cert.pem> ...] [-o <out>]

            ARGUMENTS:
              <description.json>  The receipt as 'receipt-tool dump --json' prints it (a
                                  verifyReceipt "receipt" object, with opaque_value, sha1_hash and
                                  the other receipt-only fields), or a response holding one under
                                  "receipt". '-' reads standard input.
              <payload.json>      With --jws: the payload object to sign, exactly as written
                                  (members, order and number text kept; 'receipt-tool dump --json'
                                  of signed data prints one). A notification's
                                  data.signedTransactionInfo, data.signedRenewalInfo and
                                  appData.signedAppTransactionInfo given as objects are signed
                                  first, as nested JWS with the same key and chain.

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
              --jws               Sign the payload as a compact JWS the way the App Store does:
                                  header {"alg":"ES256","x5c":[cert, chain...]}, ES256 signature
                                  r ‖ s; the key must be P-256 ('receipt-tool pki --jws' makes
                                  one). The token is printed as text.
              -o <out>            Where to write the receipt or token (default: standard output,
                                  which must not be a terminal for a receipt).
              -h, --help          Show help information.
            """,
        run: run)

    static func run(_ arguments: [String]) throws -> Int32 {
        let args = try Arguments(
            arguments, valued: ["--key", "--cert", "--chain", "--digest", "--device-id", "-o"],
            flagNames: ["--ber", "--signed-attributes", "--jws"])
        guard args.positional.count == 1 else {
            throw UsageError(args.positional.isEmpty ? "missing <description.json>" : "expected one <description.json>")
        }
        guard let keyPath = args.value("--key") else { throw UsageError("missing --key <key.pem>") }
        guard let certificatePath = args.value("--cert") else { throw UsageError("missing --cert <cert.pem>") }
        if args.flag("--jws") { return try MakeJWS.run(args, keyPath: keyPath, certificatePath: certificatePath) }
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
        let key = try loadKey(keyPath)
        guard let certificate = try loadCertificates(certificatePath).first else {
            throw ToolFailure("\(certificatePath): no certificate")
        }
        try checkKey(key, matches: certificate, keyPath: keyPath, certificatePath: certificatePath)
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

    /// The private key in a PEM file.
    static func loadKey(_ path: String) throws(ToolFailure) -> PrivateKey {
        let bytes = try readInput(path)
        do throws(CryptoError) {
            return try PrivateKey(pemEncoded: String(decoding: bytes, as: UTF8.self))
        } catch {
            // The reason only: the error's description names a source file of this package.
            throw ToolFailure("\(path): not a PEM private key: \(error.reason)")
        }
    }

    /// Refuses (exit 64) a key that is not the certificate's: what it signed would not verify
    /// with the certificate it carries.
    static func checkKey(_ key: PrivateKey, matches certificate: Certificate, keyPath: String, certificatePath: String) throws {
        let matches: Bool
        do throws(CryptoError) {
            matches = try key.publicKey == certificate.publicKey
        } catch {
            throw ToolFailure("cannot compare --key with --cert: \(error.reason)")
        }
        guard matches else {
            throw UsageError(
                "--key \(terminalQuoted(keyPath)) is not the key of --cert \(terminalQuoted(certificatePath)) "
                    + "(\(key.kind) private key, certificate of \(terminalQuoted(certificate.subject.description)))")
        }
    }

    /// The JSON of the file at `path` (`-`: standard input); a parse error names the file.
    static func readJSON(_ path: String) throws(ToolFailure) -> JSONValue {
        let bytes = try readInput(path)
        do throws(JSONError) {
            return try JSONValue.parse(bytes)
        } catch {
            throw ToolFailure("\(path): \(error)")
        }
    }

    static func readDescription(_ path: String) throws(ToolFailure) -> AppReceipt {
        let json = try readJSON(path)
        var object = json
        if case .object = json, let inner = json["receipt"], case .object = inner { object = inner }
        do {
            return try AppReceipt(json: object)
        } catch {
            throw ToolFailure("\(path): \(error)")
        }
    }
}

/// `receipt-tool pki`: creates a test PKI shaped like Apple's receipt PKI or JWS PKI.
enum PKICommand {
    static let subcommand = Subcommand(
        name: "pki",
        summary: "Create a test PKI (root, intermediate, leaf with Apple-like markers) as PEM files.",
        help: """
            USAGE: receipt-tool pki <directory> [--digest sha1|sha256|sha384] [--bits <n>]
                                    [--jws] [--xcode] [--ocsp-url <url>] [--intermediate-ocsp-url <url>]

            ARGUMENTS:
              <directory>       Where to write the PEM files (created if missing; existing files
                                of the same names are replaced).

            OPTIONS:
              --digest <digest> The certificates' signature digest: sha1 or sha256 (the default)
                                for receipts; sha256 or sha384 (the default) with --jws.
              --bits <n>        RSA key size (default 2048); not with --jws.
              --jws             A PKI shaped like Apple's JWS PKI instead (Apple Root CA - G3 →
                                WWDR G6 → the ECC signing leaf): P-384 root, P-384 intermediate
                                with marker 1.2.840.113635.100.6.2.1 and path length 0, P-256
                                leaf with marker 1.2.840.113635.100.6.11.1, the signer of
                                'receipt-tool make --jws'.
              --xcode           Instead, one self-signed StoreKit-like certificate (storekit.pem,
                                storekit-key.pem), the anchor and signer of Xcode-style receipts.
                                With --jws: one self-signed P-256 "StoreKit Testing in Xcode"
                                certificate valid for a year from yesterday (xcode-jws.pem,
                                xcode-jws-key.pem), like the one Xcode signs JWS with.
              --ocsp-url <url>  The OCSP responder named in the leaf's Authority Information
                                Access (the responder for the intermediate's certificates).
              --intermediate-ocsp-url <url>
                                The responder named in the intermediate's (for the root's).
                                With either, index.txt (OpenSSL's CA index of the intermediate
                                and the leaf, both valid) is written too, so that
                                'openssl ocsp -index index.txt -CA intermediate.pem -rsigner
                                intermediate.pem -rkey intermediate-key.pem -port N' answers
                                for the leaf (and the same with root.pem for the intermediate).
              -h, --help        Show help information.

            FILES (default and --jws):
              root.pem, root-key.pem                  self-signed CA
              intermediate.pem, intermediate-key.pem  CA with marker 1.2.840.113635.100.6.2.1
              leaf.pem, leaf-key.pem                  signer with marker 1.2.840.113635.100.6.11.1
            The keys are unencrypted test keys: never trust this PKI outside tests.
            """,
        run: run)

    static func run(_ arguments: [String]) throws -> Int32 {
        let args = try Arguments(
            arguments, valued: ["--digest", "--bits", "--ocsp-url", "--intermediate-ocsp-url"], flagNames: ["--xcode", "--jws"])
        guard args.positional.count == 1 else {
            throw UsageError(args.positional.isEmpty ? "missing <directory>" : "expected one <directory>")
        }
        let jws = args.flag("--jws")
        var options = TestPKI.Options()
        switch (args.value("--digest")?.lowercased() ?? (jws ? "sha384" : "sha256"), jws) {
        case ("sha1", false): options.digest = .sha1
        case ("sha256", _): options.digest = .sha256
        case ("sha384", true): options.digest = .sha384
        case (let other, _): throw UsageError("--digest '\(other)' is not \(jws ? "sha256 or sha384" : "sha1 or sha256")")
        }
        if let text = args.value("--bits") {
            guard !jws else { throw UsageError("--bits sets RSA key sizes; a --jws PKI has EC keys (P-384, P-256)") }
            guard let bits = Int(text), (1024...8192).contains(bits) else { throw UsageError("--bits '\(text)' is not from 1024 to 8192") }
            options.keyBits = bits
        }
        for name in ["--ocsp-url", "--intermediate-ocsp-url"] {
            guard let text = args.value(name) else { continue }
            guard !args.flag("--xcode") else { throw UsageError("\(name) is for a PKI with an intermediate, not --xcode") }
            guard let url = URL(string: text), url.scheme == "http", url.host != nil else {
                throw UsageError("\(name) must be an http:// URL (OCSP is not fetched over https), found \(terminalQuoted(text))")
            }
        }
        options.leafOCSPURL = args.value("--ocsp-url")
        options.intermediateOCSPURL = args.value("--intermediate-ocsp-url")
        let directory = URL(fileURLWithPath: args.positional[0])
        var written: [(String, Certificate)] = []
        var index: String?
        do {
            if jws, args.flag("--xcode") {
                // Whole seconds, from yesterday: valid for a year, as Xcode's certificate is.
                let start = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 86_400).rounded(.down))
                let signer = try TestPKI.xcodeJWS(notBefore: start)
                guard let certificate = signer.chain.first else { throw ToolFailure("no Xcode certificate was made") }
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                try Data(certificate.pemEncoded.utf8).write(to: directory.appendingPathComponent("xcode-jws.pem"), options: .atomic)
                try Data(try signer.key.pemEncoded.utf8).write(to: directory.appendingPathComponent("xcode-jws-key.pem"), options: .atomic)
                written = [("xcode-jws.pem", certificate)]
            } else if jws {
                let pki = try TestPKI.jws {
                    $0.digest = options.digest
                    $0.leafOCSPURL = options.leafOCSPURL
                    $0.intermediateOCSPURL = options.intermediateOCSPURL
                }
                try pki.write(to: directory)
                written = [("root.pem", pki.root), ("intermediate.pem", pki.intermediate), ("leaf.pem", pki.leaf)]
                index = pki.opensslIndex()
            } else if args.flag("--xcode") {
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
                index = pki.opensslIndex()
            }
            if let index, options.leafOCSPURL != nil || options.intermediateOCSPURL != nil {
                try Data(index.utf8).write(to: directory.appendingPathComponent("index.txt"), options: .atomic)
                // `openssl ocsp -index` also reads index.txt.attr when it exists; none is needed.
            }
        } catch let error as ToolFailure {
            throw error
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
