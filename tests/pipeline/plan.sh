#!/bin/bash
# zkpipe plan (issue 23): per circuit and per stage the memory the ini's pipeline will hold. Its
# figures for what each stage holds of the circuit files match the stages' own "Memory at stop"
# lines (within 10 %, or 0.1 MiB) after a job of every circuit; a plan larger than the machine (a
# sparse 64 GiB key) exits 1 with "short by", and zkpipe setup refuses to create its segment with
# one line naming the host memory needed and available.
. "$(dirname "$0")/lib.sh"
D=$DATA/bn128/medium
write_config 4 0 "[gpu]" "precompute = 8M" "[circuit medium]" "zkey = $D/medium.zkey" "r1cs = $D/medium.r1cs"
"$ZKPIPE" plan --config "$CONF" >"$T/plan.out" 2>&1 || fail "plan: $(cat "$T/plan.out")"
cat "$T/plan.out"
grep -q "^circuit medium (bn128, 16060 wires, domain 2^14): key 6.5 MiB; held by synthd .* gpud 5.9 MiB (points)" \
    "$T/plan.out" || fail "plan's medium line"
grep -q "^host: .* fits$" "$T/plan.out" || fail "plan does not say it fits"
start synthd1
start gpud
start finalizerd
J=()
for c in medium mulchain poseidon mulchain381; do
    w=$D/witness.wtns
    [ $c = medium ] || w=$(dirname "$DATA/$(fixture_path "$c")")/witness-1.wtns
    J+=("$(submit "$c" NORMAL "$w")")
done
for j in "${J[@]}"; do wait_job "$j" 120 || fail "job $j: $(cat "$T/wait-$j.err")"; done
stop_all
held() { sed -n 's/.*Memory at stop: circuit files held \([0-9.]*\) MiB.*/\1/p' "$T/logs/$1.log" | tail -n 1; }
planned() { sed -n "s/^$1: .*each holds \([0-9.]*\) MiB.*/\1/p" "$T/plan.out"; }
for s in synthd gpud finalizerd; do
    d=$s
    [ $s = synthd ] && d=synthd1
    python3 -c 'import sys; p, h = map(float, sys.argv[1:]); sys.exit(0 if abs(p - h) <= max(0.1, 0.1 * h) else 1)' \
        "$(planned $s)" "$(held $d)" || fail "$s: planned $(planned $s) MiB, the stage held $(held $d) MiB"
    log "$s: planned $(planned $s) MiB, held $(held $d) MiB"
done

# a plan the machine cannot hold
python3 "$ROOT/tests/cli/large_zkey.py" pad $((64 << 30)) "$DATA/bn128/mulchain/mulchain.zkey" "$T/padded.zkey" ||
    fail "making the padded key"
rm -f "$SEGMENT"
write_config 2 0 "[circuit padded]" "zkey = $T/padded.zkey"
rc=0
"$ZKPIPE" plan --config "$CONF" >"$T/plan2.out" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "^host: .*more than the .* MiB available (MemAvailable): short by" "$T/plan2.out" ||
    fail "plan of a 64 GiB key: exit $rc: $(cat "$T/plan2.out")"
rc=0
"$ZKPIPE" setup --config "$CONF" >"$T/setup.out" 2>&1 || rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$T/setup.out")" = 1 ] &&
    grep -q "needs [0-9.]* MiB of host memory (segment .*available (MemAvailable): short by" "$T/setup.out" ||
    fail "setup of a plan that does not fit: exit $rc: $(cat "$T/setup.out")"
[ ! -e "$SEGMENT" ] || fail "setup created the segment of a plan that does not fit"
log "PASS"
