public import Foundation
import RMStore
public import ReceiptSigning
public import Receipts

/// The simulated App Store's real receipt issuer: builds an app receipt from the store's
/// transaction history and signs it as PKCS#7 with a test PKI, so the real verifiers check a
/// real signature, chain and device hash end to end.
///
/// Each receipt gets a fresh 16-byte opaque value and the SHA-1 hash that binds it to
/// ``deviceIdentifier``, exactly as the App Store computes it.
public struct SignedReceiptIssuer: ReceiptIssuing {
    /// Signs the receipts (key, certificate and the chain to embed).
    public var signer: ReceiptSigner
    /// App Store (DER) or Xcode (BER) layout.
    public var layout: ReceiptLayout
    /// The device the receipts are bound to.
    public var deviceIdentifier: DeviceIdentifier
    /// The receipt type written into field 0 (`ProductionSandbox` by default).
    public var receiptType: String

    /// Creates an issuer.
    public init(
        signer: ReceiptSigner, deviceIdentifier: DeviceIdentifier, layout: ReceiptLayout = .appStore,
        receiptType: String = "ProductionSandbox"
    ) {
        self.signer = signer
        self.deviceIdentifier = deviceIdentifier
        self.layout = layout
        self.receiptType = receiptType
    }

    /// The receipt model for `contents`, before signing.
    public func receipt(for contents: ReceiptContents) -> AppReceipt {
        var receipt = AppReceipt()
        receipt.receiptType = receiptType
        receipt.appItemID = 0
        receipt.bundleIdentifier = contents.bundleIdentifier
        receipt.bundleIdentifierData = AppReceipt.canonicalBundleData(contents.bundleIdentifier)
        receipt.appVersion = contents.appVersion
        receipt.originalAppVersion = contents.originalApplicationVersion
        receipt.creationDate = contents.creationDate
        receipt.opaqueValue = (0..<16).map { _ in UInt8.random(in: 0...255) }
        receipt.sha1Hash = receipt.expectedHash(for: deviceIdentifier)
        receipt.inAppPurchases = contents.inAppPurchases.map { item in
            var purchase = InAppPurchase()
            purchase.quantity = Int64(item.quantity)
            purchase.productIdentifier = item.productIdentifier
            purchase.transactionIdentifier = item.transactionIdentifier
            purchase.originalTransactionIdentifier = item.originalTransactionIdentifier
            purchase.purchaseDate = item.purchaseDate
            purchase.originalPurchaseDate = item.originalPurchaseDate
            purchase.subscriptionExpirationDate = item.expirationDate
            purchase.cancellationDate = item.cancellationDate
            purchase.webOrderLineItemID = item.webOrderLineItemID ?? 0
            purchase.productType =
                switch item.productType {
                case .nonConsumable: .nonConsumable
                case .consumable: .consumable
                case .nonRenewingSubscription: .nonRenewingSubscription
                case .autoRenewableSubscription: .autoRenewableSubscription
                }
            if item.productType == .autoRenewableSubscription {
                purchase.isTrialPeriod = false
                purchase.isInIntroOfferPeriod = false
            }
            return purchase
        }
        return receipt
    }

    /// The receipt for `contents`, signed as PKCS#7 in ``layout``.
    public func issueReceipt(for contents: ReceiptContents) throws -> Data {
        Data(try signer.sign(receipt(for: contents), layout: layout))
    }
}
