import Foundation
import JSON
import ReceiptCrypto
import ReceiptSigning

/// `receipt-tool make --jws`: signs a payload object as a compact JWS, the App Store way.
enum MakeJWS {
    /// The nested tokens a notification carries, by parent member and name.
    static let nestedMembers = [("data", "signedTransactionInfo"), ("data", "signedRenewalInfo"), ("appData", "signedAppTransactionInfo")]

    static func run(_ args: Arguments, keyPath: String, certificatePath: String) throws -> Int32 {
        for flag in ["--ber", "--signed-attributes"] where args.flag(flag) {
            throw UsageError("\(flag) is for receipts, not with --jws")
        }
        for option in ["--digest", "--device-id"] where args.value(option) != nil {
            throw UsageError("\(option) is for receipts, not with --jws")
        }
        let path = args.positional[0]
        let payload = try MakeCommand.readJSON(path)
        guard case .object = payload else { throw ToolFailure("\(path): the payload must be a JSON object") }
        let key = try MakeCommand.loadKey(keyPath)
        // ES256 is ECDSA over P-256 and nothing else.
        guard key.kind == .ec(curve: "prime256v1") else {
            throw UsageError("--jws signs ES256, which needs an EC P-256 key: --key \(terminalQuoted(keyPath)) is \(key.kind)")
        }
        guard let certificate = try loadCertificates(certificatePath).first else {
            throw ToolFailure("\(certificatePath): no certificate")
        }
        try MakeCommand.checkKey(key, matches: certificate, keyPath: keyPath, certificatePath: certificatePath)
        var chain = [certificate]
        for chainPath in args.values("--chain") { chain += try loadCertificates(chainPath) }
        let signer = JWSSigner(key: key, chain: chain)
        let token: String
        do throws(CryptoError) {
            token = try sign(payload, with: signer)
        } catch {
            throw ToolFailure("cannot sign: \(error.reason)")
        }
        if let output = args.value("-o") {
            do {
                try Data((token + "\n").utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
            } catch {
                throw ToolFailure("\(output): \(error.localizedDescription)")
            }
            printOut("Wrote \(output): a \(token.utf8.count)-byte JWS, \(chain.count) certificate\(chain.count == 1 ? "" : "s") in x5c")
        } else {
            printOut(token)
        }
        return ExitStatus.success
    }

    /// Signs `payload` after replacing each nested token given as an object by its own JWS,
    /// signed by the same signer. The payload is written compactly, members in their order and
    /// numbers in their text.
    static func sign(_ payload: JSONValue, with signer: JWSSigner) throws(CryptoError) -> String {
        guard case .object(var members) = payload else { return try signer.sign(payload: payload.jsonBytes(indent: 0)) }
        for (parentName, name) in nestedMembers {
            guard let parentIndex = members.firstIndex(where: { $0.0 == parentName }), case .object(var inner) = members[parentIndex].1,
                let index = inner.firstIndex(where: { $0.0 == name }), case .object = inner[index].1
            else { continue }
            inner[index].1 = .string(try sign(inner[index].1, with: signer))
            members[parentIndex].1 = .object(inner)
        }
        return try signer.sign(payload: JSONValue.object(members).jsonBytes(indent: 0))
    }
}
