#!/usr/bin/env bash
# Checks that each target in Package.swift declares exactly the package targets its sources
# import, that only ReceiptCrypto, HTTPClient and CryptoBaselines import COpenSSL and only ServerNotifications
# CSQLite and CLibPQ, and that no product links CryptoBaselines, CYardsticks or TestSupport. Needs
# only the Swift toolchain. `--graph` prints the import graph.
set -euo pipefail
cd "$(dirname "$0")/.."
swift package dump-package | swift scripts/check-imports.swift "$@"
