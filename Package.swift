// swift-tools-version:6.0
//
// RMStore for Swift: App Store receipt toolkit (ASN.1, PKCS#7, verification) and the RMStore store API.
// No outside packages: everything here builds with the Swift toolchain and the system OpenSSL 3.
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
        .library(name: "Receipts", targets: ["Receipts"]),
        .library(name: "ReceiptCrypto", targets: ["ReceiptCrypto"]),
        .library(name: "ReceiptVerification", targets: ["ReceiptVerification"]),
        .library(name: "ReceiptSigning", targets: ["ReceiptSigning"]),
        .library(name: "RMStore", targets: ["RMStore"]),
        .library(name: "StoreTesting", targets: ["StoreTesting"]),
        .library(name: "RMStoreVerifiers", targets: ["RMStoreVerifiers"]),
        .library(name: "VerifyReceipt", targets: ["VerifyReceipt"]),
        .executable(name: "receipt-tool", targets: ["receipt-tool"]),
        .executable(name: "store-demo", targets: ["store-demo"]),
        .executable(name: "Benchmarks", targets: ["Benchmarks"]),
    ],
    targets: [
        // Package-only helpers shared by several modules (no product, `package` visibility):
        // lock, file reading, seeded generator, civil calendar, base64, hex, pure-Swift SHA-1/SHA-256.
        .target(name: "Internals", swiftSettings: swiftSettings),
        // Pure Swift DER/BER reader and DER writer. No Foundation.
        .target(name: "ASN1", dependencies: ["Internals"], swiftSettings: swiftSettings),
        // Receipt models and parsers: PKCS#7 envelope, AppReceipt, InAppPurchase, dates, JSON.
        .target(name: "Receipts", dependencies: ["ASN1", "Internals"], swiftSettings: swiftSettings),
        // OpenSSL 3 as a system library; shim.h wraps macro-only helpers.
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // The only module that imports COpenSSL. No C type in its public API.
        .target(name: "ReceiptCrypto", dependencies: ["COpenSSL", "ASN1", "Internals"], swiftSettings: swiftSettings),
        // Signature, chain and policy checks of receipts; returns verdicts.
        .target(
            name: "ReceiptVerification",
            dependencies: ["ASN1", "Internals", "Receipts", "ReceiptCrypto"],
            // Apple's public roots and the StoreKit test certificate (see Anchors/PROVENANCE.md).
            resources: [.copy("Anchors")],
            swiftSettings: swiftSettings
        ),
        // Builds and signs receipts (DER or Xcode-style BER) and test PKIs.
        .target(name: "ReceiptSigning", dependencies: ["Internals", "ASN1", "Receipts", "ReceiptCrypto"], swiftSettings: swiftSettings),
        // The store: RMStore's API over a payment-queue abstraction. Never links OpenSSL.
        .target(name: "RMStore", dependencies: ["Internals"], swiftSettings: swiftSettings),
        // A simulated App Store implementing the store's protocols, signing receipts with a test PKI.
        .target(
            name: "StoreTesting",
            dependencies: ["Internals", "RMStore", "Receipts", "ReceiptSigning"],
            swiftSettings: swiftSettings
        ),
        // Receipt verifiers that plug into the store.
        .target(
            name: "RMStoreVerifiers",
            dependencies: ["RMStore", "Receipts", "ReceiptVerification", "VerifyReceipt"],
            swiftSettings: swiftSettings
        ),
        // verifyReceipt JSON, status codes, the HTTP client and the local drop-in endpoint.
        .target(
            name: "VerifyReceipt",
            dependencies: ["Internals", "ASN1", "Receipts", "ReceiptVerification", "ReceiptCrypto"],
            swiftSettings: swiftSettings
        ),
        // Fuzz targets as plain functions (also replayed by the tests), and the libFuzzer driver.
        .target(
            name: "FuzzTargets", dependencies: ["ASN1", "Receipts", "ReceiptVerification"], path: "Fuzz/FuzzTargets",
            swiftSettings: swiftSettings),
        .executableTarget(name: "Fuzz", dependencies: ["FuzzTargets"], path: "Fuzz/Driver", swiftSettings: swiftSettings),
        .executableTarget(
            name: "receipt-tool",
            dependencies: ["Internals", "ASN1", "Receipts", "ReceiptVerification", "ReceiptSigning", "ReceiptCrypto", "VerifyReceipt"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "store-demo",
            dependencies: ["RMStore", "StoreTesting", "RMStoreVerifiers", "ReceiptVerification", "ReceiptSigning"],
            swiftSettings: swiftSettings
        ),
        // Child process for the store's crash-safety test: writes a persistor in a loop until killed.
        .executableTarget(name: "persistence-child", dependencies: ["RMStore"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "Benchmarks",
            dependencies: ["ASN1", "Receipts", "ReceiptCrypto", "ReceiptVerification", "ReceiptSigning"],
            path: "Benchmarks",
            swiftSettings: swiftSettings
        ),

        .testTarget(name: "InternalsTests", dependencies: ["Internals"], swiftSettings: swiftSettings),
        .testTarget(name: "ASN1Tests", dependencies: ["ASN1", "Internals"], swiftSettings: swiftSettings),
        .testTarget(name: "ReceiptsTests", dependencies: ["Internals", "ASN1", "Receipts", "FuzzTargets"], swiftSettings: swiftSettings),
        .testTarget(name: "ReceiptCryptoTests", dependencies: ["Internals", "ASN1", "ReceiptCrypto"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ReceiptVerificationTests",
            dependencies: ["Internals", "ASN1", "Receipts", "ReceiptCrypto", "ReceiptVerification", "ReceiptSigning"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "RMStoreTests", dependencies: ["RMStore", "StoreTesting", "persistence-child"], swiftSettings: swiftSettings),
        .testTarget(
            name: "RMStoreVerifiersTests",
            dependencies: [
                "Internals",
                "RMStore", "StoreTesting", "RMStoreVerifiers", "ReceiptVerification", "ReceiptSigning", "Receipts", "VerifyReceipt",
                "ReceiptCrypto", "store-demo",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "VerifyReceiptTests",
            dependencies: ["Internals", "VerifyReceipt", "Receipts", "ReceiptVerification", "ReceiptCrypto", "ReceiptSigning"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "ReceiptToolTests", dependencies: ["receipt-tool"], swiftSettings: swiftSettings),
    ]
)
