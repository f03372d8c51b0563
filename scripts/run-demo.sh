#!/bin/bash
# zkpipe demo: runs the whole pipeline as plain processes on a temporary segment and spool, proves the
# bundled fixtures (bn128 and bls12381): input.json files for mulchain on both curves (synthd computes
# the witnesses with the circuits' compiled wasm) and ready witnesses for the others; shows progress,
# verifies every proof, prints a summary and stops everything cleanly.
#   scripts/run-demo.sh [--build DIR] [--synthd N] [--backend cpu|auto|cuda] [--snarkjs] [--keep]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/fixture-circuits.sh"
BUILD=${ZKPIPE_BUILD_ROOT:-$ROOT/build}
NSYNTH=2
BACKEND=cpu
SNARKJS_CHECK=0
KEEP=0
while [ $# -gt 0 ]; do
    case $1 in
    --build) BUILD=$2; shift ;;
    --synthd) NSYNTH=$2; shift ;;
    --backend) BACKEND=$2; shift ;;
    --snarkjs) SNARKJS_CHECK=1 ;;
    --keep) KEEP=1 ;;
    -h | --help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-demo.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
# build (or bring up to date) just what the demo runs
[ -f "$BUILD/build.ninja" ] || { echo "== configuring $BUILD"; meson setup "$BUILD" "$ROOT" >/dev/null; }
ninja -C "$BUILD" cli/zkpipe synthd/zkpipe-synthd gpud/zkpipe-gpud finalizerd/zkpipe-finalizerd | grep -v '^ninja: ' || true
ZKPIPE=$BUILD/cli/zkpipe
DATA=$ROOT/tests/data
T=$(mktemp -d /tmp/zkpipe-demo.XXXXXX)
NAME=demo-$$
CONF=$T/zkpipe.ini
SPOOL=$T/spool
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -f "/dev/shm/zkpipe-$NAME"
    if [ $KEEP = 1 ]; then echo "kept $T (logs, spool, config)"; else rm -rf "$T"; fi
}
trap cleanup EXIT
cat >"$CONF" <<INI
[pipeline]
name = $NAME
spool = $SPOOL
cache = $T/cache
slabs = 6
reserve_critical = 1
[synth]
instances = $NSYNTH
[gpu]
backend = $BACKEND
$(fixture_circuits_ini "$DATA" poseidon medium)
$(fixture_circuits_ini_wasm "$DATA" mulchain mulchain381)
INI
echo "== pipeline $NAME: segment /dev/shm/zkpipe-$NAME, spool $SPOOL"
"$ZKPIPE" setup --config "$CONF"
echo "== compiling the wasm witness generators (wasm2c + cc, cached by content hash)"
"$ZKPIPE" witgen build --config "$CONF" | sed 's/^/   /'
for i in $(seq 1 "$NSYNTH"); do
    "$BUILD/synthd/zkpipe-synthd" --config "$CONF" --instance "$i" 2>"$T/synthd$i.log" &
    PIDS+=($!)
done
"$BUILD/gpud/zkpipe-gpud" --config "$CONF" 2>"$T/gpud.log" &
PIDS+=($!)
"$BUILD/finalizerd/zkpipe-finalizerd" --config "$CONF" 2>"$T/finalizerd.log" &
PIDS+=($!)
sleep 0.3
echo "== started $NSYNTH synthd, 1 gpud ($(grep -o "with backend [a-z]*" "$T/gpud.log" || echo "backend $BACKEND")), 1 finalizerd"

declare -A CIRC=() VK=() NPART=()
JOBS=()
sub() { # circuit vk [--input] files...
    local c=$1 vk=$2 what="witness(es)"
    shift 2
    [ "$1" = --input ] && what="input.json file(s)"
    local j
    j=$("$ZKPIPE" submit --config "$CONF" --circuit "$c" "$@" | tail -n 1)
    [ "$1" = --input ] && shift
    CIRC[$j]=$c
    VK[$j]=$vk
    NPART[$j]=$#
    JOBS+=("$j")
    printf '   %s  %-12s %d %s\n' "$j" "$c" $# "$what"
}
t0=$(date +%s.%N)
echo "== submitting the bundled inputs and witnesses"
sub poseidon "$DATA/bn128/poseidon/vk.json" "$DATA"/bn128/poseidon/witness-{1,2,3,4}.wtns
sub mulchain "$DATA/bn128/mulchain/vk.json" --input "$DATA"/bn128/mulchain/input-{1,2}.json
sub mulchain381 "$DATA/bls12381/mulchain/vk.json" --input "$DATA"/bls12381/mulchain/input-{1,2}.json
sub medium "$DATA/bn128/medium/vk.json" "$DATA/bn128/medium/witness.wtns"
total=0
for j in "${JOBS[@]}"; do total=$((total + NPART[$j])); done

echo "== progress"
while :; do
    st=$("$ZKPIPE" status --config "$CONF")
    fin=$(echo "$st" | awk '/^counters/{for (i = 1; i < NF; i++) if ($i == "finalized") print $(i + 1)}')
    slabs=$(echo "$st" | grep '^slabs:' | sed 's/^slabs: //')
    printf '   %5.1fs  proofs %2d/%d  slabs: %s\n' "$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { print a - b }')" "${fin:-0}" "$total" "$slabs"
    left=0
    for j in "${JOBS[@]}"; do [ -e "$SPOOL/done/$j" ] || [ -e "$SPOOL/failed/$j" ] || left=1; done
    [ $left = 0 ] && break
    sleep 1
done
rc=0
for j in "${JOBS[@]}"; do "$ZKPIPE" wait --config "$CONF" "$j" >/dev/null || rc=1; done
t1=$(date +%s.%N)

echo "== verifying every proof"
nok=0
for j in "${JOBS[@]}"; do
    for ((k = 0; k < NPART[$j]; k++)); do
        d=$SPOOL/done/$j
        if "$ZKPIPE" verify "${VK[$j]}" "$d/public-$k.json" "$d/proof-$k.json" >/dev/null 2>&1; then
            nok=$((nok + 1))
        else
            echo "   $j partition $k: DOES NOT VERIFY"
            rc=1
        fi
        if [ $SNARKJS_CHECK = 1 ] && [ -x "$ROOT/node_modules/.bin/snarkjs" ]; then
            "$ROOT/node_modules/.bin/snarkjs" groth16 verify "${VK[$j]}" "$d/public-$k.json" "$d/proof-$k.json" 2>&1 |
                grep -q 'OK!' || { echo "   $j partition $k: snarkjs rejects it"; rc=1; }
        fi
    done
done
echo "   $nok/$total proofs verify (native verifier$([ $SNARKJS_CHECK = 1 ] && echo ' and snarkjs'))"

echo "== summary"
"$ZKPIPE" status --config "$CONF" | grep -E '^(stage times|counters)' | sed 's/^/   /'
python3 - "$SPOOL" "${JOBS[@]}" <<'PY'
import json, sys
spool, jobs = sys.argv[1], sys.argv[2:]
for j in jobs:
    r = json.load(open(f"{spool}/done/{j}/result.json"))
    p = r["partitions"]
    avg = lambda k: sum(x[k] for x in p) / len(p)
    print(f"   {r['circuit']:<12} {len(p)} proof(s): synth {avg('synth_ms'):7.1f} ms  gpu {avg('gpu_ms'):8.1f} ms  "
          f"finalize {avg('finalize_ms'):6.1f} ms  (job total {r['total_ms']:.0f} ms)")
PY
awk -v t="$total" -v a="$t1" -v b="$t0" 'BEGIN { printf "   %d proofs in %.1f s = %.1f proofs/min\n", t, a - b, t * 60 / (a - b) }'
echo "== stopping"
for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
for p in "${PIDS[@]}"; do wait "$p" || { echo "a daemon exited with an error"; rc=1; }; done
PIDS=()
"$ZKPIPE" status --config "$CONF" | grep '^slabs:' | sed 's/^/   /'
echo "   stopped; removing the segment and the temporary spool"
exit $rc
