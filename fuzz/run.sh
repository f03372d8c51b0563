#!/bin/sh
# Benchmark-style fuzzing run (not a test, not CI): every libFuzzer target for RUNS executions
# (default 1,000,000) from its seed corpus, then one table: executions, seconds, executions per second,
# crashes (crash, leak, timeout or out-of-memory inputs written; libFuzzer stops at the first), the
# corpus it grew and its coverage. Crash inputs are kept in OUT/artifacts.
# Usage: fuzz/run.sh [BUILD_DIR] [RUNS] [TARGET...]     (BUILD_DIR default: build; OUT: BUILD_DIR/fuzz/run)
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
runs=${2:-1000000}
shift 2 2>/dev/null || shift $#
targets=${*:-zkey wtns r1cs vk proof public jobini ini}
ninja -C "$build" fuzz/fuzz_zkey >/dev/null || { echo "fuzz/run.sh: cannot build the fuzz targets in $build"; exit 1; }
out=$build/fuzz/run
rm -rf "$out"
mkdir -p "$out/artifacts"
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi
printf "%-8s %12s %9s %9s %8s %8s %6s\n" target executions seconds exec/s crashes corpus cov
total_crash=0
for t in $targets; do
    mkdir -p "$out/corpus_$t"
    start=$(date +%s.%N)
    "$build/fuzz/fuzz_$t" -runs="$runs" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="$out/artifacts/$t-" "$out/corpus_$t" "$src/fuzz/corpus/$t" >"$out/$t.log" 2>&1
    rc=$?
    end=$(date +%s.%N)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log")
    crashes=$(find "$out/artifacts" -name "$t-*" | wc -l)
    [ $rc -ne 0 ] && [ "$crashes" -eq 0 ] && crashes="rc$rc"
    corpus=$(find "$out/corpus_$t" -type f | wc -l)
    cov=$(grep -E "^#[0-9]+" "$out/$t.log" | tail -n 1 | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
    secs=$(awk "BEGIN { print $end - $start }")
    printf "%-8s %12s %9.1f %9.0f %8s %8s %6s\n" "$t" "${execs:-?}" "$secs" "$(awk "BEGIN { print ${execs:-0} / $secs }")" \
        "$crashes" "$corpus" "${cov:-?}"
    [ "$crashes" != 0 ] && total_crash=$((total_crash + 1))
done
echo "logs and any crash inputs: $out"
[ $total_crash -eq 0 ]
