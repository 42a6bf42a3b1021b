public import Foundation
import Internals
public import ReceiptCrypto

/// Whether OCSP requests carry a nonce, and what the response must do with it.
public enum OCSPNoncePolicy: Sendable, Hashable {
    /// Send a nonce; a response carrying another nonce is refused, one carrying none is accepted
    /// (responders that serve pre-signed answers, as large CAs do, echo none).
    case sendAndCheck
    /// Send a nonce; the response must echo it.
    case required
    /// Send none.
    case omitted
}

/// Asks about the revocation status of a validated chain's certificates: from the responses it
/// was given (offline), or from each certificate's OCSP responder (its Authority Information
/// Access URL) through an ``OCSPTransport``, with an ``OCSPResponseCache``.
///
/// A response is used only when OpenSSL verified it (signed by the certificate's issuer or a
/// responder the issuer authorised, that signer valid at the validation time and chaining to the
/// chain's anchor), it answers for the certificate (a SHA-1 or SHA-256 certificate id), its nonce
/// is the request's (``OCSPNoncePolicy``), and it is fresh: `thisUpdate ≤ t ≤ nextUpdate` for the
/// validation time `t`, with `thisUpdate` allowed up to
/// ``OCSPResponseCache/thisUpdateTolerance`` ahead of `t` (responders write whole seconds, and
/// their clocks drift; OpenSSL's own check allows the same) (a response without `nextUpdate` is fresh for
/// ``maximumAgeWithoutNextUpdate`` after its `thisUpdate`, and never cached).
///
/// `Sendable`: one checker may serve any number of verifications at once.
public final class OCSPChecker: Sendable {
    /// The checker of ``RevocationPolicy/ocsp(_:checker:)`` by default: the network (through
    /// ``OCSPHTTPTransport``) and the shared cache.
    public static let shared = OCSPChecker()

    /// Where verified answers are kept.
    public let cache: OCSPResponseCache
    /// How requests reach responders; nil for an offline checker.
    public let transport: (any OCSPTransport)?
    /// The responses an offline checker was given.
    public let responses: [OCSPResponse]
    /// The nonce rule of requests.
    public let nonce: OCSPNoncePolicy
    /// How long a response without `nextUpdate` counts as fresh after its `thisUpdate`.
    public let maximumAgeWithoutNextUpdate: TimeInterval
    /// The longest a verification waits for another's request about the same certificate.
    let joinTimeout: TimeInterval
    private let requests = Locked(0)

    /// A checker that asks responders over the network.
    /// - Parameters:
    ///   - cache: where verified answers are kept (shared by default).
    ///   - transport: how requests are sent (a bounded blocking HTTP client by default).
    ///   - nonce: the nonce rule (``OCSPNoncePolicy/sendAndCheck`` by default).
    ///   - maximumAgeWithoutNextUpdate: see the type's description (5 minutes by default).
    public init(
        cache: OCSPResponseCache = .shared, transport: any OCSPTransport = OCSPHTTPTransport(), nonce: OCSPNoncePolicy = .sendAndCheck,
        maximumAgeWithoutNextUpdate: TimeInterval = 300
    ) {
        self.cache = cache
        self.transport = transport
        responses = []
        self.nonce = nonce
        self.maximumAgeWithoutNextUpdate = maximumAgeWithoutNextUpdate
        joinTimeout = ((transport as? OCSPHTTPTransport)?.timeout ?? 30) + 1
    }

    /// An offline checker: it opens no socket and answers only from `responses` (DER responses
    /// captured earlier, for example with `openssl ocsp -respout`). A certificate none of them
    /// answers for, or whose answer is stale at the validation time, is unavailable; there is never
    /// a fallback to the network.
    public init(responses: [OCSPResponse], maximumAgeWithoutNextUpdate: TimeInterval = 300) {
        cache = OCSPResponseCache(capacity: 256)
        transport = nil
        self.responses = responses
        nonce = .omitted
        self.maximumAgeWithoutNextUpdate = maximumAgeWithoutNextUpdate
        joinTimeout = 30
    }

    /// Whether the checker answers only from given responses.
    public var isOffline: Bool { transport == nil }

    /// The number of requests sent to responders so far.
    public var requestCount: Int { requests.withLock { $0 } }

    /// The status of every certificate of `chain` (leaf first, anchor last) below the anchor, at
    /// `time`, judged under `mode`.
    public func check(chain: [Certificate], mode: RevocationFailureMode, at time: Date) -> RevocationReport {
        var entries: [CertificateRevocation] = []
        if chain.count > 1 {
            for index in 0..<(chain.count - 1) {
                entries.append(status(of: chain[index], above: Array(chain[(index + 1)...]), at: time))
            }
        }
        return RevocationReport(mode: mode, time: time, certificates: entries)
    }

    /// The status of `certificate`, whose issuer is `above[0]` and anchor `above.last`.
    func status(of certificate: Certificate, above: [Certificate], at time: Date) -> CertificateRevocation {
        guard let issuer = above.first else {
            return CertificateRevocation(
                certificate: certificate, status: .unavailable(reason: "it has no issuer in the chain", retryable: false),
                responderURL: nil, signer: nil, thisUpdate: nil, nextUpdate: nil, source: nil)
        }
        let key = OCSPResponseCache.Key(certificate: certificate.derEncoded, issuer: issuer.derEncoded)
        let outcome = cache.lookup(key, at: time, waitingUntil: Date().addingTimeInterval(joinTimeout)) {
            isOffline
                ? offlineAnswer(for: certificate, above: above, at: time)
                : networkAnswer(for: certificate, above: above, at: time)
        }
        switch outcome {
        case .answer(let answer):
            let status: RevocationStatus
            switch answer.status {
            case .good: status = .good
            case .revoked(let date, let reason): status = .revoked(date: date, reason: reason)
            case .unknown: status = .unknown
            }
            return CertificateRevocation(
                certificate: certificate, status: status, responderURL: answer.responderURL, signer: answer.signer,
                thisUpdate: answer.thisUpdate, nextUpdate: answer.nextUpdate, source: answer.source)
        case .unavailable(let reason, let retryable, let url):
            return CertificateRevocation(
                certificate: certificate, status: .unavailable(reason: reason, retryable: retryable), responderURL: url,
                signer: nil, thisUpdate: nil, nextUpdate: nil, source: nil)
        }
    }

    /// Why `answer` is not fresh at `time`, or nil when it is.
    func staleness(of answer: OCSPVerifiedAnswer, at time: Date) -> String? {
        let this = VerificationText.rfc3339(answer.thisUpdate)
        if time.addingTimeInterval(OCSPResponseCache.thisUpdateTolerance) < answer.thisUpdate {
            return "the response is not yet valid: its thisUpdate \(this) is after \(VerificationText.rfc3339(time))"
        }
        if let next = answer.nextUpdate {
            return time <= next
                ? nil
                : "the response is stale: its nextUpdate \(VerificationText.rfc3339(next)) is before \(VerificationText.rfc3339(time))"
        }
        return time.timeIntervalSince(answer.thisUpdate) <= maximumAgeWithoutNextUpdate
            ? nil
            : "the response is stale: it has no nextUpdate and its thisUpdate \(this) is older than \(Int(maximumAgeWithoutNextUpdate)) s"
    }

    private func networkAnswer(for certificate: Certificate, above: [Certificate], at time: Date) -> OCSPLookup {
        guard let transport, let issuer = above.first else {
            return .unavailable(reason: "no transport", retryable: false, responderURL: nil)
        }
        guard let url = certificate.ocspURLs.first(where: { $0.lowercased().hasPrefix("http://") }) else {
            return .unavailable(reason: "the certificate names no http:// OCSP responder", retryable: false, responderURL: nil)
        }
        let shownURL = VerificationText.escaped(url)
        let request: OCSPRequest
        do throws(CryptoError) {
            request = try OCSPRequest(certificate: certificate, issuer: issuer, withNonce: nonce != .omitted)
        } catch {
            return .unavailable(reason: "no request could be made: \(error.reason)", retryable: false, responderURL: shownURL)
        }
        requests.withLock { $0 += 1 }
        let bytes: [UInt8]
        switch transport.post(request.derEncoded, to: url) {
        case .success(let body): bytes = body
        case .failure(let failure): return .unavailable(reason: failure.reason, retryable: failure.isRetryable, responderURL: shownURL)
        }
        let response: OCSPResponse
        do throws(CryptoError) {
            response = try OCSPResponse(derEncoded: bytes)
        } catch {
            return .unavailable(reason: "the answer is not an OCSP response (\(error.code))", retryable: false, responderURL: shownURL)
        }
        switch response.status {
        case .successful: break
        case .tryLater, .internalError:
            return .unavailable(reason: "the responder answered \(response.status)", retryable: true, responderURL: shownURL)
        default:
            return .unavailable(reason: "the responder answered \(response.status)", retryable: false, responderURL: shownURL)
        }
        let answer: OCSPVerifiedAnswer
        do throws(CryptoError) {
            answer = try response.answer(for: certificate, issuer: issuer, chain: above, at: time, request: request)
        } catch {
            return .unavailable(reason: "the response was rejected: \(error.reason)", retryable: false, responderURL: shownURL)
        }
        if nonce == .required, answer.nonce != .matches {
            return .unavailable(
                reason: "the response was rejected: it does not echo the request's nonce", retryable: false, responderURL: shownURL)
        }
        if let stale = staleness(of: answer, at: time) {
            return .unavailable(reason: "the response was rejected: \(stale)", retryable: false, responderURL: shownURL)
        }
        return .answer(
            OCSPCachedAnswer(
                status: answer.status, thisUpdate: answer.thisUpdate, nextUpdate: answer.nextUpdate, signer: answer.signer,
                responderURL: shownURL, source: .network))
    }

    private func offlineAnswer(for certificate: Certificate, above: [Certificate], at time: Date) -> OCSPLookup {
        guard let issuer = above.first else { return .unavailable(reason: "no issuer", retryable: false, responderURL: nil) }
        var problems: [String] = []
        for (index, response) in responses.enumerated() {
            let answer: OCSPVerifiedAnswer
            do throws(CryptoError) {
                answer = try response.answer(for: certificate, issuer: issuer, chain: above, at: time, request: nil)
            } catch {
                if error.code != .notFound { problems.append("response #\(index + 1) was rejected: \(error.reason)") }
                continue
            }
            if let stale = staleness(of: answer, at: time) {
                problems.append("response #\(index + 1): \(stale)")
                continue
            }
            return .answer(
                OCSPCachedAnswer(
                    status: answer.status, thisUpdate: answer.thisUpdate, nextUpdate: answer.nextUpdate, signer: answer.signer,
                    responderURL: nil, source: .offlineResponse))
        }
        let reason = problems.isEmpty ? "none of the \(responses.count) given responses answers for it" : problems.joined(separator: "; ")
        return .unavailable(reason: reason + " (offline: no request is made)", retryable: false, responderURL: nil)
    }
}
