#!/bin/bash
# Makes the large benchmark circuits of bench/prove-compare that are not kept in git, each in
# bench/data/NAME/: compiled with circom 2 (npm circom2@0.2.23, circomlib@2.0.5, installed into
# bench/.tools, not into the root package.json), the witness computed with node, and an INSECURE
# development key made with `zkpipe keygen --insecure-dev` (timing only). The generated files are
# gitignored; a circuit whose files are there is left alone (--force remakes it).
#   pchain18  the Poseidon chain of bench/data/pchain16 with 507 circomlib Poseidon(2) hashes
#             (262,119 constraints, nPublic 3, domain 2^18)
#   sha256    circomlib Sha256(256): SHA-256 of a 256-bit message, one 512-bit block after padding
#             (~30k constraints, domain 2^15), the digest bits public
#   pchain20, pchain22  the same chain of 2000 and 8000 hashes (~2^20 and ~2^22 constraints), for
#             bench/witness-cold
#   pchain16  the wasm of bench/data/pchain16 (126 hashes, domain 2^16) for the pipeline's input jobs
#             (bench/pipeline.sh); its key is ../shared/bench/pchain16's, copied here when it is there
#             (the committed vk.json is that key's), never made anew
#   pchain16bls  the 126-hash Poseidon chain of bench/data/pchain16 compiled for bls12381
#             (circom --prime bls12381: circomlib's constants taken mod r, a benchmark circuit, not a
#             hash; domain 2^16)
#
# Usage: bench/make-circuits.sh [--force] pchain16|pchain18|pchain20|pchain22|sha256|pchain16bls...
# Environment: ZKPIPE (the zkpipe binary; default $ZKPIPE_BUILD_ROOT/cli/zkpipe, build root
# default ./build), THREADS (keygen threads; default all CPUs), WASM_ONLY=1 (only the r1cs, the
# wasm and input.json: no witness, no key; what bench/witness-cold needs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ZKPIPE_BUILD_ROOT:-$root/build}
zkpipe=${ZKPIPE:-$build/cli/zkpipe}
tools=$root/bench/.tools
# the repository's own circom2 and circomlib (npm ci) when they are there
[ -e "$root/node_modules/circom2/cli.js" ] && [ -d "$root/node_modules/circomlib/circuits" ] && tools=$root
force=0
if [ "${1:-}" = "--force" ]; then
    force=1
    shift
fi
if [ $# -eq 0 ]; then
    echo "usage: bench/make-circuits.sh [--force] pchain16|pchain18|pchain20|pchain22|sha256|pchain16bls..." >&2
    exit 2
fi

# Writes bench/data/NAME/STEM.circom and its input json.
write_source() {
    local name=$1 out=$2 stem=$3
    local hashes=507
    [ "$name" = pchain16bls ] || [ "$name" = pchain16 ] && hashes=126
    [ "$name" = pchain20 ] && hashes=2000
    [ "$name" = pchain22 ] && hashes=8000
    case $name in
    pchain16 | pchain18 | pchain20 | pchain22 | pchain16bls)
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
component main {public [in]} = PoseidonChain($hashes);
EOF
        printf '%s\n' '{"in": ["12345678901234567890", "98765432109876543210"]}' >"$out/input.json"
        ;;
    sha256)
        cat >"$out/$stem.circom" <<EOF
pragma circom 2.0.0;
include "circomlib/sha256/sha256.circom";
// SHA-256 of a private 256-bit message (one 512-bit block after padding); the digest bits are the
// public outputs. Default circom O1 simplification.
component main = Sha256(256);
EOF
        # the message: bit i of the 32 bytes 0x00, 0x01, ..., 0x1f, most significant bit first
        python3 -c 'import json; print(json.dumps({"in": [str((b >> (7 - k)) & 1) for b in range(32) for k in range(8)]}))' \
            >"$out/input.json"
        ;;
    esac
}

make_one() {
    local name=$1 stem out
    case $name in
    pchain18) stem=pchain_507 ;;
    pchain20) stem=pchain_2000 ;;
    pchain22) stem=pchain_8000 ;;
    sha256) stem=sha256_512 ;;
    pchain16bls) stem=pchain_126 ;;
    pchain16)
        stem=pchain_126
        local WASM_ONLY=1 shared=$root/../shared/bench/pchain16/$stem.zkey
        [ -s "$root/bench/data/pchain16/$stem.zkey" ] || [ ! -s "$shared" ] || cp "$shared" "$root/bench/data/pchain16/"
        ;;
    *)
        echo "make-circuits: unknown circuit '$name' (pchain16, pchain18, pchain20, pchain22, sha256, pchain16bls)" >&2
        exit 2
        ;;
    esac
    out=$root/bench/data/$name
    if [ "${WASM_ONLY:-0}" = 1 ] && [ $force = 0 ] && [ -s "$out/${stem}_js/$stem.wasm" ] && [ -s "$out/input.json" ]; then
        echo "make-circuits: $out/${stem}_js/$stem.wasm is up to date (--force to remake)"
        return 0
    fi
    if [ "${WASM_ONLY:-0}" != 1 ] && [ $force = 0 ] && [ -s "$out/$stem.zkey" ] && [ -s "$out/$stem.wtns" ] && [ -s "$out/vk.json" ] &&
        [ -s "$out/$stem.r1cs" ]; then
        echo "make-circuits: $out is up to date (--force to remake)"
        return 0
    fi
    mkdir -p "$out"
    write_source "$name" "$out" "$stem"
    # circom2 runs under WASI and sees only its working directory: compile in a scratch folder that
    # holds the source and a copy of circomlib's circuits.
    local work
    work=$(mktemp -d)
    cp "$out/$stem.circom" "$work/"
    cp -r "$tools/node_modules/circomlib/circuits" "$work/circomlib"
    echo "make-circuits: compiling $stem.circom (circom2 0.2.23)"
    local prime=bn128
    [ "$name" = pchain16bls ] && prime=bls12381
    (cd "$work" && node "$tools/node_modules/circom2/cli.js" "$stem.circom" --prime "$prime" --r1cs --wasm -l . -o .)
    if [ "${WASM_ONLY:-0}" = 1 ]; then
        rm -rf "$out/${stem}_js"
        mv "$work/${stem}_js" "$work/$stem.r1cs" "$out/"
        rm -rf "$work"
        ls -l "$out" "$out/${stem}_js"
        return 0
    fi
    echo "make-circuits: computing the witness"
    node "$work/${stem}_js/generate_witness.js" "$work/${stem}_js/$stem.wasm" "$out/input.json" "$work/$stem.wtns"
    mv "$work/$stem.r1cs" "$out/$stem.r1cs"
    mv "$work/$stem.wtns" "$out/$stem.wtns"
    # the generator stays too: bench/scale/pipeline.sh NAME and bench/witness-cold run it
    rm -rf "$out/${stem}_js"
    mv "$work/${stem}_js" "$out/"
    rm -rf "$work"
    echo "make-circuits: making the (insecure, benchmark-only) key"
    "$zkpipe" keygen --insecure-dev ${THREADS:+--threads "$THREADS"} "$out/$stem.r1cs" "$out/$stem.zkey" "$out/vk.json"
    ls -l "$out"
}

if [ ! -x "$zkpipe" ]; then
    echo "make-circuits: no zkpipe at $zkpipe (build first, or set ZKPIPE)" >&2
    exit 1
fi
if [ ! -e "$tools/node_modules/.bin/circom2" ] || [ ! -d "$tools/node_modules/circomlib/circuits" ]; then
    echo "make-circuits: installing circom2@0.2.23 and circomlib@2.0.5 into $tools"
    mkdir -p "$tools"
    npm install --prefix "$tools" --no-audit --no-fund --save-exact circom2@0.2.23 circomlib@2.0.5 >&2
fi
for name in "$@"; do
    make_one "$name"
done
