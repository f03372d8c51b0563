#!/bin/bash
# The largest case CI keeps of issue 19 (large circuits): a circuit of ~2^17 constraints (a chain of
# 250 circomlib Poseidon(2) hashes, compiled here with the repository's circom2, key from `zkpipe
# keygen --insecure-dev`) through the whole pipeline from circuit inputs, with an empty generator
# cache: 2 slabs sized from the circuit (slab_size = auto), 2 synthd, gpud (CPU backend), finalizerd.
# One job of 2 inputs: the first partition waits for the background compile (synthd logs it; the
# second synthd does not build it again), both proofs are accepted by snarkjs, and each public.json
# is the one snarkjs's own witness gives. Larger sizes are benchmarks (bench/scale/pipeline.sh).
. "$(dirname "$0")/lib.sh"
need_snarkjs
circom=$ROOT/node_modules/circom2/cli.js
[ -e "$circom" ] && [ -d "$ROOT/node_modules/circomlib/circuits" ] || { echo "SKIP: circom2 or circomlib not installed (npm ci)"; exit 77; }
mkdir -p "$T/c"
cp "$ROOT/tests/witgen/pchain250.circom" "$T/c/chain.circom"
cp -r "$ROOT/node_modules/circomlib/circuits" "$T/c/circomlib"
(cd "$T/c" && node "$circom" chain.circom --r1cs --wasm -l . -o . >/dev/null) || fail "circom2 chain.circom"
"$ZKPIPE" keygen --insecure-dev "$T/c/chain.r1cs" "$T/chain.zkey" "$T/vk.json" >"$T/keygen.out" 2>&1 || fail "keygen: $(tail -3 "$T/keygen.out")"
printf '{"in": ["12345678901234567890", "98765432109876543210"]}\n' >"$T/in-1.json"
printf '{"in": ["31415926535897932384", "27182818284590452353"]}\n' >"$T/in-2.json"
write_witgen_config "[finalizer]" "verify = yes" "[circuit chain]" "zkey = $T/chain.zkey" "wasm = $T/c/chain_js/chain.wasm"
[ ! -e "$T/cache" ] || fail "the generator cache is not empty"
start synthd1
start synthd2
start gpud
start finalizerd
J=$(submit_inputs chain "$T/in-1.json" "$T/in-2.json")
wait_job "$J" 540 || fail "job $J: $(cat "$T/wait-$J.err")"
builds=$(grep -h "Built the witness generator of circuit chain" "$T"/logs/synthd*.log | wc -l)
[ "$builds" = 1 ] || fail "the generator was built $builds times (expected once, by one synthd)"
for k in 0 1; do
    "$SNARKJS" groth16 verify "$T/vk.json" "$SPOOL/done/$J/public-$k.json" "$SPOOL/done/$J/proof-$k.json" | grep -q OK ||
        fail "snarkjs rejects proof $k of job $J"
    i=$((k + 1))
    "$SNARKJS" wtns calculate "$T/c/chain_js/chain.wasm" "$T/in-$i.json" "$T/s-$i.wtns" >/dev/null || fail "snarkjs wtns calculate"
    "$SNARKJS" wtns export json "$T/s-$i.wtns" "$T/s-$i.json" >/dev/null || fail "snarkjs wtns export json"
    # public signals: wires 1..nPublic (1 output + 2 inputs) of snarkjs's witness
    python3 - "$T/s-$i.json" "$SPOOL/done/$J/public-$k.json" <<'PY' || fail "public-$k.json of job $J differs from snarkjs's witness"
import json, sys
w = json.load(open(sys.argv[1]))
p = json.load(open(sys.argv[2]))
sys.exit(0 if p == w[1:4] else 1)
PY
done
log "a 2^17 circuit from inputs, cold cache: built once ($(grep -ho 'into [^ ]* in [0-9.]* s' "$T"/logs/synthd*.log)), both proofs verified"
stop_all
