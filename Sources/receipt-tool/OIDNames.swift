/// Readable names for the object identifiers found in receipts and their certificates.
enum OIDNames {
    static let names: [String: String] = [
        "1.2.840.113549.1.7.1": "pkcs7-data",
        "1.2.840.113549.1.7.2": "pkcs7-signedData",
        "1.2.840.113549.1.9.3": "contentType",
        "1.2.840.113549.1.9.4": "messageDigest",
        "1.2.840.113549.1.9.5": "signingTime",
        "1.2.840.113549.1.1.1": "rsaEncryption",
        "1.2.840.113549.1.1.4": "md5WithRSAEncryption",
        "1.2.840.113549.1.1.5": "sha1WithRSAEncryption",
        "1.2.840.113549.1.1.11": "sha256WithRSAEncryption",
        "1.2.840.113549.1.1.12": "sha384WithRSAEncryption",
        "1.2.840.113549.1.1.13": "sha512WithRSAEncryption",
        "1.2.840.10045.2.1": "id-ecPublicKey",
        "1.2.840.10045.3.1.7": "prime256v1",
        "1.3.132.0.34": "secp384r1",
        "1.2.840.10045.4.3.2": "ecdsa-with-SHA256",
        "1.2.840.10045.4.3.3": "ecdsa-with-SHA384",
        "1.2.840.113549.2.5": "md5",
        "1.3.14.3.2.26": "sha1",
        "2.16.840.1.101.3.4.2.1": "sha256",
        "2.16.840.1.101.3.4.2.2": "sha384",
        "2.16.840.1.101.3.4.2.3": "sha512",
        "2.5.4.3": "commonName",
        "2.5.4.6": "countryName",
        "2.5.4.7": "localityName",
        "2.5.4.8": "stateOrProvinceName",
        "2.5.4.10": "organizationName",
        "2.5.4.11": "organizationalUnitName",
        "2.5.29.14": "subjectKeyIdentifier",
        "2.5.29.15": "keyUsage",
        "2.5.29.19": "basicConstraints",
        "2.5.29.31": "cRLDistributionPoints",
        "2.5.29.32": "certificatePolicies",
        "2.5.29.35": "authorityKeyIdentifier",
        "2.5.29.37": "extKeyUsage",
        "1.3.6.1.5.5.7.1.1": "authorityInfoAccess",
        "1.2.840.113635.100.6.11.1": "Apple receipt-signing marker",
        "1.2.840.113635.100.6.2.1": "Apple WWDR intermediate marker",
        "1.2.840.113635.100.6.5.1": "Apple iTunes Store receipt marker",
        "1.2.840.113635.100.5.1": "Apple certificate policy",
    ]

    /// `1.2.840.113549.1.7.2 (pkcs7-signedData)`, or just the dotted form.
    static func describe(_ dotted: String) -> String {
        names[dotted].map { "\(dotted) (\($0))" } ?? dotted
    }

    static func name(_ dotted: String) -> String { names[dotted] ?? dotted }
}

/// Names of receipt attribute types, by meaning.
enum AttributeNames {
    static let receipt: [Int: String] = [
        0: "receipt_type", 1: "app_item_id", 2: "bundle_id", 3: "application_version", 4: "opaque_value",
        5: "sha1_hash", 6: "undocumented blob", 7: "undocumented blob", 8: "undocumented date",
        9: "undocumented integer", 10: "age_rating", 11: "undocumented integer", 12: "receipt_creation_date",
        13: "undocumented integer (OS version?)", 14: "undocumented integer", 15: "download_id",
        16: "version_external_identifier", 17: "in_app purchase", 18: "original_purchase_date",
        19: "original_application_version", 20: "undocumented", 21: "expiration_date",
        22: "VPP date (unofficial)", 23: "VPP client name (unofficial)", 25: "undocumented integer (platform?)",
    ]

    static let inApp: [Int: String] = [
        1701: "quantity", 1702: "product_id", 1703: "transaction_id", 1704: "purchase_date",
        1705: "original_transaction_id", 1706: "original_purchase_date", 1707: "product_type",
        1708: "expires_date", 1709: "undocumented", 1710: "undocumented integer", 1711: "web_order_line_item_id",
        1712: "cancellation_date", 1713: "is_trial_period", 1714: "undocumented", 1715: "undocumented",
        1716: "undocumented", 1717: "undocumented", 1718: "undocumented", 1719: "is_in_intro_offer_period", 1720: "cancellation_reason",
        1721: "promotional_offer_id", 1722: "undocumented integer",
    ]

    static func name(_ type: Int) -> String {
        receipt[type] ?? inApp[type] ?? "unknown"
    }
}
