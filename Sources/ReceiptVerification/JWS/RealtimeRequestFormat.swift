public import JWS

// The Retention Messaging real-time request as a kind of the one JWS verification: the App Store
// POSTs `{"signedPayload": JWS}` to your Get Retention Message endpoint while a customer looks at a
// subscription; the JWS is signed like every App Store payload (ES256, x5c to Apple Root CA - G3).

extension RealtimeRequest: AppStoreSignedPayload {
    /// ``AppStorePayloadKind/realtimeRequest``.
    public static var payloadKind: AppStorePayloadKind { .realtimeRequest }
    /// From the member names the decoding read.
    public var kindMismatch: KindMismatch? { Self.payloadKind.mismatch(decoded: self) }
    /// `signedDate`.
    public var validationDate: JWSDate? { signedDate }
    /// App Apple id and environment: a real-time request names no bundle id, so Apple asks every
    /// receiver to compare its `appAppleId` with the app's.
    public var claims: AppStoreClaims {
        AppStoreClaims(carried: Self.carriedClaims, appAppleId: appAppleId, environment: environment, signedDate: signedDate)
    }
    /// App Apple id and environment.
    public static var carriedClaims: Set<AppStoreClaims.Kind> { [.appAppleId, .environment] }
}

/// Verifies Retention Messaging real-time requests (Apple's `RealtimeRequestBody`, whose
/// `signedPayload` decodes to `RealtimeRequest`): the same chain, signature, kind and claim
/// checks as every App Store JWS.
public typealias RealtimeRequestVerifier = SignedDataVerifier<JWSFormat<RealtimeRequest>>
