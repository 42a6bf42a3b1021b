import CYardsticks
import Foundation
import JWS
import ReceiptCrypto
import ReceiptVerification
import Receipts

/// Issue 26: the first verification. `receipt-verify-cold` and `jws-verify-cold` verify one input
/// the way a CLI run or a fresh worker does: the anchors read from their DER bytes, a new verifier,
/// a new (empty) chain cache and no header cache, at the input's own signed date, per operation.
/// Each is timed interleaved with its C floor (`receipt-chain-floor`, `jws-chain-floor`; see
/// CYardsticks.h), so load on the shared machine falls on both alike.
///
/// Process-wide state, and how these cases bypass it: ``ChainCache/shared`` is bypassed (each
/// operation makes its own ``ChainCache``); no ``JWSHeaderCache`` is used; the bundled anchors are
/// not used (the anchors are parsed from their bytes per operation, so no parsed certificate
/// survives an operation); ReceiptCrypto builds each ``TrustStore``'s `X509_STORE` per validation,
/// so no store survives either. What is kept, as the floors keep it: the digests ReceiptCrypto
/// fetches once per process, and OpenSSL's own internal caches (its method store).
enum ColdVerificationBench {
    /// The DER certificates of a validated chain, leaf first and anchor last, read by one warm
    /// verification beforehand (the floors are handed the path; they do not search for it).
    static func chainBytes(_ chain: [Certificate]?) throws -> [[UInt8]] {
        guard let chain, chain.count >= 2 else { throw BenchmarkError(description: "the input does not verify at its signed date") }
        return chain.map(\.derEncoded)
    }

    /// One cold verification of `bytes` (a receipt or a JWS) or, with `floor`, its C floor; each
    /// returns 1 when the input verifies.
    static func operation(_ bytes: [UInt8], anchorBytes: [[UInt8]], floor: Bool) throws -> () -> Int {
        if try SignedDataInput.detect(bytes) != nil {
            let (cold, chainFloor) = try jwsOperations(bytes, anchorBytes: anchorBytes)
            return floor ? chainFloor : cold
        }
        let (cold, chainFloor) = try receiptOperations(bytes, anchorBytes: anchorBytes)
        return floor ? chainFloor : cold
    }

    static func anchors(_ anchorBytes: [[UInt8]]) throws -> TrustAnchors {
        var certificates: [Certificate] = []
        for bytes in anchorBytes { certificates += try TrustAnchors(derOrPEM: bytes).certificates }
        return TrustAnchors(certificates)
    }

    /// receipt-verify-cold and receipt-chain-floor on one receipt.
    static func receiptOperations(_ bytes: [UInt8], anchorBytes: [[UInt8]]) throws -> (cold: () -> Int, floor: () -> Int) {
        let verdict = AppReceiptVerifier(anchors: try anchors(anchorBytes), policy: .appStore, cache: nil).verify(bytes)
        let chain = try chainBytes(verdict.chain)
        guard let time = verdict.validationTime else { throw BenchmarkError(description: "no validation time") }
        let floor = try RSAFloor(bytes)
        let payload = Array(floor.payload)
        let signature = Array(floor.signature)
        let seconds = Int64(time.timeIntervalSince1970.rounded(.down))
        let cold = {
            guard let anchors = try? anchors(anchorBytes) else { return -1 }
            let verifier = AppReceiptVerifier(anchors: anchors, policy: .appStore, cache: ChainCache())
            return verifier.verify(bytes).isValid ? 1 : 0
        }
        return (cold, { Int(ChainFloor.receipt(chain: chain, payload: payload, signature: signature, time: seconds)) })
    }

    /// jws-verify-cold and jws-chain-floor on one token.
    static func jwsOperations(_ bytes: [UInt8], anchorBytes: [[UInt8]]) throws -> (cold: () -> Int, floor: () -> Int) {
        guard let input = try SignedDataInput.detect(bytes) else { throw BenchmarkError(description: "not a JWS") }
        let jws = input.jws
        let policy: VerificationPolicy = jws.header.certificateChain?.count == 1 ? .xcode : .appStore
        let makeVerify = try coldVerifier(bytes, kind: AppStorePayloadKind.of(jsonPayload: jws.unverifiedPayload), policy: policy)
        let setup = makeVerify(try anchors(anchorBytes), nil)
        guard setup.valid else { throw BenchmarkError(description: "jws-verify-cold: the token does not verify at its signed date") }
        let chain = try chainBytes(setup.chain)
        let signingInput = Array(jws.signingInput)
        let signature = JWSDecodeBench.derSignature(jws.signature)
        let cold = {
            guard let anchors = try? anchors(anchorBytes) else { return -1 }
            return makeVerify(anchors, ChainCache()).valid ? 1 : 0
        }
        return (cold, { Int(ChainFloor.jws(chain: chain, signingInput: signingInput, signature: signature)) })
    }

    /// `receipt-verify-cold` beside `receipt-chain-floor`.
    static func measureReceipt(_ bytes: [UInt8], anchorBytes: [[UInt8]], with harness: Harness, into report: inout Report) throws {
        let (coldOperation, floorOperation) = try receiptOperations(bytes, anchorBytes: anchorBytes)
        let cold = Measurement(name: "receipt-verify-cold", bytes: bytes.count, expected: 1) { coldOperation() }
        let floorMeasurement = Measurement(name: "receipt-chain-floor", bytes: bytes.count, expected: 1) { floorOperation() }
        let (a, b, ratio) = try harness.measurePair(cold, floorMeasurement)
        report.results += [a, b]
        report.ratios.append(("receipt-verify-cold vs receipt-chain-floor (target ≤ 1.1×, interleaved)", ratio))
    }

    /// `jws-verify-cold` beside `jws-chain-floor`.
    static func measureJWS(_ bytes: [UInt8], anchorBytes: [[UInt8]], with harness: Harness, into report: inout Report) throws {
        let (coldOperation, floorOperation) = try jwsOperations(bytes, anchorBytes: anchorBytes)
        let cold = Measurement(name: "jws-verify-cold", bytes: bytes.count, expected: 1) { coldOperation() }
        let floorMeasurement = Measurement(name: "jws-chain-floor", bytes: bytes.count, expected: 1) { floorOperation() }
        let (a, b, ratio) = try harness.measurePair(cold, floorMeasurement)
        report.results += [a, b]
        report.ratios.append(("jws-verify-cold vs jws-chain-floor (target ≤ 1.1×, interleaved)", ratio))
    }

    /// What one cold verification found.
    struct Outcome {
        let valid: Bool
        let chain: [Certificate]?
    }

    /// A function that makes a verifier of the token's kind from anchors and a cache (no header
    /// cache), verifies `bytes` at its signed date, and says whether it is valid and which chain
    /// it validated.
    static func coldVerifier(_ bytes: [UInt8], kind: AppStorePayloadKind, policy: VerificationPolicy) throws -> (
        TrustAnchors, ChainCache?
    ) -> Outcome {
        switch kind {
        case .transaction:
            return { anchors, cache in
                let verdict = JWSTransactionVerifier(anchors: anchors, policy: policy, cache: cache).verify(bytes)
                return Outcome(valid: verdict.isValid, chain: verdict.chain)
            }
        case .renewalInfo:
            return { anchors, cache in
                let verdict = JWSRenewalInfoVerifier(anchors: anchors, policy: policy, cache: cache).verify(bytes)
                return Outcome(valid: verdict.isValid, chain: verdict.chain)
            }
        case .appTransaction:
            return { anchors, cache in
                let verdict = AppTransactionVerifier(anchors: anchors, policy: policy, cache: cache).verify(bytes)
                return Outcome(valid: verdict.isValid, chain: verdict.chain)
            }
        case .notification:
            return { anchors, cache in
                let verdict = NotificationVerifier(anchors: anchors, policy: policy, cache: cache).verify(bytes)
                return Outcome(valid: verdict.isValid, chain: verdict.chain)
            }
        case .realtimeRequest, .unknown:
            throw BenchmarkError(description: "the payload is a \(kind.rawValue); jws-verify-cold verifies App Store payload kinds")
        }
    }
}

/// The C floors of CYardsticks, called with Swift arrays.
enum ChainFloor {
    /// `cy_receipt_chain_floor` over `chain` (leaf first, anchor last).
    static func receipt(chain: [[UInt8]], payload: [UInt8], signature: [UInt8], time: Int64) -> Int32 {
        withBytesList(chain) { list in
            payload.withUnsafeBufferPointer { p in
                signature.withUnsafeBufferPointer { s in
                    cy_receipt_chain_floor(
                        list.baseAddress, list.count, cy_bytes(bytes: p.baseAddress, length: p.count),
                        cy_bytes(bytes: s.baseAddress, length: s.count), time)
                }
            }
        }
    }

    /// `cy_jws_chain_floor` over `chain` (leaf first, anchor last).
    static func jws(chain: [[UInt8]], signingInput: [UInt8], signature: [UInt8]) -> Int32 {
        withBytesList(chain) { list in
            signingInput.withUnsafeBufferPointer { p in
                signature.withUnsafeBufferPointer { s in
                    cy_jws_chain_floor(
                        list.baseAddress, list.count, cy_bytes(bytes: p.baseAddress, length: p.count),
                        cy_bytes(bytes: s.baseAddress, length: s.count))
                }
            }
        }
    }

    /// Calls `body` with a `cy_bytes` for each array (at most four; the floors take no more).
    private static func withBytesList<R>(_ arrays: [[UInt8]], _ body: (UnsafeBufferPointer<cy_bytes>) -> R) -> R {
        func nest(_ index: Int, _ collected: [cy_bytes]) -> R {
            guard index < arrays.count else { return collected.withUnsafeBufferPointer(body) }
            return arrays[index].withUnsafeBufferPointer { buffer in
                nest(index + 1, collected + [cy_bytes(bytes: buffer.baseAddress, length: buffer.count)])
            }
        }
        return nest(0, [])
    }
}
