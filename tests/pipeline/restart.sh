#!/bin/bash
# Test 6: stop everything mid-batch (SIGKILL, no drain), remove the segment, start again: the batch
# completes from spool/active without proving the finished partitions again (their proof files are
# kept byte for byte, result.json marks them reused).
. "$(dirname "$0")/lib.sh"
M=$DATA/bn128/mulchain
write_config 3 0
start synthd1
start synthd2
start gpud ZKPIPE_TEST_DELAY=gpu.mid_prove:300
start finalizerd
J=$(submit mulchain NORMAL $M/witness-1.wtns $M/witness-2.wtns $M/witness-1.wtns $M/witness-2.wtns \
    $M/witness-1.wtns $M/witness-2.wtns $M/witness-1.wtns $M/witness-2.wtns)
three_done() { [ "$(ls "$SPOOL/active/$J" 2>/dev/null | grep -c '^proof-')" -ge 3 ]; }
wait_for 60 "3 proofs" three_done
for n in synthd1 synthd2 gpud finalizerd; do kill9 $n; done
before=$(cd "$SPOOL/active/$J" && ls proof-*.json)
sums=$(cd "$SPOOL/active/$J" && md5sum proof-*.json)
n_before=$(echo "$before" | wc -l)
log "killed everything with $n_before proofs done; removing the segment"
rm -f "$SEGMENT"
start synthd1
start gpud
start finalizerd
wait_job "$J" 120 || fail "job failed after the restart: $(cat $T/wait-$J.err)"
verify_job "$J" mulchain 8
(cd "$SPOOL/done/$J" && echo "$sums" | md5sum -c --quiet) || fail "a finished proof was redone"
reused=$(json_get "$(result_json "$J")" 'sum(1 for p in r["partitions"] if p["reused"])')
[ "$reused" = "$n_before" ] || fail "result.json: $reused partitions reused, $n_before proofs existed"
proved=$("$ZKPIPE" status --config "$CONF" | awk '/^counters/{for (i = 1; i < NF; i++) if ($i == "proved") print $(i + 1)}')
[ "$proved" = $((8 - n_before)) ] || fail "the new segment proved $proved partitions, expected $((8 - n_before))"
stop_all
log "PASS: $n_before partitions kept, $proved proved after the restart"
