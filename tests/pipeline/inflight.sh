#!/bin/bash
# gpud with two partitions in flight (inflight = 2, the CUDA backend's default) on the CPU backend.
# gpud is held after it submitted partition 1 while partition 0 is still uncollected (a delay before
# partition 0 lets synthd make partition 1 READY first), then:
#  (a) released: the 6-partition job completes and every proof verifies;
#  (b) SIGKILL: both slabs in flight are reclaimed and proved again (prove_count 2, synth_count 1);
#  (c) SIGTERM: gpud collects what it submitted before it exits, so partitions 0 and 1 are proved
#      once (prove_count 1), and the job completes after a restart.
GPU_INFLIGHT=2
. "$(dirname "$0")/lib.sh"
M=$DATA/bn128/mulchain
W1=$M/witness-1.wtns
W2=$M/witness-2.wtns
write_config 4 0

# hold: start the stages, submit a 6-partition job, wait until gpud has two partitions in flight
hold() {
    start synthd1
    start finalizerd
    start gpud ZKPIPE_TEST_DELAY=gpu.mid_prove:300:0 ZKPIPE_TEST_PAUSE=gpu.submitted:1
    J=$(submit mulchain NORMAL $W1 $W2 $W1 $W2 $W1 $W2)
    wait_for 60 "gpud to stop after submitting partition 1" is_stopped gpud
    slab_line | grep -q 'PROVING 2' || fail "not two partitions in flight: $(slab_line)"
}
count() { json_get "$(result_json "$J")" "r[\"partitions\"][$1][\"$2\"]"; }

log "(a) two in flight, released"
hold
kill -CONT "${PIDS[gpud]}"
wait_job "$J" 120 || fail "job failed: $(cat $T/wait-$J.err)"
verify_job "$J" mulchain 6
grep -q "2 partitions in flight" "$T/logs/gpud.log" || fail "gpud does not report 2 partitions in flight"
for k in 0 1 2 3 4 5; do [ "$(count $k prove_count)" = 1 ] || fail "partition $k proved $(count $k prove_count) times"; done
stop_all
all_slabs_free || fail "slabs not FREE: $(slab_line)"

log "(b) SIGKILL with two in flight"
hold
kill9 gpud
start gpud
wait_job "$J" 120 || fail "job failed: $(cat $T/wait-$J.err)"
verify_job "$J" mulchain 6
for k in 0 1; do
    [ "$(count $k prove_count)" = 2 ] || fail "partition $k: prove_count $(count $k prove_count), expected 2"
    [ "$(count $k synth_count)" = 1 ] || fail "partition $k was synthesized again"
done
stop_all
all_slabs_free || fail "slabs not FREE: $(slab_line)"

log "(c) SIGTERM with two in flight"
hold
pid=${PIDS[gpud]}
kill -TERM "$pid"
kill -CONT "$pid"
rc=0
wait "$pid" || rc=$?
unset "PIDS[gpud]"
[ $rc = 0 ] || fail "gpud exited with $rc on SIGTERM"
slab_line | grep -q 'PROVING [1-9]' && fail "gpud left partitions PROVING: $(slab_line)"
start gpud
wait_job "$J" 120 || fail "job failed: $(cat $T/wait-$J.err)"
verify_job "$J" mulchain 6
for k in 0 1; do [ "$(count $k prove_count)" = 1 ] || fail "partition $k was proved again after SIGTERM"; done
stop_all
all_slabs_free || fail "slabs not FREE: $(slab_line)"
[ -z "$(ls "$SPOOL/active")" ] || fail "spool/active not empty"
log "PASS"
