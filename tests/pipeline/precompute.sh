#!/bin/bash
# The CPU backend's window tables ([gpu] precompute, docs/prover.md): gpud builds them when it
# loads a key and names them in its load line; proofs over them are accepted by snarkjs on both
# curves; when a circuit's key file is replaced by another key of the same circuit, gpud builds new
# tables and the proofs verify against the new key's vk, not the old one's (old tables are never
# used for a changed key).
. "$(dirname "$0")/lib.sh"
need_snarkjs
P=$DATA/bn128/poseidon
M=$DATA/bls12381/mulchain
"$ZKPIPE" keygen --insecure-dev -q "$P/poseidon.r1cs" "$T/key2.zkey" "$T/vk2.json" 2>/dev/null ||
    fail "keygen of a second poseidon key failed"
cp "$P/poseidon.zkey" "$T/live.zkey"
write_config 4 0 "[circuit live]" "zkey = $T/live.zkey" "r1cs = $P/poseidon.r1cs" "[gpu]" "precompute = 64M"
start synthd1
start gpud
start finalizerd
J1=$(submit poseidon NORMAL "$P/witness-1.wtns" "$P/witness-2.wtns" "$P/witness-3.wtns")
J2=$(submit mulchain381 NORMAL "$M/witness-1.wtns" "$M/witness-2.wtns")
J3=$(submit live NORMAL "$P/witness-1.wtns" "$P/witness-4.wtns")
for j in "$J1" "$J2" "$J3"; do wait_job "$j" 180 || fail "job $j: $(cat "$T/wait-$j.err")"; done
verify_job "$J1" poseidon 3 snarkjs
verify_job "$J2" mulchain381 2 snarkjs
snarkjs_ok() { "$SNARKJS" groth16 verify "$1" "$2" "$3" 2>&1 | grep -q 'OK!'; }
for k in 0 1; do
    snarkjs_ok "$P/vk.json" "$SPOOL/done/$J3/public-$k.json" "$SPOOL/done/$J3/proof-$k.json" ||
        fail "job $J3 partition $k: snarkjs does not accept the proof"
done
for c in poseidon mulchain381 live; do
    grep -E "Loaded the key of circuit $c .*; window tables [0-9.]+ MiB \([0-9.]+ MiB available\): A [0-9]+-bit windows, [0-9]+ of [0-9]+ stored, [0-9.]+ MiB; B1 .*; B2 .*; C .*; H [0-9]+-bit windows" \
        "$T/logs/gpud.log" >/dev/null || fail "gpud's log does not name the window tables of circuit $c"
done

# another key for circuit live: gpud reloads it and proves with new tables
cp "$T/key2.zkey" "$T/live.zkey"
sleep 1
J4=$(submit live NORMAL "$P/witness-2.wtns" "$P/witness-3.wtns")
wait_job "$J4" 180 || fail "job $J4: $(cat "$T/wait-$J4.err")"
for k in 0 1; do
    snarkjs_ok "$T/vk2.json" "$SPOOL/done/$J4/public-$k.json" "$SPOOL/done/$J4/proof-$k.json" ||
        fail "job $J4 partition $k: not a proof of the new key (proved with the old key's tables?)"
    ! snarkjs_ok "$P/vk.json" "$SPOOL/done/$J4/public-$k.json" "$SPOOL/done/$J4/proof-$k.json" ||
        fail "job $J4 partition $k verifies against the old key: the key was not replaced"
done
[ "$(grep -c "Loaded the key of circuit live .*; window tables" "$T/logs/gpud.log")" -ge 2 ] ||
    fail "gpud did not build new tables for the replaced key"
alive gpud && alive synthd1 && alive finalizerd || fail "a stage died"
stop_all
log "PASS: proofs over window tables accepted by snarkjs on both curves; a replaced key got new tables"
