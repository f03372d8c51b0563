#!/bin/bash
# Two gpud on one segment (two devices of one box; CPU backend, one thread each, two partitions in
# flight each):
#  1. both take partitions of the same jobs; every proof verifies, every partition is proved once;
#     `zkpipe status`, `zkpipe top` and `zkpipe metrics` show each gpud with its device and count;
#  2. kill -9 of one while it holds two partitions, the other busy with a long job: they go back to
#     READY and the survivor proves them while it is still busy with the long job, nothing lost or
#     proved twice beyond the lost ones;
#  3. the killed one restarted rejoins and takes partitions again.
# Two gpud on one GPU's CUDA backend: tests/gpu/two_gpud_cuda.sh.
. "$(dirname "$0")/lib.sh"
GPU_INFLIGHT=2 write_config 6 0
M=$DATA/bn128/mulchain
B=$DATA/bls12381/mulchain
W=("$M/witness-1.wtns" "$M/witness-2.wtns")
wits() { local n=$1 k; for ((k = 0; k < n; k++)); do echo "${W[k % 2]}"; done; }
prove_counts() { # prove_counts JOB N: the partitions' prove counts, space-separated
    local k out=
    for ((k = 0; k < $2; k++)); do out="$out $(json_get "$(result_json "$1")" "r['partitions'][$k]['prove_count']")"; done
    echo $out
}
ones() { local k out=; for ((k = 0; k < $1; k++)); do out="$out 1"; done; echo $out; }
# mulchain_job N: a job of N mulchain witnesses, waited for; every proof verifies and every
# partition was proved once
mulchain_job() {
    local j
    j=$(submit mulchain NORMAL $(wits "$1"))
    wait_job "$j" 300 || fail "job $j failed: $(cat "$T/wait-$j.err")"
    verify_job "$j" mulchain "$1"
    [ "$(prove_counts "$j" "$1")" = "$(ones "$1")" ] || fail "a partition of $j was proved twice: $(prove_counts "$j" "$1")"
}

log "1. two gpud share the ring"
start synthd1
start finalizerd
start gpud0 ZKPIPE_TEST_DELAY=gpu.mid_prove:150
start gpud1 ZKPIPE_TEST_DELAY=gpu.mid_prove:150
J2=$(submit mulchain381 NORMAL $B/witness-1.wtns $B/witness-2.wtns)
mulchain_job 8
wait_job "$J2" 200 || fail "job $J2 failed: $(cat $T/wait-$J2.err)"
verify_job "$J2" mulchain381 2
[ "$(prove_counts "$J2" 2)" = "1 1" ] || fail "a partition of $J2 was proved twice: $(prove_counts "$J2" 2)"
both_gpud_proved 10 cpu
p0=$(proc_field 0 proved) p1=$(proc_field 1 proved)
"$ZKPIPE" metrics --config "$CONF" >"$T/metrics.txt" || fail "zkpipe metrics failed"
for i in 0 1; do
    grep -q "^zkpipe_stage_partitions_proved_total{stage=\"gpud\",instance=\"$i\",device=\"cpu 0\"} $([ $i = 0 ] && echo $p0 || echo $p1)\$" \
        "$T/metrics.txt" || fail "metrics lack gpud@$i's count: $(grep zkpipe_stage_partitions "$T/metrics.txt")"
done
echo q | "$ZKPIPE" top --config "$CONF" >"$T/top.txt" 2>&1 || fail "zkpipe top failed: $(cat "$T/top.txt")"
for i in 0 1; do
    grep -Eq "^gpud +$i .* cpu 0 \($([ $i = 0 ] && echo $p0 || echo $p1)\)" "$T/top.txt" ||
        fail "top shows no row for gpud@$i with its device: $(grep gpud "$T/top.txt")"
done
stop_all
all_slabs_free || fail "slabs not FREE: $(slab_line)"

log "2. kill -9 of one gpud holding two partitions while the other is busy"
start synthd1
start finalizerd
start gpud0 ZKPIPE_TEST_PAUSE=gpu.submitted:1
JA=$(submit mulchain HIGH $(wits 2))
wait_for 100 "gpud@0 to stop with partitions 0 and 1 in flight" is_stopped gpud0
slab_line | grep -q 'PROVING 2' || fail "not two partitions in flight: $(slab_line)"
JB=$(submit mulchain NORMAL $(wits 24))
# 300 ms before each submit: JB's 24 partitions take 7.2 s of delays alone, well past the reclaim of
# the dead gpud's two (with two lanes the proofs themselves overlap the delays)
start gpud1 ZKPIPE_TEST_DELAY=gpu.mid_prove:300
wait_for 100 "gpud@1 to prove a partition of $JB" sh -c "[ \"\$(\"$ZKPIPE\" status --config \"$CONF\" \"$JB\" | grep -c 'partition [0-9]* done')\" -ge 1 ]"
kill9 gpud0
wait_job "$JA" 100 || fail "job $JA failed after gpud@0 died: $(cat $T/wait-$JA.err)"
sb=$(state_of "$JB")
[ "$sb" = active ] || fail "the dead gpud's partitions were proved only after the long job ended (its state: $sb)"
wait_job "$JB" 200 || fail "job $JB failed: $(cat $T/wait-$JB.err)"
verify_job "$JA" mulchain 2
verify_job "$JB" mulchain 24
[ "$(prove_counts "$JA" 2)" = "2 2" ] || fail "the dead gpud's partitions were not proved once more each: $(prove_counts "$JA" 2)"
[ "$(prove_counts "$JB" 24)" = "$(ones 24)" ] || fail "a partition of $JB was proved twice: $(prove_counts "$JB" 24)"
[ "$("$ZKPIPE" status --config "$CONF" | awk '/^counters:/ {for (i = 1; i < NF; i++) if ($i == "reclaimed") print $(i + 1)}')" -ge 2 ] ||
    fail "no reclaim counted"

log "3. the killed gpud restarts and rejoins"
start gpud0 ZKPIPE_TEST_DELAY=gpu.mid_prove:150
p1=$(proc_field 1 proved)
mulchain_job 8
q0=$(proc_field 0 proved) q1=$(proc_field 1 proved)
log "after the restart: gpud@0 $q0 (new process), gpud@1 $((q1 - p1)) more"
[ "${q0:-0}" -gt 0 ] && [ $((q1 - p1)) -gt 0 ] || fail "the restarted gpud@0 did not rejoin (gpud@0 $q0, gpud@1 +$((q1 - p1)))"
stop_all
all_slabs_free || fail "slabs not FREE: $(slab_line)"

log "PASS"
