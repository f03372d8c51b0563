#!/bin/bash
# The GPU lost mid-partition (CUDA backend on the host emulation, a kernel fault injected with
# ZKPIPE_EMU_FAULT=N: the N-th launch faults and the context is unusable from then on):
#  (a) once: gpud exits (status 3) naming the fault instead of failing the partitions in flight;
#      restarted, it reclaims them and the job completes with every proof valid, the faulted
#      partition proved twice and synthesized once;
#  (b) every time: each restart faults again; after 3 losses the partition fails with a reason that
#      says so, and the job ends failed instead of taking the stage down forever.
# A SIGKILL does not count as a loss (crash.sh and random_kills.sh restart gpud freely).
. "$(dirname "$0")/lib.sh"
GPUD=$BUILD/gpud/zkpipe-gpud-emu
[ -x "$GPUD" ] || { log "no $GPUD (built with a C++ compiler): skipping"; exit 77; }
write_config 4 0
sed -i 's/^backend = cpu$/backend = cuda/' "$CONF"
M=$DATA/bn128/mulchain

exited() { ! kill -0 "${PIDS[$1]}" 2>/dev/null; }
gpud_status() { # reap gpud and print its exit status
    local rc=0
    wait "${PIDS[gpud]}" || rc=$?
    unset "PIDS[gpud]"
    echo $rc
}

log "(a) one fault"
start synthd1
start finalizerd
start gpud ZKPIPE_EMU_FAULT=3
J=$(submit mulchain NORMAL $M/witness-1.wtns $M/witness-2.wtns $M/witness-1.wtns)
wait_for 100 "gpud to exit on the fault" exited gpud
rc=$(gpud_status)
[ "$rc" = 3 ] || fail "gpud exited with $rc, expected 3"
grep -q "The device is lost (CUDA: .*unspecified launch failure" "$T/logs/gpud.log" || fail "no 'device is lost' line: $(cat "$T/logs/gpud.log")"
[ "$(state_of "$J")" = active ] || fail "job is $(state_of "$J") after the fault, expected active"
start gpud
wait_job "$J" 200 || fail "job failed: $(cat $T/wait-$J.err)"
verify_job "$J" mulchain 3
R=$(result_json "$J")
[ "$(json_get "$R" 'r["partitions"][0]["prove_count"]')" = 2 ] || fail "partition 0 was not proved again"
[ "$(json_get "$R" 'r["partitions"][0]["synth_count"]')" = 1 ] || fail "partition 0 was synthesized again"
[ "$(json_get "$R" 'r["partitions"][0]["gpu_lost_count"]')" = 1 ] || fail "partition 0: gpu_lost_count not 1"
stop_all
all_slabs_free || fail "slabs not FREE: $(slab_line)"

log "(b) a fault every time"
: >"$T/logs/gpud.log"
start synthd1
start finalizerd
J=$(submit mulchain NORMAL $M/witness-1.wtns)
for i in 1 2 3 4; do
    start gpud ZKPIPE_EMU_FAULT=1
    wait_for 100 "gpud start $i to exit or the job to end" bash -c "! kill -0 ${PIDS[gpud]} 2>/dev/null || [ -d '$SPOOL/failed/$J' ]"
    [ -d "$SPOOL/failed/$J" ] && break
    rc=$(gpud_status)
    [ "$rc" = 3 ] || fail "gpud start $i exited with $rc, expected 3"
done
rc=0
wait_job "$J" 60 || rc=$?
[ $rc = 1 ] || fail "zkpipe wait: exit $rc, expected 1 (failed)"
grep -q "the GPU was lost 3 times while proving it" "$T/wait-$J.err" ||
    fail "the reason does not say why: $(cat "$T/wait-$J.err")"
[ "$(grep -c "The device is lost" "$T/logs/gpud.log")" = 3 ] || fail "expected 3 faults: $(cat "$T/logs/gpud.log")"
stop_all
all_slabs_free || fail "slabs not FREE: $(slab_line)"
log "PASS"
