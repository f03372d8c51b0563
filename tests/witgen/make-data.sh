#!/bin/sh
# Makes tests/data/witgen/ from the sources in tests/witgen/: the test circuits (guard, deep) with
# circom2 0.2.23 from npm (package.json; npm ci first) as .wasm + .r1cs, and trap.wasm from trap.wat
# with wabt's wat2wasm. Their outputs are reproducible byte for byte; the tests use the committed copies.
# Usage: tests/witgen/make-data.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/tests/data/witgen
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for c in guard deep; do
    node "$root/node_modules/.bin/circom2" "$here/$c.circom" --r1cs --wasm -o "$tmp" >/dev/null
    cp "$tmp/${c}_js/$c.wasm" "$tmp/$c.r1cs" "$out/"
done
wat2wasm "$here/trap.wat" -o "$out/trap.wasm"
echo "made $(ls "$out" | tr '\n' ' ')in $out"
