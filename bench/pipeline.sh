#!/bin/bash
# Pipeline benchmark: with more synthesis capacity than the GPU stage needs, measures the GPU
# stage's idle gap between partitions while a READY slab exists, the READY -> pickup handoff
# latency, the GPU stage's busy fraction, pipeline throughput against the GPU stage's solo
# throughput, gpud's, finalizerd's and synthd's RSS at partition 10 and at the last one, and the
# bytes of slab payload copied by gpud or finalizerd; then the same pipeline run again with
# zkpipe-exporter scraped every second and zkpipe top running (WATCH=0 skips it): the cost of watching.
#   bench/pipeline.sh [PARTITIONS=200] [CIRCUIT=mulchain|poseidon|mulchain381|sha256|pchain16|pchain18]
# Environment: BACKEND=cpu (default) or replay (gpud on the device model MODEL, default
# bench/models/h200.ini, its cache filled by zkpipe replay prepare first: docs/replay.md; the model's
# own rate is printed beside the solo one); SYNTHDS=3; FINALIZERS=1 (finalizerd instances); INPUTS=1:
# jobs of circuit inputs (input.json through the circuit's wasm in synthd; the bench/data circuits are
# always input jobs). Each stage's CPU time per partition (/proc, stable under load) is printed with
# the finalizer's steps, and from them the synthd and finalizerd a device of the measured (CPU
# backend) or modelled (replay) speed needs.
# Targets (issue 4): idle gap p99 < 1 ms, busy >= 97 %, throughput >= 0.95 x solo, RSS growth < 5 %.
TEST_NAME=bench-pipeline
. "$(dirname "$0")/../tests/pipeline/lib.sh"
N=${1:-200}
CIRCUIT=${2:-mulchain}
BACKEND=${BACKEND:-cpu}
MODEL=${MODEL:-$ROOT/bench/models/h200.ini}
SYNTHDS=${SYNTHDS:-3}
FINALIZERS=${FINALIZERS:-1}
INPUTS=${INPUTS:-0}
BENCH_DATA=$ROOT/bench/data
EXTRA=() # the [circuit] section of a bench/data circuit
case $CIRCUIT in
mulchain) W=("$DATA"/bn128/mulchain/witness-{1,2}.wtns); I=("$DATA"/bn128/mulchain/input-{1,2}.json) ;;
poseidon) W=("$DATA"/bn128/poseidon/witness-{1,2,3,4}.wtns); I=("$DATA"/bn128/poseidon/input-{1,2,3,4}.json) ;;
mulchain381) W=("$DATA"/bls12381/mulchain/witness-{1,2}.wtns); I=("$DATA"/bls12381/mulchain/input-{1,2}.json) ;;
sha256 | pchain16 | pchain18)
    INPUTS=1
    d=$BENCH_DATA/$CIRCUIT
    stem=$(basename "$(ls "$d"/*.circom)" .circom)
    for f in "$d/$stem.zkey" "$d/${stem}_js/$stem.wasm"; do
        [ -f "$f" ] || { echo "$f missing: make it with bench/make-circuits.sh (WASM_ONLY=1 for the wasm)"; exit 2; }
    done
    I=("$(ls "$d"/*input*.json | head -1)")
    EXTRA=("[circuit $CIRCUIT]" "zkey = $d/$stem.zkey" "wasm = $d/${stem}_js/$stem.wasm")
    ;;
*) echo "unknown circuit $CIRCUIT"; exit 2 ;;
esac
[ "$INPUTS" = 1 ] && W=("${I[@]}")
GPU_THREADS=0
SOLO=${SOLO:-16}
witnesses() { local n=$1 i; for ((i = 0; i < n; i++)); do echo "${W[$((i % ${#W[@]}))]}"; done; }
# configure SLABS [ini lines]: write_config, the bench circuit, the replay backend
configure() {
    local slabs=$1
    shift
    write_config "$slabs" 0 "${EXTRA[@]}" "$@"
    sed -i 's/^events = .*/events = 65536/' "$CONF"
    [ "$INPUTS" = 1 ] && [ ${#EXTRA[@]} = 0 ] && sed -i "s|^r1cs = \(.*\)/$CIRCUIT.r1cs$|&\nwasm = \1/$CIRCUIT.wasm|" "$CONF"
    if [ "$BACKEND" = replay ]; then
        use_replay "$MODEL"
        sed -i "s|^\[pipeline\]|&\ncache = $T/cache|" "$CONF"
    fi
}
jobsubmit() { # jobsubmit N: a job of N partitions, its id
    if [ "$INPUTS" = 1 ]; then submit_inputs "$CIRCUIT" $(witnesses "$1"); else submit "$CIRCUIT" NORMAL $(witnesses "$1"); fi
}

# With the CPU backend, synthesis and finalization run at nice 10 (NICE_STAGES; set it empty to turn
# that off): the "GPU" stage shares the cores with them, and a deployment lets the GPU feeder win.
# On the replay they run at the machine's nice 0 (at nice 10, beside other people's compilers at
# load 20, a finalizerd got 2.6 % of a core: 2.55 ms of CPU in 99.5 ms a partition), and
# gpud, which stands in for a device and shares no CPU, at nice GPUD_NICE (default -10), so that its
# wake-ups do not wait behind a loaded machine's other work.
if [ "$BACKEND" = replay ]; then NICE_STAGES=${NICE_STAGES-}; else NICE_STAGES=${NICE_STAGES-synthd finalizerd}; fi
GPUD_NICE=${GPUD_NICE--10}
start_gpud() {
    if [ "$BACKEND" = replay ] && [ -n "$GPUD_NICE" ]; then NICE_STAGES=gpud NICE_LEVEL=$GPUD_NICE start gpud; else start gpud; fi
}

# -- solo: a warmed-up gpud is stopped (SIGSTOP) until every input is READY, then proves them alone
configure $SOLO
if [ "$BACKEND" = replay ]; then # the results of every distinct witness or input, computed once
    "$ZKPIPE" replay prepare --config "$CONF" --circuit "$CIRCUIT" $([ "$INPUTS" = 1 ] && echo --input) "${W[@]}" \
        >"$T/prepare.log" 2>&1 || { cat "$T/prepare.log"; fail "replay prepare failed"; }
fi
start synthd1
start synthd2
start finalizerd
start_gpud
J=$(jobsubmit 4)
wait_job "$J" 600 || fail "warm-up job failed"
kill -STOP "${PIDS[gpud]}"
J=$(jobsubmit $SOLO)
readyall() { slab_line | grep -q "READY $SOLO "; }
wait_for 120 "$SOLO READY slabs" readyall
kill -CONT "${PIDS[gpud]}"
wait_job "$J" 600 || fail "solo job failed"
# the solo rate from the prove calls themselves (start of the first to the end of the last): with
# partitions in flight (inflight > 1, the replay) a call starts when the previous one ended, not
# when its slab was picked, so the pick times would overstate the rate
"$ZKPIPE" trace --config "$CONF" --out "$T/trace-solo.json" >/dev/null || fail "zkpipe trace failed"
read -r solo solo_ms < <(python3 - "$T/trace-solo.json" "$SOLO" <<'PY'
import json, sys
ev = sorted((e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("ph") == "X" and e["name"] == "gpu.prove"),
            key=lambda e: e["ts"])[-int(sys.argv[2]):]
span = (max(e["ts"] + e["dur"] for e in ev) - ev[0]["ts"]) / 1e6
print(len(ev) / span, sum(e["dur"] for e in ev) / len(ev) / 1e3)
PY
)
stop_all
rm -f "$SEGMENT"

# -- pipeline: 3 synthd feed one gpud. pipeline_run WATCH: with WATCH=1 zkpipe-exporter runs, a
# scraper GETs its /metrics every second and zkpipe top redraws every second (the cost of watching).
EXPORTER=$BUILD/exporter/zkpipe-exporter
pipeline_run() {
local watch=$1
configure 8 "[exporter]" "listen = 127.0.0.1:${EXPORTER_PORT:-19821}"
local i
for ((i = 1; i <= SYNTHDS; i++)); do start "synthd$i"; done
start_gpud
start finalizerd
for ((i = 1; i < FINALIZERS; i++)); do start "finalizerd$i"; done
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
# the jobs are submitted beside the watch below, so that its snapshot after the tenth finalized
# partition comes then, however long the submissions take
(
    left=$N
    while [ $left -gt 0 ]; do
        n=$((left > 50 ? 50 : left))
        jobsubmit $n
        left=$((left - n))
    done
) >"$T/jobs-$watch.txt" &
local submitter=$!
rss() { awk '/^(VmRSS|RssAnon):/{printf "%s %s ", $1, $2}' "/proc/${PIDS[$1]}/status"; }
# cpu_snap FILE: each stage process's CPU time (all its threads, user + system, in ms), then the
# partitions synthesized, proved and finalized so far
cpu_snap() {
    local st
    for st in "${!PIDS[@]}"; do
        echo "$st $(awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) * 1000 / hz}' "/proc/${PIDS[$st]}/stat")"
    done
    "$ZKPIPE" status --config "$CONF" | awk '/^counters/{for (i = 1; i < NF; i++) c[$i] = $(i + 1); print "counts", c["synthesized"], c["proved"], c["finalized"]}'
}
declare -gA RSS10=() RSSN=()
local early=$((N < 20 ? N / 2 : 10))
while :; do
    fin=$("$ZKPIPE" status --config "$CONF" | awk '/^counters/{for (i = 1; i < NF; i++) if ($i == "finalized") print $(i + 1)}')
    if [ -z "${RSS10[gpud]:-}" ] && [ "${fin:-0}" -ge "$early" ]; then
        for st in gpud finalizerd synthd1; do RSS10[$st]=$(rss $st); done
        cpu_snap >"$T/cpu-early-$watch.txt" # the CPU per partition is counted from here: start-up (keys, compiles) left out
    fi
    if [ "${fin:-0}" -ge "$N" ]; then for st in gpud finalizerd synthd1; do RSSN[$st]=$(rss $st); done; break; fi
    sleep 0.1
done
EARLY=$early
wait "$submitter" || fail "a submission failed"
mapfile -t JOBS <"$T/jobs-$watch.txt"
for j in "${JOBS[@]}"; do wait_job "$j" 600 || fail "job $j failed"; done
cpu_snap >"$T/cpu-$watch.txt"
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
rss0=("${RSS10[gpud]}" "${RSSN[gpud]}" "${RSS10[finalizerd]}" "${RSSN[finalizerd]}" "${RSS10[synthd1]}" "${RSSN[synthd1]}")
# the replay's model: its time for a partition of this circuit (gpud's key line)
MODEL_MS=$(grep "Loaded the key of circuit $CIRCUIT (" "$T/logs/gpud.log" | grep -o "replay on model .*: [0-9.]* ms a partition" |
    tail -1 | sed 's/.*: \([0-9.]*\) ms a partition/\1/')
[ "${WATCH:-1}" = 1 ] && pipeline_run 1
SOLO_MS=$solo_ms NICE_STAGES=$NICE_STAGES BACKEND=$BACKEND MODEL_MS=${MODEL_MS:-} SYNTHDS=$SYNTHDS FINALIZERS=$FINALIZERS \
    INPUTS=$INPUTS EARLY=$EARLY CPU=$T/cpu-0.txt CPU_EARLY=$T/cpu-early-0.txt python3 - "$T/trace-0.json" "$T/status-0.txt" "$solo" "$N" "$CIRCUIT" "${rss0[@]}" "${results[@]}" <<'PY'
import json, math, os, sys
trace, status, solo, n, circuit = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
rss = sys.argv[6:12]
parts = [p for f in sys.argv[12:] for p in json.load(open(f))["partitions"]]
backend, model_ms, synthds = os.environ["BACKEND"], os.environ.get("MODEL_MS"), int(os.environ["SYNTHDS"])
finalizers = int(os.environ["FINALIZERS"])
ev = [e for e in json.load(open(trace))["traceEvents"] if e.get("ph") == "X"]
def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")
gaps = [e["dur"] / 1e3 for e in ev if e["name"] == "gpu.idle_ready"]
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
idle_ns = sum(e["dur"] for e in ev if e["name"] in ("gpu.wait_ready", "gpu.idle_ready")) * 1e3
span = last_proved - first_ready
thr = n / ((last_done - first_ready) / 1e9)
def kb(s):
    w = s.split()
    return {w[i].rstrip(":"): int(w[i + 1]) for i in range(0, len(w) - 1, 2)}
kind = "input jobs" if os.environ["INPUTS"] == "1" else "witness jobs"
what = f"replay backend on the model ({model_ms} ms a partition)" if backend == "replay" else "CPU backend"
print(f"pipeline benchmark: {n} partitions of {circuit} ({kind}), {what}, {synthds} synthd, 1 gpud, {finalizers} finalizerd, 8 slabs, nice stages: {os.environ.get('NICE_STAGES') or 'none'}")
print(f"  GPU idle gap (end of one prove call to the start of the next) with a READY slab waiting: {len(gaps)} gaps, p50 {pct(gaps, .5):.3f} ms, p99 {pct(gaps, .99):.3f} ms, max {max(gaps or [0]):.3f} ms (target p99 < 1 ms)")
print(f"  handoff READY -> pickup (GPU idle at READY): {len(hand)} cases, p50 {pct(hand, .5):.3f} ms, p99 {pct(hand, .99):.3f} ms, max {max(hand or [0]):.3f} ms")
print(f"  GPU stage busy (prove calls) from first READY to last PROVED: {100 * busy_ns / span:.2f} % (all gaps together {idle_ns / 1e6:.1f} ms of {span / 1e6:.0f} ms; target >= 97 %)")
early = os.environ["EARLY"]
for name, a, b in (("gpud", rss[0], rss[1]), ("finalizerd", rss[2], rss[3]), ("synthd1", rss[4], rss[5])):
    a, b = kb(a), kb(b)
    print(f"  {name} RSS at partition {early}: {a['VmRSS']} kB (anon {a['RssAnon']} kB); at partition {n}: {b['VmRSS']} kB (anon {b['RssAnon']} kB); anon growth {100 * (b['RssAnon'] - a['RssAnon']) / a['RssAnon']:+.1f} % (target < 5 %)")
print(f"  slab payload bytes copied by gpud/finalizerd: {counters.get('bytes_copied', -1)} (target 0)")
print(f"  solo GPU stage: {solo * 60:.1f} proofs/min; pipeline: {thr * 60:.1f} proofs/min")
pipe_ms = sum(p["gpu_ms"] for p in parts) / len(parts)
if backend == "replay":
    print(f"  mean prove call: solo {float(os.environ['SOLO_MS']):.2f} ms, in the pipeline {pipe_ms:.2f} ms, the model {float(model_ms):.2f} ms")
else:
    print(f"  mean prove call: solo {float(os.environ['SOLO_MS']):.1f} ms, in the pipeline {pipe_ms:.1f} ms (CPU backend: the prove calls share the cores with synthesis and finalization)")
synth = sum(p["synth_ms"] for p in parts) / len(parts)
fin = sum(p["finalize_ms"] for p in parts) / len(parts)
gpu = float(model_ms) if backend == "replay" else pipe_ms
# CPU time per partition of each stage (all its processes and threads; the same on a loaded machine
# as on an idle one), from the early snapshot to the end: the stage's CPU over the partitions it
# did meanwhile (start-up, key loads and compiles left out)
def snap(path):
    cpu, counts = {}, None
    for line in open(path):
        w = line.split()
        if w[0] == "counts":
            counts = dict(zip(("synthd", "gpud", "finalizerd"), map(int, w[1:])))
        else:
            cpu[w[0].rstrip("0123456789")] = cpu.get(w[0].rstrip("0123456789"), 0.0) + float(w[1])
    return cpu, counts
(c0, k0), (c1, k1) = snap(os.environ["CPU_EARLY"]), snap(os.environ["CPU"])
cpu = {r: (c1[r] - c0.get(r, 0.0)) / max(1, k1[r] - k0[r]) for r in ("synthd", "gpud", "finalizerd")}
steps = {k: sum(e["dur"] / 1e3 for e in ev if e["name"] == "finalize." + k) / n for k in ("randomize", "verify", "write")}
print(f"  per partition, wall: synthesis {synth:.1f} ms{' (witness generation included)' if os.environ['INPUTS'] == '1' else ''}, finalization {fin:.1f} ms"
      f" (randomize {steps['randomize']:.2f}, verify {steps['verify']:.2f}, write {steps['write']:.2f}), GPU {gpu:.2f} ms")
print(f"  per partition, CPU: " + ", ".join(f"{r} {cpu[r]:.2f} ms (the last {k1[r] - k0[r]})" for r in ("synthd", "gpud", "finalizerd")))
# k processes that each take t per partition keep a device of g per partition busy while k / t >= 1 / g:
# >= 97 % busy needs k >= 0.97 t / g. On a box with a core per process, t is a synthd's CPU time; a
# finalizerd's is its CPU time plus its write step's wall time (at most the disk's waits, which need
# no core). The wall times above are a loaded machine's and overstate both.
need_s = math.ceil(0.97 * cpu["synthd"] / gpu)
need_fc = math.ceil(0.97 * cpu["finalizerd"] / gpu)
need_f = math.ceil(0.97 * (cpu["finalizerd"] + steps["write"]) / gpu)
print(f"  >= 97 % busy at {gpu:.2f} ms a partition needs {need_s} synthd (cores) and {need_fc} finalizerd cores"
      f" ({need_f} finalizerd with this disk's writes): {need_s + need_fc} cores besides gpud's (ran {synthds} synthd, {finalizers} finalizerd on {os.cpu_count()} CPUs)")
print(f"  ratio pipeline / solo = {thr / solo:.3f} (target >= 0.95)")
if backend == "replay":
    print(f"  ratio pipeline / model = {thr * float(model_ms) / 1e3:.3f} (the model's solo rate {1e3 / float(model_ms) * 60:.0f} proofs/min)")
PY
[ "${WATCH:-1}" = 1 ] || exit 0
# the cost of watching: the same run with the exporter scraped every second and top running
SCRAPES=$SCRAPES python3 - "$T/trace-0.json" "$T/trace-1.json" <<'PY'
import json, os, sys
def summary(path):
    ev = [e for e in json.load(open(path))["traceEvents"] if e.get("ph") == "X"]
    prove = [e for e in ev if e["name"] == "gpu.prove"]
    gaps = sorted(e["dur"] / 1e3 for e in ev if e["name"] in ("gpu.wait_ready", "gpu.idle_ready"))
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
