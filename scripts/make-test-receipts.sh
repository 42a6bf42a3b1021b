#!/usr/bin/env bash
# Regenerates TestReceipts/generated/: three test PKIs (made by `receipt-tool pki`) and receipts
# signed with them (made by `receipt-tool make`) from the JSON descriptions committed in
# TestReceipts/generated/descriptions/. Every run makes fresh keys, so every output file changes;
# commit them together. The tests in Tests/ReceiptVerificationTests/GeneratedFixtureTests.swift
# check what this script produces.
#
# Usage: scripts/make-test-receipts.sh   (from anywhere inside the repository)
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=TestReceipts/generated
DESCRIPTIONS="$OUT/descriptions"
# The device the App Store receipts are bound to (their sha1_hash is computed for it).
DEVICE=E3C1C4D2-6F1A-4F53-9C3B-2A7E5D8B9F10

swift build --product receipt-tool
tool() { swift run --skip-build receipt-tool "$@"; }

# PKIs: Apple-shaped (root, WWDR-like intermediate, marked leaf) with SHA-256 and with SHA-1
# certificate signatures, and a StoreKit-like self-signed certificate for Xcode receipts.
tool pki "$OUT/pki" --digest sha256
tool pki "$OUT/pki-sha1" --digest sha1
tool pki "$OUT/storekit" --xcode

# App Store layout (DER), signed the way Apple did until 2023 (SHA-1) and since (SHA-256),
# embedding leaf, intermediate and root in Apple's order.
tool make "$DESCRIPTIONS/appstore.json" --key "$OUT/pki-sha1/leaf-key.pem" --cert "$OUT/pki-sha1/leaf.pem" \
    --chain "$OUT/pki-sha1/intermediate.pem" --chain "$OUT/pki-sha1/root.pem" \
    --digest sha1 --device-id "$DEVICE" -o "$OUT/appstore-sha1.der"
tool make "$DESCRIPTIONS/appstore.json" --key "$OUT/pki/leaf-key.pem" --cert "$OUT/pki/leaf.pem" \
    --chain "$OUT/pki/intermediate.pem" --chain "$OUT/pki/root.pem" \
    --digest sha256 --device-id "$DEVICE" -o "$OUT/appstore-sha256.der"

# 150 in-app purchases.
tool make "$DESCRIPTIONS/many-purchases.json" --key "$OUT/pki/leaf-key.pem" --cert "$OUT/pki/leaf.pem" \
    --chain "$OUT/pki/intermediate.pem" --chain "$OUT/pki/root.pem" \
    --digest sha256 --device-id "$DEVICE" -o "$OUT/appstore-many-purchases.der"

# Xcode layout (BER, segmented payload), one self-signed certificate.
tool make "$DESCRIPTIONS/xcode.json" --key "$OUT/storekit/storekit-key.pem" --cert "$OUT/storekit/storekit.pem" \
    --ber --digest sha256 --device-id "$DEVICE" -o "$OUT/xcode-ber.der"

# Check what was made.
tool verify "$OUT/appstore-sha1.der" --anchor "$OUT/pki-sha1/root.pem" --device-id "$DEVICE" --bundle-id com.rmstore.example --json
tool verify "$OUT/appstore-sha256.der" "$OUT/appstore-many-purchases.der" --anchor "$OUT/pki/root.pem" \
    --device-id "$DEVICE" --bundle-id com.rmstore.example --json
tool verify "$OUT/xcode-ber.der" --anchor "$OUT/storekit/storekit.pem" --policy xcode --device-id "$DEVICE" --json
