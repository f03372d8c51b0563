#!/bin/sh
# Makes tests/data/witgen/ from the sources in tests/witgen/: the test circuits (guard, deep, spin)
# with circom2 0.2.23 from npm (package.json; npm ci first) as .wasm + .r1cs, trap.wasm from trap.wat
# and the three hostile-*.wasm from hostile.wat with wabt's wat2wasm. Their outputs are reproducible
# byte for byte; the tests use the committed copies.
# Usage: tests/witgen/make-data.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/tests/data/witgen
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for c in guard deep spin; do
    node "$root/node_modules/.bin/circom2" "$here/$c.circom" --r1cs --wasm -o "$tmp" >/dev/null
    cp "$tmp/${c}_js/$c.wasm" "$tmp/$c.r1cs" "$out/"
done
wat2wasm "$here/trap.wat" -o "$out/trap.wasm"
for h in version:1:1 message:2:1 memory:0:65536; do
    name=${h%%:*} rest=${h#*:}
    sed -e "s/MODE/${rest%%:*}/" -e "s/PAGES/${rest#*:}/" "$here/hostile.wat" >"$tmp/hostile-$name.wat"
    wat2wasm "$tmp/hostile-$name.wat" -o "$out/hostile-$name.wasm"
done
echo "made $(ls "$out" | tr '\n' ' ')in $out"
