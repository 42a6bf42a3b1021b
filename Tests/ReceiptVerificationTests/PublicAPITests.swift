import Foundation
import TestSupport
import Testing

/// No public declaration anywhere in Sources/ mentions `OpaquePointer` or an OpenSSL (COpenSSL)
/// type; the compiler does not catch an `OpaquePointer` leaking into API, so this test does.
@Suite struct PublicAPITests {
    static let sources = Fixtures.packageRoot.appendingPathComponent("Sources")

    /// C types OpenSSL's headers declare (X509, X509_STORE, EVP_PKEY, PKCS7, ASN1_STRING, BIO,
    /// BIGNUM, …), `OpaquePointer`, and the module name itself (a `public import COpenSSL`).
    /// Word boundaries keep Swift names such as `PKCS7Verifier` or `X509Handle` out.
    static let forbidden = try? NSRegularExpression(
        pattern:
            #"\b(OpaquePointer|COpenSSL|X509(_[A-Z0-9_]+)?|EVP_[A-Z0-9_]+|PKCS7(_[A-Z0-9_]+)?|ASN1_[A-Z0-9_]+|BIO(_[A-Z0-9_]+)?|BIGNUM|BN_[A-Z0-9_]+|EC_[A-Z0-9_]+|RSA_[A-Z0-9_]*|OSSL_[A-Z0-9_]+|CMS_[A-Z0-9_]+|ERR_[A-Z0-9_]+)\b"#
    )

    static let publicDeclaration = try? NSRegularExpression(pattern: #"^\s*(@[A-Za-z_]+(\([^)]*\))?\s+)*(public|open)\b"#)

    /// Each public declaration's text: from its `public`/`open` line up to the line that opens its
    /// body (`{`) or, for one-line declarations, the end of the line once parentheses balance.
    static func publicDeclarations(in text: String) -> [(line: Int, text: String)] {
        guard let publicDeclaration else { return [] }
        let lines = text.components(separatedBy: "\n")
        var result: [(Int, String)] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            let range = NSRange(line.startIndex..., in: line)
            guard publicDeclaration.firstMatch(in: line, range: range) != nil else {
                index += 1
                continue
            }
            var declaration = ""
            var depth = 0
            var end = index
            while end < lines.count {
                let current = lines[end].components(separatedBy: "//").first ?? ""
                declaration += current + "\n"
                depth += current.filter { $0 == "(" }.count - current.filter { $0 == ")" }.count
                if current.contains("{") || (depth <= 0 && !current.trimmingCharacters(in: .whitespaces).hasSuffix(",")) { break }
                end += 1
            }
            result.append((index + 1, declaration))
            index = end + 1
        }
        return result
    }

    @Test func noPublicDeclarationMentionsOpaquePointerOrAnOpenSSLType() throws {
        let forbidden = try #require(Self.forbidden)
        let files = try #require(FileManager.default.enumerator(atPath: Self.sources.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") }
        #expect(files.count > 20, "found the sources")
        var offenders: [String] = []
        var declarations = 0
        for file in files {
            let text = try String(contentsOf: Self.sources.appendingPathComponent(file), encoding: .utf8)
            for (line, declaration) in Self.publicDeclarations(in: text) {
                declarations += 1
                let range = NSRange(declaration.startIndex..., in: declaration)
                if forbidden.firstMatch(in: declaration, range: range) != nil {
                    offenders.append("\(file):\(line): \(declaration.trimmingCharacters(in: .whitespacesAndNewlines))")
                }
            }
        }
        #expect(declarations > 300, "the scan saw the public API (\(declarations) declarations)")
        #expect(offenders.isEmpty, "\(offenders.joined(separator: "\n"))")
    }

    /// The scanner itself finds what it must find.
    @Test func theScanCatchesLeaks() throws {
        let forbidden = try #require(Self.forbidden)
        let samples = """
            public func handle() -> OpaquePointer { fatalError() }
            public var store: UnsafeMutablePointer<X509_STORE>?
            public init(
                key: UnsafeMutablePointer<EVP_PKEY>
            ) {}
            public import COpenSSL
            @inlinable public func p7(_ p: UnsafePointer<PKCS7>) {}
            public struct PKCS7Verifier {}
            public let x509Handle: X509Handle
            internal func hidden(_ p: OpaquePointer) {}
            """
        let flagged = Self.publicDeclarations(in: samples).filter {
            forbidden.firstMatch(in: $0.text, range: NSRange($0.text.startIndex..., in: $0.text)) != nil
        }
        #expect(flagged.map(\.line) == [1, 2, 3, 6, 7])
    }
}
