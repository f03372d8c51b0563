#!/bin/bash
# A key rewritten in place never takes gpud down (issue "Nothing accepted is ever lost or proven
# wrong", point 9): while a batch proves, the circuit's .zkey is rewritten in place again and again
# (cp over it: truncate, then write); the stages hold keys in their own memory, notice the change
# and reload between partitions; the batch completes, every proof verifies, no stage died.
. "$(dirname "$0")/lib.sh"
P=$DATA/bn128/poseidon
cp "$P/poseidon.zkey" "$T/live.zkey"
write_config 4 0 "[circuit live]" "zkey = $T/live.zkey" "r1cs = $P/poseidon.r1cs"
start synthd1
start gpud ZKPIPE_TEST_DELAY=gpu.mid_prove:150
start finalizerd
W=()
for i in $(seq 12); do W+=("$P/witness-$((i % 4 + 1)).wtns"); done
J=$(submit live NORMAL "${W[@]}")
for i in $(seq 40); do
    cp "$P/poseidon.zkey" "$T/live.zkey"
    sleep 0.05
done
wait_job "$J" 180 || fail "job $J: $(cat "$T/wait-$J.err")"
for k in $(seq 0 11); do
    "$ZKPIPE" verify "$P/vk.json" "$SPOOL/done/$J/public-$k.json" "$SPOOL/done/$J/proof-$k.json" >/dev/null ||
        fail "proof $k does not verify"
done
alive gpud && alive synthd1 && alive finalizerd || fail "a stage died while its key was rewritten"
grep -q "files of circuit live changed on disk; reloaded (same content)" "$T/logs/gpud.log" ||
    fail "gpud did not notice the rewritten key"
[ "$(json_get "$(result_json "$J")" 'sum(p["prove_count"] for p in r["partitions"])')" = 12 ] ||
    fail "partitions were proved more than once"
stop_all
log "PASS"
