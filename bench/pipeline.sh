#!/bin/bash
# Pipeline benchmark (CPU backend): with more synthesis capacity than the GPU stage needs, measures
# the GPU stage's idle gap between partitions while a READY slab exists, the READY -> pickup handoff
# latency, the GPU stage's busy fraction, pipeline throughput against the GPU stage's solo
# throughput, gpud's and finalizerd's RSS at partition 10 and at the last one, and the bytes of slab
# payload copied by gpud or finalizerd; then the same pipeline run again with zkpipe-exporter scraped
# every second and zkpipe top running (WATCH=0 skips it): the cost of watching.
#   bench/pipeline.sh [PARTITIONS=200] [CIRCUIT=mulchain|poseidon|mulchain381]
# Targets (issue 4): idle gap p99 < 1 ms, busy >= 97 %, throughput >= 0.95 x solo, RSS growth < 5 %.
TEST_NAME=bench-pipeline
. "$(dirname "$0")/../tests/pipeline/lib.sh"
N=${1:-200}
CIRCUIT=${2:-mulchain}
case $CIRCUIT in
mulchain) W=("$DATA"/bn128/mulchain/witness-{1,2}.wtns) ;;
poseidon) W=("$DATA"/bn128/poseidon/witness-{1,2,3,4}.wtns) ;;
mulchain381) W=("$DATA"/bls12381/mulchain/witness-{1,2}.wtns) ;;
*) echo "unknown circuit $CIRCUIT"; exit 2 ;;
esac
GPU_THREADS=0
SOLO=16
witnesses() { local n=$1 i; for ((i = 0; i < n; i++)); do echo "${W[$((i % ${#W[@]}))]}"; done; }

# Synthesis and finalization run at nice 10 (NICE_STAGES; set it empty to turn that off): with the
# CPU backend the "GPU" stage shares the cores with them, and a deployment lets the GPU feeder win.
NICE_STAGES=${NICE_STAGES-synthd finalizerd}

# -- solo: a warmed-up gpud is stopped (SIGSTOP) until every input is READY, then proves them alone
write_config $SOLO 0
sed -i 's/^events = .*/events = 65536/' "$CONF"
start synthd1
start synthd2
start finalizerd
start gpud
J=$(submit "$CIRCUIT" NORMAL $(witnesses 4))
wait_job "$J" 600 || fail "warm-up job failed"
kill -STOP "${PIDS[gpud]}"
J=$(submit "$CIRCUIT" NORMAL $(witnesses $SOLO))
readyall() { slab_line | grep -q "READY $SOLO "; }
wait_for 120 "$SOLO READY slabs" readyall
kill -CONT "${PIDS[gpud]}"
wait_job "$J" 600 || fail "solo job failed"
solo=$(json_get "$(result_json "$J")" "len(r['partitions']) / ((max(p['t_prove_start_ns'] + p['gpu_ms'] * 1e6 for p in r['partitions']) - min(p['t_prove_start_ns'] for p in r['partitions'])) / 1e9)")
solo_ms=$(json_get "$(result_json "$J")" "sum(p['gpu_ms'] for p in r['partitions']) / len(r['partitions'])")
stop_all
rm -f "$SEGMENT"

# -- pipeline: 3 synthd feed one gpud. pipeline_run WATCH: with WATCH=1 zkpipe-exporter runs, a
# scraper GETs its /metrics every second and zkpipe top redraws every second (the cost of watching).
EXPORTER=$BUILD/exporter/zkpipe-exporter
pipeline_run() {
local watch=$1
write_config 8 0 "[exporter]" "listen = 127.0.0.1:${EXPORTER_PORT:-19821}"
sed -i 's/^events = .*/events = 65536/' "$CONF"
start synthd1
start synthd2
start synthd3
start gpud
start finalizerd
local watchers=()
if [ "$watch" = 1 ]; then
    "$EXPORTER" --config "$CONF" >>"$T/logs/exporter.log" 2>&1 &
    watchers+=($!)
    (while sleep 1; do curl -sf -o /dev/null "http://127.0.0.1:${EXPORTER_PORT:-19821}/metrics" && echo ok; done >"$T/scrapes.log") &
    watchers+=($!)
    # top's input: a FIFO held open by this shell (no keys, never end of input)
    rm -f "$T/top-in"; mkfifo "$T/top-in"
    "$ZKPIPE" top --config "$CONF" --interval 1 <"$T/top-in" >/dev/null &
    watchers+=($!)
    exec 9>"$T/top-in"
fi
JOBS=()
left=$N
while [ $left -gt 0 ]; do
    n=$((left > 50 ? 50 : left))
    JOBS+=("$(submit "$CIRCUIT" NORMAL $(witnesses $n))")
    left=$((left - n))
done
rss() { awk '/^(VmRSS|RssAnon):/{printf "%s %s ", $1, $2}' "/proc/${PIDS[$1]}/status"; }
declare -gA RSS10=() RSSN=()
while :; do
    fin=$("$ZKPIPE" status --config "$CONF" | awk '/^counters/{for (i = 1; i < NF; i++) if ($i == "finalized") print $(i + 1)}')
    if [ -z "${RSS10[gpud]:-}" ] && [ "${fin:-0}" -ge 10 ]; then RSS10[gpud]=$(rss gpud); RSS10[finalizerd]=$(rss finalizerd); fi
    if [ "${fin:-0}" -ge "$N" ]; then RSSN[gpud]=$(rss gpud); RSSN[finalizerd]=$(rss finalizerd); break; fi
    sleep 0.1
done
for j in "${JOBS[@]}"; do wait_job "$j" 600 || fail "job $j failed"; done
"$ZKPIPE" trace --config "$CONF" --out "$T/trace-$watch.json" >/dev/null
"$ZKPIPE" status --config "$CONF" >"$T/status-$watch.txt"
if [ "$watch" = 1 ]; then
    SCRAPES=$(grep -c ok "$T/scrapes.log" || true)
    for w in "${watchers[@]}"; do kill "$w" 2>/dev/null || true; wait "$w" 2>/dev/null || true; done
    exec 9>&-
fi
stop_all
rm -f "$SEGMENT"
}
if [ "${WATCH:-1}" = 1 ] && [ ! -x "$EXPORTER" ]; then echo "zkpipe-exporter not built: no watched run"; WATCH=0; fi
pipeline_run 0
results=()
for j in "${JOBS[@]}"; do results+=("$(result_json "$j")"); done
rss0=("${RSS10[gpud]}" "${RSSN[gpud]}" "${RSS10[finalizerd]}" "${RSSN[finalizerd]}")
[ "${WATCH:-1}" = 1 ] && pipeline_run 1
SOLO_MS=$solo_ms NICE_STAGES=$NICE_STAGES python3 - "$T/trace-0.json" "$T/status-0.txt" "$solo" "$N" "$CIRCUIT" "${rss0[@]}" \
    "${results[@]}" <<'PY'
import json, os, sys
trace, status, solo, n, circuit = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
rss = sys.argv[6:10]
parts = [p for f in sys.argv[10:] for p in json.load(open(f))["partitions"]]
ev = [e for e in json.load(open(trace))["traceEvents"] if e.get("ph") == "X"]
def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")
gaps = [e["dur"] / 1e3 for e in ev if e["name"] == "gpu.idle" and e["args"]["value"] == 1]
hand = [e["dur"] / 1e3 for e in ev if e["name"] == "gpu.handoff" and e["args"]["value"] == 1]
counters = {}
for line in open(status):
    if line.startswith("counters:"):
        w = line.split()[1:]
        counters = {w[i]: int(w[i + 1]) for i in range(0, len(w) - 1, 2)}
first_ready = min(p["t_ready_ns"] for p in parts)
last_proved = max(p["t_prove_start_ns"] + p["gpu_ms"] * 1e6 for p in parts)
last_done = max(p["t_done_ns"] for p in parts)
prove = [e for e in ev if e["name"] == "gpu.prove"]
busy_ns = sum(e["dur"] for e in prove) * 1e3
idle_ns = sum(e["dur"] for e in ev if e["name"] == "gpu.idle") * 1e3
span = last_proved - first_ready
thr = n / ((last_done - first_ready) / 1e9)
def kb(s):
    w = s.split()
    return {w[i].rstrip(":"): int(w[i + 1]) for i in range(0, len(w) - 1, 2)}
print(f"pipeline benchmark: {n} partitions of {circuit}, CPU backend, 3 synthd, 1 gpud, 1 finalizerd, 8 slabs, nice stages: {os.environ.get('NICE_STAGES') or 'none'}")
print(f"  GPU idle gap (end of one prove call to the start of the next) with a READY slab waiting: {len(gaps)} gaps, p50 {pct(gaps, .5):.3f} ms, p99 {pct(gaps, .99):.3f} ms, max {max(gaps or [0]):.3f} ms (target p99 < 1 ms)")
print(f"  handoff READY -> pickup (GPU idle at READY): {len(hand)} cases, p50 {pct(hand, .5):.3f} ms, p99 {pct(hand, .99):.3f} ms, max {max(hand or [0]):.3f} ms")
print(f"  GPU stage busy (prove calls) from first READY to last PROVED: {100 * busy_ns / span:.2f} % (all gaps together {idle_ns / 1e6:.1f} ms of {span / 1e6:.0f} ms; target >= 97 %)")
for name, a, b in (("gpud", rss[0], rss[1]), ("finalizerd", rss[2], rss[3])):
    a, b = kb(a), kb(b)
    print(f"  {name} RSS at partition 10: {a['VmRSS']} kB (anon {a['RssAnon']} kB); at partition {n}: {b['VmRSS']} kB (anon {b['RssAnon']} kB); anon growth {100 * (b['RssAnon'] - a['RssAnon']) / a['RssAnon']:+.1f} % (target < 5 %)")
print(f"  slab payload bytes copied by gpud/finalizerd: {counters.get('bytes_copied', -1)} (target 0)")
print(f"  solo GPU stage: {solo * 60:.1f} proofs/min; pipeline: {thr * 60:.1f} proofs/min")
pipe_ms = sum(p["gpu_ms"] for p in parts) / len(parts)
print(f"  mean prove call: solo {float(os.environ['SOLO_MS']):.1f} ms, in the pipeline {pipe_ms:.1f} ms (CPU backend: the prove calls share the cores with synthesis and finalization)")
print(f"  ratio pipeline / solo = {thr / solo:.3f} (target >= 0.95)")
PY
[ "${WATCH:-1}" = 1 ] || exit 0
# the cost of watching: the same run with the exporter scraped every second and top running
SCRAPES=$SCRAPES python3 - "$T/trace-0.json" "$T/trace-1.json" <<'PY'
import json, os, sys
def summary(path):
    ev = [e for e in json.load(open(path))["traceEvents"] if e.get("ph") == "X"]
    prove = [e for e in ev if e["name"] == "gpu.prove"]
    gaps = sorted(e["dur"] / 1e3 for e in ev if e["name"] == "gpu.idle")
    start = min(e["ts"] for e in prove)
    end = max(e["ts"] + e["dur"] for e in prove)
    busy = sum(e["dur"] for e in prove) / (end - start)
    p99 = gaps[min(len(gaps) - 1, int(0.99 * len(gaps)))] if gaps else float("nan")
    return busy, p99, len(prove)
b0, g0, n0 = summary(sys.argv[1])
b1, g1, n1 = summary(sys.argv[2])
print(f"watching: exporter scraped every second ({os.environ['SCRAPES']} scrapes) and zkpipe top at 1 s, side by side with the run above")
print(f"  GPU stage busy (first to last prove call): unwatched {100 * b0:.2f} %, watched {100 * b1:.2f} %; cost {100 * (b0 - b1):+.2f} points of GPU-stage time (target < 0.5)")
print(f"  GPU idle gap p99 (all gaps): unwatched {g0:.3f} ms, watched {g1:.3f} ms ({n0} and {n1} prove calls)")
PY
