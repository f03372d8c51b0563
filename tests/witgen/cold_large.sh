#!/bin/sh
# The first witness of a large never-seen circuit (issue 19): a chain of 250 circomlib Poseidon(2)
# hashes (~2^17 constraints, a 2.3 MB wasm), compiled here with the repository's circom2, goes
# through `zkpipe witness` with an empty cache (wasm2c, data segments as .incbin, the functions in
# units compiled in parallel) and gives the bytes `snarkjs wtns calculate` gives; then once more
# from the cache.
set -u
root=${ZKPIPE_SOURCE_ROOT:?}
zkpipe=${ZKPIPE_BUILD_ROOT:?}/cli/zkpipe
circom=$root/node_modules/circom2/cli.js
snarkjs=$root/node_modules/.bin/snarkjs
[ -e "$circom" ] && [ -x "$snarkjs" ] && [ -d "$root/node_modules/circomlib/circuits" ] ||
    { echo "SKIP: circom2, circomlib or snarkjs not installed (npm ci)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$root/tests/witgen/pchain250.circom" "$tmp/chain.circom"
cp -r "$root/node_modules/circomlib/circuits" "$tmp/circomlib"
(cd "$tmp" && node "$circom" chain.circom --wasm -l . -o . >/dev/null) || { echo "FAIL circom2"; exit 1; }
printf '{"in": ["12345678901234567890", "98765432109876543210"]}\n' >"$tmp/in.json"
"$zkpipe" witness --cache "$tmp/cache" "$tmp/chain_js/chain.wasm" "$tmp/in.json" "$tmp/z.wtns" >/dev/null ||
    { echo "FAIL zkpipe witness with an empty cache"; exit 1; }
"$snarkjs" wtns calculate "$tmp/chain_js/chain.wasm" "$tmp/in.json" "$tmp/s.wtns" >/dev/null || { echo "FAIL snarkjs"; exit 1; }
cmp "$tmp/z.wtns" "$tmp/s.wtns" || { echo "FAIL the first witness differs from snarkjs's"; exit 1; }
"$zkpipe" witness --cache "$tmp/cache" "$tmp/chain_js/chain.wasm" "$tmp/in.json" "$tmp/z2.wtns" >/dev/null &&
    cmp "$tmp/z2.wtns" "$tmp/s.wtns" || { echo "FAIL the cached witness differs"; exit 1; }
[ "$(ls "$tmp/cache" | grep -c '\.so$')" = 1 ] || { echo "FAIL cache: $(ls -a "$tmp/cache")"; exit 1; }
echo "ok   $(stat -c %s "$tmp/chain_js/chain.wasm")-byte wasm: first and cached witness byte-identical to snarkjs"
