#!/bin/bash
# zkpipe advise on two badly sized pipelines (CPU backend): synthesis-starved (one synthd, each fill
# slowed to 1.5 s, a fast GPU stage) names [synth] instances; slab-starved (one slab, fills and
# proofs slowed to 0.5 s) names [pipeline] slabs; following each advice on a fresh segment raises the
# GPU stage's busy fraction that advise reports; the exporter's /status carries the same numbers and
# advice.
. "$(dirname "$0")/lib.sh"
M=$DATA/bn128/mulchain
W=("$M/witness-1.wtns" "$M/witness-2.wtns")
wits() { local n=$1 k; for ((k = 0; k < n; k++)); do echo "${W[k % 2]}"; done; }
# run_batch SYNTHDS SYNTHD_ENV GPUD_ENV: 6 partitions on a fresh segment, then advise
run_batch() {
    local n=$1 senv=$2 genv=$3 i
    rm -f "$SEGMENT"
    for ((i = 1; i <= n; i++)); do start "synthd$i" $senv; done
    start finalizerd
    start gpud $genv
    local j
    j=$(submit mulchain NORMAL $(wits 6))
    wait_job "$j" 300 || fail "job $j failed: $(cat "$T/wait-$j.err")"
    # every stage counted each partition before it handed it on (the first batches hold synthd and
    # gpud right after their hand-on: a count made after it would be missing here)
    "$ZKPIPE" status --config "$CONF" | grep -q "^counters: synthesized 6 proved 6 finalized 6 " ||
        fail "the job is done and the counters lag: $("$ZKPIPE" status --config "$CONF" | grep '^counters')"
    "$ZKPIPE" advise --config "$CONF" >"$T/advise.out" 2>&1 || fail "advise failed: $(cat "$T/advise.out")"
    cat "$T/advise.out"
    # the metrics carry the numbers, zkpipe status the same advice line
    "$ZKPIPE" metrics --config "$CONF" >"$T/metrics.txt" || fail "zkpipe metrics failed"
    local w
    w=$(awk '/^zkpipe_balance_ratio\{stage="gpud",wait="synthesis"\}/ {printf "%.1f", 100 * $2}' "$T/metrics.txt")
    grep -q "waited for synthesis (no READY slab) $w%" "$T/advise.out" ||
        fail "the metrics' GPU wait ($w%) is not advise's: $(grep zkpipe_balance "$T/metrics.txt")"
    "$ZKPIPE" status --config "$CONF" | grep -qxF "$(grep '^advice: ' "$T/advise.out") (zkpipe advise)" ||
        fail "zkpipe status lacks the advice: $("$ZKPIPE" status --config "$CONF" | grep advice)"
    # and the exporter's /status JSON: the same advice, and the same GPU wait among its numbers
    if [ -x "$EXPORTER" ]; then
        "$EXPORTER" --config "$CONF" >>"$T/logs/exporter.log" 2>&1 &
        PIDS[exporter]=$!
        wait_for 20 "the exporter to listen" curl -sf -o "$T/status.json" "http://127.0.0.1:$EXP_PORT/status"
        python3 - "$T/status.json" "$T/advise.out" <<'PY' || fail "the exporter's /status does not carry advise's numbers and advice"
import json, sys
st = json.load(open(sys.argv[1]))
lines = open(sys.argv[2]).read().splitlines()
advice = [l[len("advice: "):] for l in lines if l.startswith("advice: ")][0]
wait = "%.1f%%" % (100 * st["balance"]["gpu_wait_synthesis_ratio"])
ok = st["advice"] == advice and ("waited for synthesis (no READY slab) " + wait) in lines[0] and st["balance"]["proved"] > 0
print("/status advice: %r, gpu wait %s; advise: %r" % (st["advice"], wait, advice))
sys.exit(0 if ok else 1)
PY
    fi
    stop_all
}
EXPORTER=$BUILD/exporter/zkpipe-exporter # optional: its /status is checked where it is built
EXP_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
busy() { awk '/^gpu: busy/ {sub("%,", "", $3); print $3}' "$T/advise.out"; }
more() { awk -v a="$1" -v b="$2" 'BEGIN {exit !(b > a)}'; }

log "synthesis-starved: one synthd, 1.5 s a fill"
write_config 4 0 "[synth]" "instances = 1" "[exporter]" "listen = 127.0.0.1:$EXP_PORT"
run_batch 1 ZKPIPE_TEST_DELAY=synth.mid_fill:1500,synth.handed_on:300 ZKPIPE_TEST_DELAY=gpu.handed_on:400
grep -q "^advice: the GPU waited for synthesis: raise \[synth\] instances from 1 to 2$" "$T/advise.out" ||
    fail "advise does not name [synth] instances"
b1=$(busy)
log "following it: two synthd"
write_config 4 0 "[synth]" "instances = 2" "[exporter]" "listen = 127.0.0.1:$EXP_PORT"
run_batch 2 ZKPIPE_TEST_DELAY=synth.mid_fill:1500 ""
b2=$(busy)
log "GPU busy $b1% -> $b2%"
more "$b1" "$b2" || fail "more synthd did not raise the GPU's busy fraction ($b1% -> $b2%)"

log "slab-starved: one slab, 0.5 s a fill, 0.5 s a proof"
write_config 1 0 "[synth]" "instances = 1" "[exporter]" "listen = 127.0.0.1:$EXP_PORT"
run_batch 1 ZKPIPE_TEST_DELAY=synth.mid_fill:500 ZKPIPE_TEST_DELAY=gpu.mid_prove:500
grep -q "^advice: synthesis waited for slabs: raise \[pipeline\] slabs from 1 to 3$" "$T/advise.out" ||
    fail "advise does not name slabs"
b1=$(busy)
log "following it: three slabs"
write_config 3 0 "[synth]" "instances = 1" "[exporter]" "listen = 127.0.0.1:$EXP_PORT"
run_batch 1 ZKPIPE_TEST_DELAY=synth.mid_fill:500 ZKPIPE_TEST_DELAY=gpu.mid_prove:500
b2=$(busy)
log "GPU busy $b1% -> $b2%"
more "$b1" "$b2" || fail "more slabs did not raise the GPU's busy fraction ($b1% -> $b2%)"
log "PASS"
