public import Foundation
import HTTPClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Why an OCSP exchange gave no response bytes.
public struct OCSPTransportFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// A sentence for people (never holds response bytes).
    public let reason: String
    /// Whether trying again later could succeed (a refused connection, a resolution failure, a
    /// timeout, a 5xx or 429 status); false for answers that will not change (a redirect, a 4xx
    /// status, an unusable URL, a response over the size limit, a malformed answer).
    public let isRetryable: Bool

    /// Creates a failure.
    public init(_ reason: String, retryable: Bool) {
        self.reason = reason
        isRetryable = retryable
    }

    /// The reason.
    public var description: String { reason }
}

/// How OCSP requests reach a responder: one POST of `application/ocsp-request` bytes, answered by
/// the response body. Called synchronously from verification, possibly on many threads at once.
public protocol OCSPTransport: Sendable {
    /// POSTs `request` to `url` and returns the response body of a `200` answer.
    func post(_ request: [UInt8], to url: String) -> Result<[UInt8], OCSPTransportFailure>
}

/// A blocking OCSP client for plain `http://` URLs (RFC 6960's transport, which Apple's
/// responders use), over the package's one HTTP/1.1 client: one connection per request, a
/// deadline for the whole exchange (resolving, connecting, sending, reading), a cap on the
/// response size, redirects never followed (a 3xx is a failure), nothing cached or kept alive.
/// Bodies framed by `Content-Length`, chunked, or by the end of the connection are read; an
/// encoding other than identity is refused.
public struct OCSPHTTPTransport: OCSPTransport {
    /// The longest a whole exchange may take, in seconds.
    public var timeout: TimeInterval
    /// The largest response read, headers and body together (every byte read off the
    /// connection); a longer one is a failure.
    public var maximumResponseSize: Int

    /// Creates a transport (5 s, 64 KiB by default: an OCSP response for one certificate is a
    /// few kilobytes).
    public init(timeout: TimeInterval = 5, maximumResponseSize: Int = 65_536) {
        self.timeout = timeout
        self.maximumResponseSize = maximumResponseSize
    }

    /// POSTs `request` to `url` (`http://` only).
    public func post(_ request: [UInt8], to url: String) -> Result<[UInt8], OCSPTransportFailure> {
        let target: OCSPResponderURL
        switch OCSPResponderURL.parse(url) {
        case .success(let parsed): target = parsed
        case .failure(let failure): return .failure(failure)
        }
        // The client clamps any timeout, NaN and infinities included (Internals.Deadline).
        let limit = max(0, maximumResponseSize)
        let client = HTTPClientTransport(timeout: timeout, maximumResponseSize: limit, limitIncludesHead: true)
        let outcome = client.sendBlocking(
            HTTPClientRequest(
                method: "POST", url: target.url,
                headers: [("Content-Type", "application/ocsp-request"), ("Accept", "application/ocsp-response")], body: request))
        return Self.result(of: outcome, from: target.display, limit: limit)
    }

    /// The body of a `200` answer, or why there is none. Reasons hold the escaped URL and the
    /// client's own sentences about the connection, never bytes of the response.
    static func result(of outcome: HTTPClientOutcome, from display: String, limit: Int) -> Result<[UInt8], OCSPTransportFailure> {
        switch outcome {
        case .response(200, _, let body):
            return .success(body)
        case .response(let status, _, _):
            let kind = (300..<400).contains(status) ? " (redirects are not followed)" : ""
            return .failure(OCSPTransportFailure("\(display) answered HTTP \(status)\(kind)", retryable: status >= 500 || status == 429))
        case .tooLarge:
            return .failure(OCSPTransportFailure("the answer exceeds \(limit) bytes", retryable: false))
        case .timedOut:
            return .failure(OCSPTransportFailure("\(display) did not answer in time", retryable: true))
        case .cancelled:
            return .failure(OCSPTransportFailure("the exchange with \(display) was cancelled", retryable: true))
        case .failure(let code, let reason):
            return .failure(failure(code, reason, from: display, limit: limit))
        }
    }

    /// A transport failure by its code. Only the client's sentences about resolving and the
    /// connection are passed on; those about a malformed answer quote it and are not.
    private static func failure(_ code: URLError.Code, _ reason: String, from display: String, limit: Int) -> OCSPTransportFailure {
        switch code {
        case .cannotFindHost:
            return OCSPTransportFailure("cannot resolve \(display)", retryable: true)
        case .cannotConnectToHost:
            // "cannot connect to host:port: <the system's reason>"; the host was checked to hold no ": ".
            let cause = reason.components(separatedBy: ": ").last ?? ""
            return OCSPTransportFailure("cannot connect to \(display): \(cause)", retryable: true)
        case .networkConnectionLost:
            return OCSPTransportFailure("the exchange with \(display) broke off: \(reason)", retryable: true)
        case .dataLengthExceedsMaximum:
            return OCSPTransportFailure("the answer exceeds \(limit) bytes", retryable: false)
        case .badServerResponse:
            return OCSPTransportFailure("\(display) did not answer well-formed HTTP", retryable: false)
        case .cannotDecodeContentData:
            return OCSPTransportFailure("\(display) answered in an encoding other than identity", retryable: false)
        case .unsupportedURL, .badURL:
            return OCSPTransportFailure("the OCSP URL \(display) is not usable", retryable: false)
        default:
            return OCSPTransportFailure("the exchange with \(display) failed (URL error \(code.rawValue))", retryable: true)
        }
    }
}
