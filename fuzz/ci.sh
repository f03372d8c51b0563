#!/bin/sh
# The short CI run of one fuzz target (tests/meson.build: fuzz_NAME): every seed of fuzz/corpus/NAME,
# then 3 s of fuzzing from them. New inputs go to a temporary folder (the committed corpus is only
# read); a crash, leak, timeout or bad message fails the test and its input is kept in the build
# folder (fuzz/artifacts/). Exit 77 (skip) when the target was not built (no clang or libFuzzer).
# Usage: fuzz/ci.sh NAME BINARY|none SOURCE_ROOT
set -u
name=$1 bin=$2 src=$3
if [ "$bin" = none ] || [ ! -x "$bin" ]; then
    echo "fuzz_$name: not built (needs clang with libFuzzer: clang-14, libclang-rt-14-dev)"
    exit 77
fi
# the readers write nothing, but job.ini and the ini are fuzzed through files: on tmpfs when there is one
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
art=$(dirname "$bin")/artifacts
mkdir -p "$art"
"$bin" -max_total_time=3 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$art/$name-" \
    "$work" "$src/fuzz/corpus/$name" >"$work/log" 2>&1
rc=$?
grep -E "stat::number_of_executed_units|INITED|DONE" "$work/log"
if [ $rc -ne 0 ]; then
    tail -n 40 "$work/log"
    echo "fuzz_$name: FAILED (exit $rc); the input is in $art"
    exit 1
fi
exit 0
