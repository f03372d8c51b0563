#!/bin/bash
# The isolation the synthesis stage exists for, measured with witness generation as the heavy stage
# (issue 12): N partitions of circomlib's Sha256(960) (bench/witness makes the circuit, its wasm and
# key) through the pipeline from input.json files, once with [synth] trim = always and once with
# trim = never. Prints per run: synthd's peak and final RSS, gpud's and finalizerd's RSS at
# partition 10 and at the last one (target: growth < 5 %), malloc_trim's time per partition (the
# ZKPIPE_TRIM_NS log field), the witness generation time per partition (ZKPIPE_WITNESS_NS), and the
# GPU stage's busy fraction (zkpipe status).
#   bench/witness-pipeline.sh [PARTITIONS=200]
TEST_NAME=bench-witness-pipeline
. "$(dirname "$0")/../tests/pipeline/lib.sh"
N=${1:-200}
S=$ROOT/bench/data/witness/sha256
[ -s "$S/sha256.zkey" ] && [ -s "$S/sha256_js/sha256.wasm" ] || { echo "run bench/witness first (it makes $S)"; exit 1; }
inputs() { local i; for ((i = 0; i < N; i++)); do echo "$S/input.json"; done; }
rss() { awk '/^VmRSS/{print $2}' "/proc/${PIDS[$1]}/status"; }
hwm() { awk '/^VmHWM/{print $2}' "/proc/${PIDS[$1]}/status"; }
finalized() { "$ZKPIPE" status --config "$CONF" | awk '/^counters/{for (i = 1; i < NF; i++) if ($i == "finalized") print $(i + 1)}'; }
run() { # TRIM
    local trim=$1
    cat >"$CONF" <<INI
[pipeline]
name = $PIPE_NAME-$trim
spool = $SPOOL-$trim
cache = $ROOT/bench/data/witness/cache
slabs = 6
jobs = 32
events = 65536
[synth]
threads = 1
trim = $trim
[gpu]
backend = cpu
threads = 0
[finalizer]
verify = yes
[circuit sha256]
zkey = $S/sha256.zkey
wasm = $S/sha256_js/sha256.wasm
INI
    SEGMENT=/dev/shm/zkpipe-$PIPE_NAME-$trim
    rm -f "$T"/logs/*.log
    start synthd1
    start synthd2
    start gpud
    start finalizerd
    local J g10 f10 t0 t1
    J=$("$ZKPIPE" submit --config "$CONF" --circuit sha256 --input $(inputs) | tail -n 1)
    t0=$(date +%s.%N)
    wait_for 1800 "10 partitions" bash -c "[ \"\$(\"$ZKPIPE\" status --config \"$CONF\" | awk '/^counters/{for (i = 1; i < NF; i++) if (\$i == \"finalized\") print \$(i + 1)}')\" -ge 10 ]"
    g10=$(rss gpud) f10=$(rss finalizerd)
    wait_job "$J" 7200 || fail "job failed: $(cat "$T/wait-$J.err")"
    t1=$(date +%s.%N)
    local busy
    busy=$("$ZKPIPE" status --config "$CONF" | awk '/^process gpud/{for (i = 1; i < NF; i++) if ($i == "busy") print $(i + 1)}')
    local g_end f_end s1 s2 s1f s2f
    g_end=$(rss gpud) f_end=$(rss finalizerd) s1=$(hwm synthd1) s2=$(hwm synthd2) s1f=$(rss synthd1) s2f=$(rss synthd2)
    local trim_ms gen_ms
    trim_ms=$(cat "$T"/logs/synthd*.log | grep -o 'ZKPIPE_TRIM_NS=[0-9]*' | awk -F= '{s += $2; n++} END {printf "%.3f", n ? s / n / 1e6 : 0}')
    gen_ms=$(cat "$T"/logs/synthd*.log | grep -o 'ZKPIPE_WITNESS_NS=[0-9]*' | awk -F= '{s += $2; n++} END {printf "%.1f", n ? s / n / 1e6 : 0}')
    local smax=$s1 smaxf=$s1f
    [ "$s2" -gt "$smax" ] && smax=$s2
    [ "$s2f" -gt "$smaxf" ] && smaxf=$s2f
    awk -v trim="$trim" -v n="$N" -v wall="$(echo "$t1 - $t0" | bc)" -v s="$smax" -v sf="$smaxf" -v g10="$g10" \
        -v ge="$g_end" -v f10="$f10" -v fe="$f_end" -v gen="$gen_ms" -v tr="$trim_ms" -v busy="$busy" 'BEGIN {
        printf "| %s | %d | %.1f | %d / %d MiB | %d -> %d MiB (%+.1f %%) | %d -> %d MiB (%+.1f %%) | %s | %s | %s |\n",
            trim, n, wall, s / 1024, sf / 1024, g10 / 1024, ge / 1024, (ge - g10) * 100 / g10,
            f10 / 1024, fe / 1024, (fe - f10) * 100 / f10, gen, tr, busy }' >>"$T/table"
    stop_all
    rm -f "$SEGMENT"
}
run always
run never
echo "$N x Sha256(960) ($(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, CPU backend), $(date -u +%F)"
echo "| trim | partitions | wall s | synthd RSS peak / end | gpud RSS 10 -> last | finalizerd RSS 10 -> last | witness ms/partition | malloc_trim ms/partition | gpud busy |"
echo "|---|---|---|---|---|---|---|---|---|"
cat "$T/table"
