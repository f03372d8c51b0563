#!/bin/bash
# Makes the 2^18 benchmark circuit in bench/data/pchain18/: the Poseidon chain of
# bench/data/pchain16 with 507 circomlib Poseidon(2) hashes (262,119 constraints, nPublic 3),
# compiled with circom 2 (npm circom2@0.2.23, circomlib@2.0.5, installed into bench/.tools, not into
# the root package.json), its witness computed with node, and an INSECURE development key made with
# `zkpipe keygen --insecure-dev` (timing only). The generated files are large and gitignored; this
# script makes them on first use and does nothing when they are there (--force remakes them).
#
# Usage: bench/make-pchain18.sh [--force]
# Environment: ZKPIPE (the zkpipe binary; default $ZKPIPE_BUILD_ROOT/cli/zkpipe, build root
# default ./build), THREADS (keygen threads; default all CPUs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ZKPIPE_BUILD_ROOT:-$root/build}
zkpipe=${ZKPIPE:-$build/cli/zkpipe}
tools=$root/bench/.tools
out=$root/bench/data/pchain18
n=507
stem=pchain_$n

if [ "${1:-}" != "--force" ] && [ -s "$out/$stem.zkey" ] && [ -s "$out/$stem.wtns" ] && [ -s "$out/vk.json" ] &&
    [ -s "$out/$stem.r1cs" ]; then
    echo "make-pchain18: $out is up to date (--force to remake)"
    exit 0
fi
if [ ! -x "$zkpipe" ]; then
    echo "make-pchain18: no zkpipe at $zkpipe (build first, or set ZKPIPE)" >&2
    exit 1
fi

if [ ! -e "$tools/node_modules/.bin/circom2" ] || [ ! -d "$tools/node_modules/circomlib/circuits" ]; then
    echo "make-pchain18: installing circom2@0.2.23 and circomlib@2.0.5 into $tools"
    mkdir -p "$tools"
    npm install --prefix "$tools" --no-audit --no-fund --save-exact circom2@0.2.23 circomlib@2.0.5 >&2
fi

mkdir -p "$out"
cat >"$out/$stem.circom" <<EOF
pragma circom 2.0.0;
include "circomlib/poseidon.circom";
// Chain of n Poseidon(2) hashes (circomlib): h_0 = P(in0, in1), h_i = P(h_{i-1}, in1). Default circom O1 simplification.
template PoseidonChain(n) {
    signal input in[2];
    signal output out;
    component h[n];
    for (var i = 0; i < n; i++) {
        h[i] = Poseidon(2);
        h[i].inputs[0] <== (i == 0) ? in[0] : h[i-1].out;
        h[i].inputs[1] <== in[1];
    }
    out <== h[n-1].out;
}
component main {public [in]} = PoseidonChain($n);
EOF
printf '%s\n' '{"in": ["12345678901234567890", "98765432109876543210"]}' >"$out/pchain_input.json"

# circom2 runs under WASI and sees only its working directory: compile in a scratch folder that holds
# the source and a copy of circomlib's circuits.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$out/$stem.circom" "$work/"
cp -r "$tools/node_modules/circomlib/circuits" "$work/circomlib"
echo "make-pchain18: compiling $stem.circom (circom2 0.2.23)"
(cd "$work" && node "$tools/node_modules/circom2/cli.js" "$stem.circom" --r1cs --wasm -l . -o .)
echo "make-pchain18: computing the witness"
node "$work/${stem}_js/generate_witness.js" "$work/${stem}_js/$stem.wasm" "$out/pchain_input.json" "$work/$stem.wtns"
mv "$work/$stem.r1cs" "$out/$stem.r1cs"
mv "$work/$stem.wtns" "$out/$stem.wtns"
echo "make-pchain18: making the (insecure, benchmark-only) key"
"$zkpipe" keygen --insecure-dev ${THREADS:+--threads "$THREADS"} "$out/$stem.r1cs" "$out/$stem.zkey" "$out/vk.json"
ls -l "$out"
