#!/usr/bin/env bash
# Signs every payload in payloads/ with the fixed PKI in this directory, into tokens/ (the
# jws-verify fuzz target's "genuine" tokens), and copies those under 8 KB into
# ../corpus/jws-verify/ as seeds. ECDSA signatures are randomised, so re-running makes new (equally genuine) tokens.
#
#   Fuzz/jws-verify/make-seeds.sh            sign with the committed keys
#   Fuzz/jws-verify/make-seeds.sh --new-pki  first make a new PKI (pki --jws, pki --jws --xcode)
set -euo pipefail
cd "$(dirname "$0")"
tool=../../.build/debug/receipt-tool
(cd ../.. && swift build --product receipt-tool >&2)
if [ "${1:-}" = "--new-pki" ]; then
    "$tool" pki . --jws
    "$tool" pki . --jws --xcode
fi
mkdir -p tokens ../corpus/jws-verify
for payload in payloads/*.json; do
    name=$(basename "$payload" .json)
    case "$name" in
    xcode-*) "$tool" make "$payload" --jws --key xcode-jws-key.pem --cert xcode-jws.pem -o "tokens/$name.jws" ;;
    *) "$tool" make "$payload" --jws --key leaf-key.pem --cert leaf.pem --chain intermediate.pem --chain root.pem -o "tokens/$name.jws" ;;
    esac
done
# One notification as an HTTP body.
printf '{"signedPayload":"%s"}\n' "$(tr -d '\n' < tokens/notification-test.jws)" > tokens/notification-test-body.json
# The committed corpus keeps inputs under 8 KB (the nested App Store notifications are larger).
find tokens -type f -size -8192c -exec cp {} ../corpus/jws-verify/ \;
