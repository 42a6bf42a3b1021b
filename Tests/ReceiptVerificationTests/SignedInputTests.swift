import Foundation
import JWS
import ReceiptVerification
import Receipts
import TestSupport
import Testing

/// `SignedInput.detect`: the one detection of every signed format, each kind told apart, and
/// every hostile input refused with a typed error.
@Suite struct SignedInputTests {
    static func base64(_ bytes: [UInt8]) -> [UInt8] { Array(Data(bytes).base64EncodedString().utf8) }

    @Test func appReceiptsAsDERBase64AndRequestBodies() throws {
        let der = try Fixtures.bytes("base64encodedreceiptsample1.der")
        let body = Array("{\"receipt-data\": \"\(Data(der).base64EncodedString())\"}".utf8)
        for input in [der, Self.base64(der), body] {
            #expect(try SignedInput.detect(input) == .appReceipt(der))
        }
        let xcode = try Fixtures.bytes("receipt-xcode.der")
        #expect(try SignedInput.detect(xcode) == .appReceipt(xcode))
        #expect(try SignedInput.detect(xcode).described == "an app receipt")
    }

    @Test func transactionReceiptsAsTextAndBase64() throws {
        let encoded = try Fixtures.bytes("legacy/venice-legacy-transaction-receipt.b64")
        guard case .transactionReceipt(let text) = try SignedInput.detect(encoded) else {
            Issue.record("not detected as a transaction receipt")
            return
        }
        #expect(text.first == UInt8(ascii: "{"))
        #expect(try SignedInput.detect(text) == .transactionReceipt(text))
        #expect(try SignedInput.detect(text).described == "an iOS 6 transaction receipt")
    }

    @Test(arguments: [
        ("jws/gopay/sandbox-transaction-2000000184445477.jws", AppStorePayloadKind.transaction),
        ("jws/go-iap/sandbox-renewal-info-2000000335310644.jws", .renewalInfo),
        ("jws/apple/xcode/xcode-signed-app-transaction.jws", .appTransaction),
        ("jws/appstore-iap/sandbox-notification-TEST.jws", .notification),
    ])
    func signedDataWithItsKind(file: String, kind: AppStorePayloadKind) throws {
        let bytes = try Fixtures.bytes(file)
        guard case .signedData(.token(let jws), let detected) = try SignedInput.detect(bytes) else {
            Issue.record("\(file) not detected as a token")
            return
        }
        #expect(detected == kind)
        #expect(try SignedInput.detect(bytes).verifiableBytes == jws.token)
        // Surrounding whitespace is read as the token.
        #expect(try SignedInput.detect(Array(" \n".utf8) + bytes + Array("\r\n".utf8)).verifiableBytes == jws.token)
    }

    @Test func notificationBodies() throws {
        let body = try Fixtures.bytes("jws/appstore-iap/test-notification-signed-payload.json")
        guard case .signedData(.notificationBody(let jws), let kind) = try SignedInput.detect(body) else {
            Issue.record("not detected as a notification body")
            return
        }
        #expect(kind == .notification)
        #expect(try SignedInput.detect(body).verifiableBytes == jws.token)
        #expect(try SignedInput.detect(body).described == "signed data (a notification)")
    }

    /// Each hostile input gives the typed error: its code and the offset where it went wrong.
    @Test func hostileInputsGiveTypedErrors() throws {
        let token = String(decoding: try Fixtures.bytes("jws/gopay/sandbox-transaction-2000000184445477.jws"), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let cases: [(String, [UInt8], SignedInputError.Code)] = [
            ("empty", [], .notRecognised),
            ("blank", Array("  \n".utf8), .notRecognised),
            ("plain text", Array("hello, world".utf8), .notRecognised),
            ("JSON of another kind", Array("{\"receipt\": 1}".utf8), .notRecognised),
            ("binary", [0x00, 0xFF, 0x10, 0x80], .notRecognised),
            ("bad base64", Array("QUJD=QUJD".utf8), .invalidBase64),
            ("a token with three dots", Array((token + ".AAAA").utf8), .malformedSignedData),
            ("a token cut short", Array(token.split(separator: ".").prefix(2).joined(separator: ".").utf8), .malformedSignedData),
            ("a body whose signedPayload is a number", Array("{\"signedPayload\": 5}".utf8), .malformedSignedData),
            ("a body whose token is junk", Array("{\"signedPayload\": \"eyJ.x\"}".utf8), .malformedSignedData),
        ]
        for (name, bytes, code) in cases {
            #expect(throws: SignedInputError.self, "\(name)") { try SignedInput.detect(bytes) }
            do {
                _ = try SignedInput.detect(bytes)
            } catch {
                #expect(error.code == code, "\(name): \(error)")
                if code == .notRecognised { #expect(error.offset == 0, "\(name)") }
                if code == .notRecognised, !bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A }) {
                    #expect(error.reason.contains("tried App Store signed data"), "\(name): \(error)")
                    #expect(error.reason.contains("transaction receipt"), "\(name)")
                }
                if code == .malformedSignedData { #expect(error.jws != nil, "\(name)") }
            }
        }
    }

    @Test func tooLargeIsRefusedBeforeReading() throws {
        var limits = ReceiptLimits.default
        limits.maximumInputSize = 16
        let der = [UInt8](repeating: 0x30, count: 64)
        #expect(throws: SignedInputError.self) { try SignedInput.detect(der, receiptLimits: limits) }
        do {
            _ = try SignedInput.detect(der, receiptLimits: limits)
        } catch {
            #expect(error.code == .inputTooLarge)
        }
        var jwsLimits = JWSLimits.default
        jwsLimits.maximumTokenSize = 32
        let token = Array(("eyJ" + String(repeating: "A", count: 64) + ".e30.AA").utf8)
        do {
            _ = try SignedInput.detect(token, jwsLimits: jwsLimits)
            Issue.record("an oversized token was read")
        } catch {
            #expect(error.code == .inputTooLarge)
        }
    }
}
