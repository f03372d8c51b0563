#!/bin/bash
# Test 4: slabs = 2 with 3 synthd and a 10-partition job: never more than 2 partitions in slabs at
# once (the synthds block on the futex instead of growing memory), and the job completes.
. "$(dirname "$0")/lib.sh"
M=$DATA/bn128/mulchain
write_config 2 0
start synthd1
start synthd2
start synthd3
start gpud ZKPIPE_TEST_DELAY=gpu.mid_prove:100
start finalizerd
J=$(submit mulchain NORMAL $M/witness-1.wtns $M/witness-2.wtns $M/witness-1.wtns $M/witness-2.wtns $M/witness-1.wtns \
    $M/witness-2.wtns $M/witness-1.wtns $M/witness-2.wtns $M/witness-1.wtns $M/witness-2.wtns)
max=0
samples=0
while :; do
    st=$("$ZKPIPE" status --config "$CONF" "$J" 2>/dev/null | awk '/^job /{for (i = 1; i < NF; i++) if ($i == "inflight" || $i == "state") printf "%s ", $(i + 1)}')
    set -- $st
    [ $# = 2 ] || break
    [ "$2" -gt "$max" ] && max=$2
    samples=$((samples + 1))
    [ "$1" = active ] || break
    sleep 0.02
done
wait_job "$J" 120 || fail "job failed: $(cat $T/wait-$J.err)"
verify_job "$J" mulchain 10
log "sampled $samples times: at most $max partitions in slabs"
[ "$max" -le 2 ] || fail "$max partitions in flight with 2 slabs"
[ "$max" -ge 1 ] && [ "$samples" -ge 5 ] || fail "the sampling saw nothing ($samples samples)"
# the synthds did wait for slabs (and did not fail or exit)
"$ZKPIPE" trace --config "$CONF" --out "$T/trace.json" >/dev/null || fail "trace failed"
grep -q '"synth.wait_slab"' "$T/trace.json" || fail "no synthd waited for a slab"
for n in synthd1 synthd2 synthd3; do alive $n || fail "$n died"; done
stop_all
all_slabs_free || fail "slabs not FREE: $(slab_line)"
log "PASS"
