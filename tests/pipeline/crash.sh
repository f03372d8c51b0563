#!/bin/bash
# Test 3 (single crashes, SIGKILL at chosen points; the daemons stop themselves there with SIGSTOP
# through ZKPIPE_TEST_PAUSE so the kill lands exactly there):
#  (a) gpud killed in the middle of a partition, restarted: the job completes and that partition's
#      a/b/c were not synthesized again (synth_count 1, prove_count 2);
#  (b) a synthd killed mid-fill: its slab is reclaimed and the partition synthesized again;
#  (c) finalizerd killed before and after the rename of proof-<k>.json: exactly one proof per
#      partition, and a proof committed before the kill is kept, not redone.
. "$(dirname "$0")/lib.sh"
M=$DATA/bn128/mulchain
W1=$M/witness-1.wtns
W2=$M/witness-2.wtns
write_config 4 0

log "(a) gpud"
start synthd1
start finalizerd
start gpud ZKPIPE_TEST_PAUSE=gpu.mid_prove:1
J=$(submit mulchain NORMAL $W1 $W2 $W1)
wait_for 60 "gpud to stop in partition 1" is_stopped gpud
slab_line | grep -q 'PROVING 1' || fail "no slab PROVING while gpud is stopped: $(slab_line)"
kill9 gpud
start gpud
wait_job "$J" 120 || fail "job failed: $(cat $T/wait-$J.err)"
verify_job "$J" mulchain 3
R=$(result_json "$J")
[ "$(json_get "$R" 'r["partitions"][1]["synth_count"]')" = 1 ] || fail "partition 1 was synthesized again"
[ "$(json_get "$R" 'r["partitions"][1]["prove_count"]')" = 2 ] || fail "partition 1 was not proved again"
grep -q "reclaimed [1-9]" <("$ZKPIPE" status --config "$CONF") || fail "no reclaim counted"
stop_all

log "(b) synthd"
start gpud
start finalizerd
start synthd1 ZKPIPE_TEST_PAUSE=synth.mid_fill:1
J=$(submit mulchain NORMAL $W1 $W2 $W1)
wait_for 60 "synthd1 to stop in partition 1" is_stopped synthd1
slab_line | grep -q 'FILLING 1' || fail "no slab FILLING while synthd1 is stopped: $(slab_line)"
kill9 synthd1
start synthd2
wait_job "$J" 120 || fail "job failed: $(cat $T/wait-$J.err)"
verify_job "$J" mulchain 3
R=$(result_json "$J")
[ "$(json_get "$R" 'r["partitions"][1]["synth_count"]')" = 2 ] || fail "partition 1 was not synthesized again"
stop_all
all_slabs_free || fail "slabs not FREE: $(slab_line)"

for point in before_rename after_rename; do
    log "(c) finalizerd, $point"
    start synthd1
    start gpud
    start finalizerd ZKPIPE_TEST_PAUSE=finalize.$point:0
    J=$(submit mulchain NORMAL $W1 $W2)
    wait_for 60 "finalizerd to stop $point" is_stopped finalizerd
    proof=$SPOOL/active/$J/proof-0.json
    if [ $point = after_rename ]; then
        [ -f "$proof" ] || fail "proof-0.json not there after the rename"
        sum=$(md5sum <"$proof")
    else
        [ ! -f "$proof" ] || fail "proof-0.json already there before the rename"
    fi
    kill9 finalizerd
    start finalizerd
    wait_job "$J" 120 || fail "job failed: $(cat $T/wait-$J.err)"
    verify_job "$J" mulchain 2
    if [ $point = after_rename ]; then
        [ "$(md5sum <"$SPOOL/done/$J/proof-0.json")" = "$sum" ] || fail "the committed proof-0.json was redone"
    fi
    stop_all
    all_slabs_free || fail "slabs not FREE: $(slab_line)"
done
[ -z "$(ls "$SPOOL/active")" ] || fail "spool/active not empty"
log "PASS"
