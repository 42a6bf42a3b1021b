import Internals
public import JWS
public import ReceiptVerification

/// One app's notification verification: the verifier (its anchors and policy decide what is
/// trusted) and what the app's notifications must say (bundle id, app Apple id, environments).
public struct NotificationRoute: Sendable {
    /// The verifier of the app's notifications.
    public let verifier: NotificationVerifier
    /// What the app's notifications must say.
    public let expectations: JWSExpectations

    /// Creates a route.
    public init(verifier: NotificationVerifier, expectations: JWSExpectations) {
        self.verifier = verifier
        self.expectations = expectations
    }
}

/// Chooses the verification of a notification token — one app's, or the app its payload names
/// among several — and verifies it there.
///
/// With several apps (``init(routes:)``) the payload's bundle id is read WITHOUT verification,
/// only to pick the app; the token is then verified fully with that app's verifier and
/// expectations (signature, chain to that app's anchors, policy, bundle id, app Apple id on
/// production, that app's environments, nested tokens), which alone decide. So a payload naming
/// app A is accepted only if it verifies as A's: a token signed under B's anchors, or for an
/// environment A does not allow, is rejected whatever B would say.
///
/// A token naming a bundle id no route has is rejected with the check
/// `VerificationCheck.Name.bundleIdentifier` (a configuration check: answered 5xx and kept as a
/// dead letter, as the app may simply not be configured yet); its signature and chain are first
/// verified with each route's verifier, so that a forgery is rejected for what is wrong with it
/// (`signature`: answered 400) rather than for naming an unknown app. A token whose bundle id
/// cannot be read is verified with the first route, which rejects it.
public struct NotificationRouter: Sendable {
    /// The routes, in the order given.
    public let routes: [NotificationRoute]
    /// The index in ``routes`` of each bundle id (nil: every token goes to the only route).
    let indexByBundleId: [String: Int]?
    /// The first route (the only one of a router that does not read tokens).
    let primary: NotificationRoute

    /// Sends every token to `route` without reading it: one app, whose expectations decide
    /// alone (a token of another bundle id fails their `bundleIdentifier` check, if they name one).
    public init(only route: NotificationRoute) {
        routes = [route]
        indexByBundleId = nil
        primary = route
    }

    /// Routes by the payload's bundle id among `routes`.
    /// - Throws: ``NotificationStoreError/Code/invalidConfiguration`` when `routes` is empty, when
    ///   a route's expectations name no bundle id or no environments (the router would otherwise
    ///   accept any app or environment for them), or when two routes name the same bundle id.
    public init(routes: [NotificationRoute]) throws(NotificationStoreError) {
        guard let primary = routes.first else {
            throw NotificationStoreError(.invalidConfiguration, "a notification router needs at least one app")
        }
        var index: [String: Int] = [:]
        for (position, route) in routes.enumerated() {
            guard let bundleId = route.expectations.bundleIdentifier, !bundleId.isEmpty else {
                throw NotificationStoreError(.invalidConfiguration, "app \(position + 1) of the router names no bundle id")
            }
            guard let environments = route.expectations.environments, !environments.isEmpty else {
                throw NotificationStoreError(
                    .invalidConfiguration, "the app \(TerminalEscaping.quoted(bundleId)) allows no environments: name them")
            }
            guard index[bundleId] == nil else {
                throw NotificationStoreError(.invalidConfiguration, "the bundle id \(TerminalEscaping.quoted(bundleId)) is routed twice")
            }
            index[bundleId] = position
        }
        self.routes = routes
        self.primary = primary
        indexByBundleId = index
    }

    /// The bundle ids routed to, in the order of ``routes`` (empty for a router of one route
    /// that does not read the token).
    public var bundleIds: [String] {
        guard indexByBundleId != nil else { return [] }
        return routes.compactMap(\.expectations.bundleIdentifier)
    }

    /// The limits tokens are read with: the first route's.
    public var limits: JWSLimits { primary.verifier.format.limits }

    /// The route of the app `bundleId` (the only route of a router that does not read tokens).
    public func route(for bundleId: String?) -> NotificationRoute? {
        guard let indexByBundleId else { return primary }
        guard let bundleId, let position = indexByBundleId[bundleId] else { return nil }
        return routes.indices.contains(position) ? routes[position] : nil
    }

    /// Verifies `token` with the route its payload names (see the type's documentation) at
    /// `time`: the valid verdict, or the rejection naming the first failed check (its
    /// ``NotificationRejection/mayBeOurConfiguration`` set for a configuration check, or for a
    /// revocation check a retry could pass).
    public func verify(_ token: String, at time: ValidationTime) -> Result<Verdict<SignedJWS<NotificationPayload>>, NotificationRejection> {
        let bytes = Array(token.utf8)
        guard indexByBundleId != nil else { return Self.verify(bytes, with: primary, at: time) }
        let claimed = Self.unverifiedBundleId(of: bytes, limits: limits)
        if let route = route(for: claimed) { return Self.verify(bytes, with: route, at: time) }
        guard let claimed else {
            // Unreadable: the first route's full verification names what is wrong with it.
            return Self.verify(bytes, with: primary, at: time)
        }
        // An app no route has. Is the token genuine (under some route's anchors and policy)?
        var firstFailure: NotificationRejection?
        for route in routes {
            switch Self.verify(
                bytes, with: NotificationRoute(verifier: route.verifier, expectations: .init(bundleIdentifier: claimed)), at: time)
            {
            case .success:
                // The reason goes back to the sender: it names no configured app.
                return .failure(
                    NotificationRejection(
                        check: .bundleIdentifier,
                        reason: "the notification is for \(TerminalEscaping.quoted(claimed)), which is not a configured app"))
            case .failure(let rejection):
                if firstFailure == nil { firstFailure = rejection }
            }
        }
        return .failure(firstFailure ?? NotificationRejection(check: .bundleIdentifier, reason: "no app is configured"))
    }

    /// The payload's bundle id (`data`, `summary`, `externalPurchaseToken` or `appData`), read
    /// without verifying anything: for routing only.
    static func unverifiedBundleId(of token: [UInt8], limits: JWSLimits) -> String? {
        guard let jws = try? CompactJWS(token, limits: limits),
            let payload = try? NotificationPayload(jsonPayload: jws.unverifiedPayload, limits: limits)
        else { return nil }
        return payload.claims.bundleIdentifier
    }

    /// The full verification of `token` with `route`.
    static func verify(
        _ token: [UInt8], with route: NotificationRoute, at time: ValidationTime
    ) -> Result<Verdict<SignedJWS<NotificationPayload>>, NotificationRejection> {
        let verdict = route.verifier.verify(token, expecting: route.expectations, at: time)
        guard verdict.isValid else {
            let failure = verdict.firstFailure
            // 5xx only when the failed check is one our configuration decides (an anchor, the
            // policy, the app's ids): a genuinely signed notification whose content is wrong —
            // a nested token of another kind or app, an unknown `crit` — stays wrong however often
            // Apple retries it, so it is answered 400 (and kept as a dead letter either way).
            var rejection = NotificationRejection(
                check: failure?.name ?? .parse, reason: failure?.reason ?? "a check the policy requires did not run", notificationUUID: nil)
            // A revocation check that a retry could pass (a responder unreachable under hard-fail)
            // is answered 5xx too, so that Apple sends the notification again.
            if verdict.isRetryable { rejection.mayBeOurConfiguration = true }
            return .failure(rejection)
        }
        return .success(verdict)
    }
}
