#!/bin/bash
# Test 2: (a) a CRITICAL job submitted while a long NORMAL batch runs finishes before the batch's
# remaining partitions; (b) partitions of one job reach the GPU in ascending order when they were
# synthesized out of order.
. "$(dirname "$0")/lib.sh"
M=$DATA/bn128/mulchain
W1=$M/witness-1.wtns
W2=$M/witness-2.wtns

# (a) gpud made slow (400 ms per partition) so the batch is long; one slab reserved for CRITICAL
write_config 4 1
start synthd1
start synthd2
start gpud ZKPIPE_TEST_DELAY=gpu.mid_prove:400
start finalizerd
N=$(submit mulchain NORMAL $W1 $W2 $W1 $W2 $W1 $W2 $W1 $W2 $W1 $W2)
done_ge() { [ "$(job_field "$N" done)" -ge "$1" ] 2>/dev/null; }
wait_for 60 "the first NORMAL partition" done_ge 1
C=$(submit mulchain CRITICAL $W1 $W2)
log "NORMAL $N (10 partitions) running; CRITICAL $C (2 partitions) submitted"
wait_job "$C" 120 || fail "critical job failed: $(cat $T/wait-$C.err)"
left=$((10 - $(job_field "$N" done)))
log "CRITICAL done while $left NORMAL partitions were not finished"
wait_job "$N" 180 || fail "normal job failed: $(cat $T/wait-$N.err)"
verify_job "$C" mulchain 2
verify_job "$N" mulchain 10
# From the result files: every CRITICAL partition was proved before at least 4 NORMAL ones started
crit_last=$(json_get "$(result_json "$C")" 'max(p["t_done_ns"] for p in r["partitions"])')
after=$(json_get "$(result_json "$N")" "sum(1 for p in r['partitions'] if p['t_prove_start_ns'] > $crit_last)")
log "NORMAL partitions started on the GPU after the CRITICAL job finished: $after"
[ "$after" -ge 4 ] || fail "the CRITICAL job did not overtake the NORMAL batch ($after NORMAL partitions after it)"
[ "$left" -ge 4 ] || fail "only $left NORMAL partitions were left when the CRITICAL job finished"
stop_all

# (b) partition 0 is held back in synthesis (600 ms) and gpud starts only once every slab is READY:
# the GPU must still take 0, 1, 2, 3 in that order.
rm -f "$SEGMENT"
write_config 4 0
start synthd1 ZKPIPE_TEST_DELAY=synth.before_publish:600:0
start synthd2 ZKPIPE_TEST_DELAY=synth.before_publish:600:0
start finalizerd
J=$(submit mulchain NORMAL $W1 $W2 $W1 $W2)
ready4() { slab_line | grep -q 'READY 4'; }
wait_for 30 "4 READY slabs" ready4
start gpud
wait_job "$J" 120 || fail "job failed: $(cat $T/wait-$J.err)"
verify_job "$J" mulchain 4
R=$(result_json "$J")
[ "$(json_get "$R" 'r["partitions"][0]["t_ready_ns"] > r["partitions"][1]["t_ready_ns"]')" = True ] ||
    fail "partition 0 was not synthesized after partition 1 (the test did not set up out-of-order synthesis)"
order=$(json_get "$R" '" ".join(str(p["index"]) for p in sorted(r["partitions"], key=lambda p: p["t_prove_start_ns"]))')
log "READY order: $(json_get "$R" '" ".join(str(p["index"]) for p in sorted(r["partitions"], key=lambda p: p["t_ready_ns"]))'), GPU order: $order"
[ "$order" = "0 1 2 3" ] || fail "GPU order was $order"
stop_all
log "PASS"
