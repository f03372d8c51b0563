#!/bin/bash
# Observing a running pipeline (docs/observe.md): promtool accepts `zkpipe metrics` and the
# exporter's /metrics during a run; a real Prometheus (loopback port, temporary config and data dir)
# scrapes the exporter while a batch proves, and PromQL through its HTTP API gives the finalized
# partitions and the GPU stage's busy time that `zkpipe status` prints; the exporter maps the segment
# read-only, and a kill -9 of it changes nothing for the pipeline; after a kill -9 of every stage
# mid-batch the histograms still agree with the counters; the live page in headless
# Chromium draws a lane per process and a GPU slice for every partition proven (screenshot kept as
# $ARTEFACTS/observe-page.png); without NVML no GPU metric is exported.
. "$(dirname "$0")/lib.sh"
EXPORTER=$BUILD/exporter/zkpipe-exporter
[ -x "$EXPORTER" ] || { echo "SKIP: zkpipe-exporter not built (libmicrohttpd-dev missing)"; exit 77; }
for p in promtool prometheus chromium curl; do
    command -v $p >/dev/null || { echo "SKIP: $p not installed (scripts/install-deps.sh)"; exit 77; }
done
ARTEFACTS=${ZKPIPE_ARTEFACTS:-$BUILD/meson-logs}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
EXP_PORT=$(free_port)
PROM_PORT=$(free_port)
write_config 4 0 "[exporter]" "listen = 127.0.0.1:$EXP_PORT"
URL=http://127.0.0.1:$EXP_PORT

start_exporter() {
    ZKPIPE_NVML_LIBRARY=${NVML_LIB:-} "$EXPORTER" --config "$CONF" >>"$T/logs/exporter.log" 2>&1 &
    PIDS[exporter]=$!
    wait_for 20 "the exporter to listen" curl -sf -o /dev/null "$URL/metrics"
}
# the exporter comes up before the segment exists: it serves zkpipe_segment_up 0
start_exporter
curl -sf "$URL/metrics" | grep -qx 'zkpipe_segment_up 0' || fail "without a segment /metrics lacks zkpipe_segment_up 0"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/status")" = 503 ] || fail "/status without a segment is not 503"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/nope")" = 404 ] || fail "an unknown path is not 404"
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL/metrics")" = 405 ] || fail "POST is not 405"
# a second exporter on the same port: one line naming the ini and the address, exit 1
if "$EXPORTER" --config "$CONF" >"$T/second.log" 2>&1; then fail "a second exporter on a busy port started"; fi
grep -q "zkpipe.ini: cannot listen on 127.0.0.1:$EXP_PORT" "$T/second.log" || fail "busy port: $(cat "$T/second.log")"

mkdir -p "$T/prom"
cat >"$T/prom/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: zkpipe
    static_configs:
      - targets: ['127.0.0.1:$EXP_PORT']
YML
prometheus --config.file="$T/prom/prometheus.yml" --storage.tsdb.path="$T/prom/data" \
    --web.listen-address="127.0.0.1:$PROM_PORT" >"$T/logs/prometheus.log" 2>&1 &
PIDS[prometheus]=$!
PROM=http://127.0.0.1:$PROM_PORT
wait_for 60 "Prometheus to be ready" curl -sf -o /dev/null "$PROM/-/ready"
# promql EXPR: the first sample's value ("" when none)
promql() {
    curl -sf "$PROM/api/v1/query" --data-urlencode "query=$1" |
        python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}

# gpud stops itself (SIGSTOP) once it has handed on its first partition: the job stays live, with
# one partition proved, for as long as we look at it, however slow this machine (a delay alone let
# a loaded machine finish the job before the checks below ran); the kill -9 below ends that gpud,
# and its successor, with a slow GPU step, proves the other partitions while Prometheus scrapes
start synthd1
start gpud ZKPIPE_TEST_PAUSE=gpu.handed_on
start finalizerd
P=$DATA/bn128/poseidon
J=$(submit poseidon NORMAL $P/witness-1.wtns $P/witness-2.wtns $P/witness-3.wtns $P/witness-4.wtns)
log "submitted $J"
wait_for 60 "gpud to stop after its first partition" sh -c "grep -q '^State:.*stopped' /proc/${PIDS[gpud]}/status"
"$ZKPIPE" metrics --config "$CONF" | grep -qx 'zkpipe_partitions_proved_total 1' || fail "gpud stopped, but not with one partition proved"
# during the run: both texts pass promtool's checks
"$ZKPIPE" metrics --config "$CONF" >"$T/metrics.txt" || fail "zkpipe metrics failed"
promtool check metrics <"$T/metrics.txt" >"$T/promtool.out" 2>&1 || fail "promtool rejects zkpipe metrics: $(head -5 "$T/promtool.out")"
curl -sf "$URL/metrics" >"$T/exporter.txt" || fail "GET /metrics failed"
promtool check metrics <"$T/exporter.txt" >"$T/promtool2.out" 2>&1 || fail "promtool rejects /metrics: $(head -5 "$T/promtool2.out")"
grep -q '^zkpipe_jobs_active{circuit="poseidon",priority="normal"} 1$' "$T/exporter.txt" || fail "no active poseidon job in /metrics"
grep -q '^zkpipe_stage_up{stage="gpud",instance="0"} 1$' "$T/exporter.txt" || fail "gpud not up in /metrics"
# same generator: the families of both texts are the same
diff <(grep '^# TYPE' "$T/metrics.txt") <(grep '^# TYPE' "$T/exporter.txt") >/dev/null || fail "zkpipe metrics and /metrics differ in their families"
# no NVML on this machine (or hidden): no GPU metric at all
if [ -n "${NVML_LIB:-}" ] || ! ldconfig -p | grep -q libnvidia-ml.so.1; then
    ! grep -q '^zkpipe_gpu_' "$T/exporter.txt" || fail "GPU metrics exported without NVML"
fi
# the exporter maps the segment read-only and is not registered in it
grep -q " r--s .*$SEGMENT\$" "/proc/${PIDS[exporter]}/maps" || fail "the exporter's mapping of the segment is not read-only"
# kill -9 the exporter in the middle of the run; the pipeline goes on, a new one serves the same counts
kill9 exporter
start_exporter
# and each stage: the segment's counts stay consistent through restarts (checked below)
kill9 gpud
start gpud ZKPIPE_TEST_DELAY=gpu.after_prove:700
kill9 finalizerd
start finalizerd
kill9 synthd1
start synthd1

wait_job "$J" 180 || fail "job $J: wait exit $?: $(cat "$T/wait-$J.err")"
ST=$("$ZKPIPE" status --config "$CONF")
FIN=$(echo "$ST" | sed -n 's/^counters:.* finalized \([0-9]*\) .*/\1/p')
GPU_MS=$(echo "$ST" | sed -n 's/^stage times:.* gpu \([0-9.]*\) ms\/partition.*/\1/p')
[ "$FIN" -ge 4 ] || fail "zkpipe status says $FIN partitions finalized"
wait_for 30 "Prometheus to scrape the end of the batch" sh -c "[ \"\$(curl -sf '$PROM/api/v1/query' --data-urlencode 'query=zkpipe_jobs_ended_total{outcome=\"done\"}' | python3 -c 'import json,sys; r=json.load(sys.stdin)[\"data\"][\"result\"]; print(r[0][\"value\"][1] if r else \"\")')\" = 1 ]"
P_FIN=$(promql 'zkpipe_partitions_finalized_total')
P_GPU_MS=$(promql '1000 * sum(zkpipe_stage_busy_seconds_total{stage="gpud"}) / sum(zkpipe_partitions_proved_total)')
P_BUSY=$(promql 'max_over_time(zkpipe_stage_busy_ratio{stage="gpud"}[5m])')
P_HIST=$(promql 'zkpipe_step_duration_seconds_count{stage="gpud",step="prove"}')
log "status: finalized $FIN, gpu $GPU_MS ms/partition; Prometheus: finalized $P_FIN, gpu $P_GPU_MS ms/partition, busy ratio $P_BUSY, prove histogram count $P_HIST"
[ "$P_FIN" = "$FIN" ] || fail "Prometheus says $P_FIN partitions finalized, zkpipe status $FIN"
[ "$(printf %.1f "$P_GPU_MS")" = "$GPU_MS" ] || fail "Prometheus says $P_GPU_MS GPU ms/partition, zkpipe status $GPU_MS"
python3 -c "import sys; sys.exit(0 if float('$P_BUSY') > 0 else 1)" || fail "GPU busy ratio $P_BUSY is not > 0"
P_PROVED=$(promql 'zkpipe_partitions_proved_total')
[ "$P_HIST" = "$P_PROVED" ] && [ "$P_PROVED" -ge 4 ] || fail "the prove histogram counts $P_HIST, $P_PROVED partitions were proved"
[ "$(promql 'zkpipe_step_duration_seconds_count{stage="finalizerd",step="write"}')" -ge "$FIN" ] ||
    fail "fewer finalizer writes than partitions finalized"
# the job's end-to-end latency went into the NORMAL histogram
[ "$(promql 'zkpipe_job_duration_seconds_count{priority="normal"}')" = 1 ] || fail "job latency not in the normal histogram"

# the page: one lane per process, a gpu.prove slice for every partition proven
cd "$T"
timeout 60 chromium --headless=new --no-sandbox --disable-gpu --user-data-dir="$T/chrome" --virtual-time-budget=4000 \
    --dump-dom "$URL/" >"$T/page.html" 2>"$T/logs/chromium.log" || fail "chromium --dump-dom failed: $(tail -3 "$T/logs/chromium.log")"
for st in synthd gpud finalizerd; do
    grep -q "class=\"lane\" data-stage=\"$st\"" "$T/page.html" || fail "the page draws no $st lane"
done
for k in 0 1 2 3; do
    grep -q "data-type=\"gpu.prove\" data-job=\"$J\" data-part=\"$k\"" "$T/page.html" ||
        fail "the page has no gpu.prove slice for partition $k"
    grep -q "data-type=\"finalize.write\" data-job=\"$J\" data-part=\"$k\"" "$T/page.html" ||
        fail "the page has no finalize slice for partition $k"
done
timeout 60 chromium --headless=new --no-sandbox --disable-gpu --user-data-dir="$T/chrome" --virtual-time-budget=4000 \
    --window-size=1280,1000 --screenshot="$T/page.png" "$URL/" >>"$T/logs/chromium.log" 2>&1 || fail "screenshot failed"
[ -s "$T/page.png" ] || fail "no screenshot"
mkdir -p "$ARTEFACTS" && cp "$T/page.png" "$ARTEFACTS/observe-page.png"
for n in synthd1 gpud finalizerd; do stop "$n" || fail "$n did not exit cleanly"; done
all_slabs_free || fail "slabs not all FREE at the end: $(slab_line)"
log "PASS: promtool, Prometheus ($P_FIN partitions, $P_GPU_MS GPU ms each), page with 4 slices ($ARTEFACTS/observe-page.png)"
