#!/bin/bash
# Test 1: 2 synthd + 1 gpud + 1 finalizerd prove two jobs of 4 partitions (bn128 poseidon and
# bls12381 mulchain); every proof verifies with snarkjs; a clean SIGTERM stop leaves every slab FREE.
. "$(dirname "$0")/lib.sh"
write_config 4 0
start synthd1
start synthd2
start gpud
start finalizerd
P=$DATA/bn128/poseidon
M=$DATA/bls12381/mulchain
J1=$(submit poseidon NORMAL $P/witness-1.wtns $P/witness-2.wtns $P/witness-3.wtns $P/witness-4.wtns)
J2=$(submit mulchain381 NORMAL $M/witness-1.wtns $M/witness-2.wtns $M/witness-1.wtns $M/witness-2.wtns)
log "submitted $J1 (bn128 poseidon x4) and $J2 (bls12381 mulchain x4)"
wait_job "$J1" 180 || fail "job $J1: wait exit $?: $(cat $T/wait-$J1.err)"
wait_job "$J2" 180 || fail "job $J2: wait exit $?: $(cat $T/wait-$J2.err)"
grep -q "$SPOOL/done/$J1/proof-3.json" "$T/wait-$J1.out" || fail "wait did not print the output paths"
verify_job "$J1" poseidon 4 snarkjs
verify_job "$J2" mulchain381 4 snarkjs
# the public signals are the fixtures' (same witness, same public.json)
for k in 0 1 2 3; do
    cmp -s <(tr -d ' \n' <"$SPOOL/done/$J1/public-$k.json") <(tr -d ' \n' <"$P/public-$((k + 1)).json") ||
        fail "public-$k.json differs from the fixture's"
done
[ "$(json_get "$(result_json "$J1")" 'r["status"]')" = done ] || fail "result.json status"
json_get "$(result_json "$J1")" 'all(p["gpu_ms"] > 0 and p["synth_count"] == 1 for p in r["partitions"])' | grep -q True ||
    fail "result.json lacks per-partition timings"
for n in synthd1 synthd2 gpud finalizerd; do stop "$n" || fail "$n did not exit cleanly on SIGTERM"; done
all_slabs_free || fail "slabs not all FREE at the end: $(slab_line)"
[ -z "$(ls "$SPOOL/active")" ] || fail "spool/active not empty"
grep -q "bytes_copied 0" <("$ZKPIPE" status --config "$CONF") || fail "slab payload was copied"
log "PASS: 8 proofs on both curves accepted by snarkjs"
