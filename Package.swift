// swift-tools-version:6.0
//
// RMStore for Swift: App Store receipt toolkit (ASN.1, PKCS#7, verification) and the RMStore store API.
// No outside packages: everything here builds with the Swift toolchain and the system OpenSSL 3.
//
// Each target declares exactly the package targets its sources import (scripts/check-imports.sh
// keeps it so); test targets may also depend on executables they run. README's Layout section
// draws the graph.
import PackageDescription

/// Settings shared by every Swift target: Swift 6 mode is the package default; these add
/// upcoming-feature checks that keep imports and existentials explicit.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "RMStore",
    products: [
        .library(name: "ASN1", targets: ["ASN1"]),
        .library(name: "JSON", targets: ["JSON"]),
        .library(name: "JWS", targets: ["JWS"]),
        .library(name: "Receipts", targets: ["Receipts"]),
        .library(name: "ReceiptCrypto", targets: ["ReceiptCrypto"]),
        .library(name: "ReceiptVerification", targets: ["ReceiptVerification"]),
        .library(name: "ReceiptSigning", targets: ["ReceiptSigning"]),
        .library(name: "RMStore", targets: ["RMStore"]),
        .library(name: "StoreTesting", targets: ["StoreTesting"]),
        .library(name: "RMStoreVerifiers", targets: ["RMStoreVerifiers"]),
        .library(name: "VerifyReceipt", targets: ["VerifyReceipt"]),
        .library(name: "ServerNotifications", targets: ["ServerNotifications"]),
        .library(name: "ReceiptServer", targets: ["ReceiptServer"]),
        .library(name: "AppStoreServerAPI", targets: ["AppStoreServerAPI"]),
        .executable(name: "receipt-tool", targets: ["receipt-tool"]),
        .executable(name: "store-demo", targets: ["store-demo"]),
        // Benchmarks, Fuzz and persistence-child are executables of this package only
        // (`swift run -c release Benchmarks`), not products.
    ],
    targets: [
        // MARK: Libraries

        // Not a product: helpers several modules share, with `package` visibility (lock, file
        // reading, seeded generator, civil calendar, base64, hex, pure-Swift SHA-1/SHA-256/HMAC).
        .target(name: "Internals", swiftSettings: swiftSettings),
        // Pure Swift DER/BER reader and DER writer. No Foundation.
        .target(name: "ASN1", dependencies: ["Internals"], swiftSettings: swiftSettings),
        // Strict JSON: the package's one parser (ordered members, exact number text, duplicate keys,
        // UTF-8, trailing data and limits checked while reading) and a writer. Pure Swift.
        .target(name: "JSON", dependencies: ["Internals"], swiftSettings: swiftSettings),
        // Compact JWS splitter and header, and the App Store payload models (transactions, renewal
        // info, app transactions, notifications V2). Parsing only: no signature or chain checks.
        .target(name: "JWS", dependencies: ["JSON", "Internals"], swiftSettings: swiftSettings),
        // Receipt models and parsers: PKCS#7 envelope, AppReceipt, InAppPurchase, iOS 6 transaction
        // receipts, dates, verifyReceipt-shaped JSON.
        .target(name: "Receipts", dependencies: ["JSON", "ASN1", "Internals"], swiftSettings: swiftSettings),
        // OpenSSL 3 as a system library; shim.h wraps macro-only helpers.
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // Certificates, keys, digests, signatures and chain validation over OpenSSL. The only product
        // module that imports COpenSSL; no C type in its public API.
        .target(name: "ReceiptCrypto", dependencies: ["COpenSSL", "ASN1", "Internals"], swiftSettings: swiftSettings),
        // Signature, chain and policy checks of app and transaction receipts; returns verdicts.
        .target(
            name: "ReceiptVerification",
            dependencies: ["ASN1", "HTTPClient", "Internals", "JWS", "Receipts", "ReceiptCrypto"],
            // Apple's public roots and the StoreKit test certificate (see Anchors/PROVENANCE.md).
            resources: [.copy("Anchors")],
            swiftSettings: swiftSettings
        ),
        // Builds and signs receipts (DER or Xcode-style BER, transaction receipts) and test PKIs.
        .target(name: "ReceiptSigning", dependencies: ["ASN1", "Internals", "Receipts", "ReceiptCrypto"], swiftSettings: swiftSettings),
        // verifyReceipt messages, status codes and the HTTP client (production → sandbox routing).
        // No server: apps that call Apple, and the store verifiers, link no socket server.
        // Not a product: the one bounded HTTP/1.1 exchange over its own sockets (own deadline, body
        // limited while it arrives, no redirects) of the package's HTTP clients, OCSP's included.
        .target(name: "HTTPClient", dependencies: ["COpenSSL", "Internals"], swiftSettings: swiftSettings),
        .target(name: "VerifyReceipt", dependencies: ["HTTPClient", "JSON", "Internals", "Receipts"], swiftSettings: swiftSettings),
        // SQLite 3 and libpq (PostgreSQL's client) as system libraries; ServerNotifications is the one
        // Swift module that imports each.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // zlib, for the compact form of stored notifications (ServerNotifications only).
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // App Store Server Notifications V2 received without HTTP: verify, store durably, then
        // acknowledge; the NotificationStore protocol with SQLite (one machine, group commit) and
        // PostgreSQL (several instances sharing one store); subscription state derived per original
        // transaction. No C type in its API.
        .target(
            name: "ServerNotifications",
            dependencies: ["CLibPQ", "CSQLite", "CZlib", "Internals", "JSON", "JWS", "ReceiptVerification"],
            swiftSettings: swiftSettings
        ),
        // Not a product: the generic HTTP/1.1 server and its message parsing (nothing about
        // receipts). Linked through ReceiptServer and used by `receipt-tool serve`.
        .target(name: "HTTPServer", dependencies: ["Internals"], swiftSettings: swiftSettings),
        // App Store endpoints on HTTPServer: the offline verifyReceipt stand-in (`receipt-tool serve`).
        .target(
            name: "ReceiptServer",
            dependencies: [
                "AppStoreServerAPI", "JSON", "JWS", "HTTPServer", "Internals", "Receipts", "ReceiptVerification", "ServerNotifications",
                "VerifyReceipt",
            ],
            swiftSettings: swiftSettings
        ),
        // The App Store Server API client (ES256 bearer tokens from a .p8, every endpoint, every JWS
        // of every response verified, typed errors, retries), offer signatures, and transaction ids
        // taken from receipts.
        .target(
            name: "AppStoreServerAPI",
            dependencies: ["HTTPClient", "Internals", "JSON", "JWS", "ReceiptCrypto", "ReceiptVerification", "Receipts"],
            swiftSettings: swiftSettings
        ),
        // The store: RMStore's API over a payment-queue abstraction. Never links OpenSSL.
        .target(name: "RMStore", dependencies: ["Internals"], swiftSettings: swiftSettings),
        // A simulated App Store implementing the store's protocols, signing receipts and StoreKit 2
        // JWS transactions with test PKIs, and a simulated App Store Server API serving its state
        // over HTTP on 127.0.0.1.
        .target(
            name: "StoreTesting",
            dependencies: [
                "AppStoreServerAPI", "HTTPClient", "HTTPServer", "Internals", "JSON", "JWS", "RMStore", "ReceiptCrypto", "Receipts",
                "ReceiptSigning",
            ],
            swiftSettings: swiftSettings),
        // Receipt verifiers that plug into the store (app receipts offline, transaction receipts
        // offline or through VerifyReceiptClient, StoreKit 2 JWS transactions offline).
        .target(
            name: "RMStoreVerifiers",
            dependencies: ["Internals", "JWS", "RMStore", "Receipts", "ReceiptVerification", "VerifyReceipt"],
            swiftSettings: swiftSettings
        ),

        // MARK: Test and benchmark support (no product links these)

        // Not a product: OpenSSL's own ways (RMStore's d2i_PKCS7 + ASN1_get_object walk, PKCS7_verify,
        // PKCS7_sign) for the tests and Benchmarks to compare against. The only module besides
        // ReceiptCrypto that imports COpenSSL; used only by tests, Benchmarks and the fuzz targets, linked by no product.
        .target(name: "CryptoBaselines", dependencies: ["COpenSSL", "ReceiptCrypto"], swiftSettings: swiftSettings),
        // Not a product: C yardsticks for the Benchmarks (a zero-allocation TLV walker over a DER
        // receipt, the cold receipt and JWS chain floors over libcrypto), the least work a task
        // needs, measured beside the Swift code on the same bytes.
        .target(name: "CYardsticks", linkerSettings: [.linkedLibrary("crypto")]),
        // Not a product: what several test targets and Benchmarks share (TestReceipts/ paths and
        // lists, test PKIs made once per process, a notification log, raw HTTP helpers).
        .target(
            name: "TestSupport",
            dependencies: ["ASN1", "HTTPServer", "Internals", "RMStore", "ReceiptCrypto", "ReceiptSigning", "Receipts"],
            path: "Tests/TestSupport",
            swiftSettings: swiftSettings
        ),
        // Fuzz targets as plain functions (also replayed by the tests), and the libFuzzer driver.
        .target(
            name: "FuzzTargets",
            dependencies: [
                "JWS", "JSON", "HTTPServer", "Internals", "ASN1", "CryptoBaselines", "ReceiptCrypto", "Receipts", "ReceiptVerification",
            ],
            path: "Fuzz/FuzzTargets",
            swiftSettings: swiftSettings),
        .executableTarget(name: "Fuzz", dependencies: ["FuzzTargets"], path: "Fuzz/Driver", swiftSettings: swiftSettings),

        // MARK: Executables

        // The CLI: dump, asn1, verify, make, pki, serve, api, simulate, offer-signature, notifications.
        .executableTarget(
            name: "receipt-tool",
            dependencies: [
                "AppStoreServerAPI", "JWS", "JSON",
                "ASN1", "HTTPServer", "Internals", "ReceiptCrypto", "ReceiptServer", "ReceiptSigning", "ReceiptVerification", "Receipts",
                "ServerNotifications", "VerifyReceipt",
                // `receipt-tool simulate`: the simulated App Store Server API and its customers.
                "RMStore", "StoreTesting",
            ],
            swiftSettings: swiftSettings
        ),
        // RMStore's API end to end against the simulated App Store (`swift run store-demo`).
        .executableTarget(
            name: "store-demo",
            dependencies: [
                "JWS", "RMStore", "RMStoreVerifiers", "ReceiptCrypto", "ReceiptSigning", "ReceiptVerification", "Receipts", "StoreTesting",
            ],
            swiftSettings: swiftSettings
        ),
        // Child process for the store's crash-safety test: writes a persistor in a loop until killed.
        .executableTarget(name: "persistence-child", dependencies: ["RMStore"], swiftSettings: swiftSettings),
        // `swift run -c release Benchmarks`: parse, query and verify timings against the baselines.
        .executableTarget(
            name: "Benchmarks",
            dependencies: [
                "JWS", "JSON", "ASN1", "CYardsticks", "CryptoBaselines", "ReceiptCrypto", "ReceiptSigning", "ReceiptVerification",
                "Receipts", "ServerNotifications", "TestSupport",
            ],
            path: "Benchmarks",
            swiftSettings: swiftSettings
        ),

        // MARK: Tests (one target per module; all of them may use TestSupport)

        .testTarget(name: "InternalsTests", dependencies: ["Internals"], swiftSettings: swiftSettings),
        .testTarget(name: "ASN1Tests", dependencies: ["ASN1", "Internals"], swiftSettings: swiftSettings),
        .testTarget(name: "JSONTests", dependencies: ["JSON"], swiftSettings: swiftSettings),
        .testTarget(name: "JWSTests", dependencies: ["Internals", "JSON", "JWS", "ReceiptCrypto"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ReceiptsTests",
            dependencies: [
                "JSON", "ASN1", "CryptoBaselines", "FuzzTargets", "Internals", "ReceiptCrypto", "ReceiptSigning", "Receipts", "TestSupport",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ReceiptCryptoTests", dependencies: ["ASN1", "Internals", "ReceiptCrypto", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "CryptoBaselinesTests", dependencies: ["CryptoBaselines", "Internals", "ReceiptCrypto", "TestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ReceiptVerificationTests",
            dependencies: [
                "JWS",
                "JSON",
                "ASN1", "CryptoBaselines", "Internals", "ReceiptCrypto", "ReceiptSigning", "ReceiptVerification", "Receipts", "TestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ReceiptSigningTests", dependencies: ["ASN1", "CryptoBaselines", "ReceiptCrypto", "ReceiptSigning", "Receipts"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "VerifyReceiptTests",
            // The client is tested against the package's own endpoint, served on 127.0.0.1.
            dependencies: [
                "JSON", "HTTPServer", "Internals", "ReceiptServer", "ReceiptVerification", "Receipts", "TestSupport", "VerifyReceipt",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ReceiptServerTests",
            dependencies: [
                "JSON", "JWS",
                "HTTPServer", "Internals", "ReceiptCrypto", "ReceiptServer", "ReceiptSigning", "ReceiptVerification", "Receipts",
                "ServerNotifications", "TestSupport", "VerifyReceipt",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ServerNotificationsTests",
            dependencies: [
                "HTTPServer", "Internals", "JSON", "JWS", "RMStore", "ReceiptSigning", "ReceiptVerification", "ServerNotifications",
                "StoreTesting", "TestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RMStoreTests", dependencies: ["JWS", "RMStore", "StoreTesting", "TestSupport", "persistence-child"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "RMStoreVerifiersTests",
            dependencies: [
                "HTTPServer", "Internals", "JWS", "RMStore", "RMStoreVerifiers", "ReceiptCrypto", "ReceiptServer", "ReceiptSigning",
                "ReceiptVerification", "Receipts", "StoreTesting", "TestSupport", "VerifyReceipt", "store-demo",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AppStoreServerAPITests",
            // The client against the simulated App Store Server API, served on 127.0.0.1, and its test
            // notifications received by the notifications endpoint `serve` mounts.
            dependencies: [
                "AppStoreServerAPI", "HTTPServer", "Internals", "JSON", "JWS", "RMStore", "ReceiptCrypto", "ReceiptServer",
                "ReceiptSigning",
                "ReceiptVerification", "Receipts", "ServerNotifications", "StoreTesting", "TestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ReceiptToolTests",
            // `api` runs against the simulated App Store Server API the tests start on 127.0.0.1.
            dependencies: [
                "ASN1", "AppStoreServerAPI", "HTTPServer", "Internals", "JSON", "JWS", "RMStore", "ReceiptCrypto", "ReceiptSigning",
                "ReceiptVerification", "Receipts", "StoreTesting", "TestSupport", "receipt-tool",
            ],
            swiftSettings: swiftSettings),
    ]
)
