#!/bin/bash
# The device part of zkpipe plan (issue 23; docs/cuda.md "Device memory"), against the emulated
# CUDA backend (zkpipe-gpud-emu):
#  1. [gpu] device_memory = 64M: every circuit's plan (key resident, MSMs whole, NTT whole) and the
#     device bytes it needs match the plan gpud logs when it loads the key, within 10 %;
#  2. device_memory = 4M: medium's NTT runs in blocks and its MSMs in chunks, in the plan and in
#     gpud alike (within 10 %), and a job of medium proves (every proof verified) on that plan;
#  3. device_memory = 1M: no circuit fits any plan (the smallest need the workspace of a 1024-point
#     G2 MSM and more): zkpipe plan exits 1 naming each, and the one short by most, and zkpipe setup
#     refuses in one line naming that one and makes no segment;
#  4. no device_memory: with NVML (a stand-in library, two 8 GiB devices) each gpud plans against
#     its device's free memory less the reserve; without NVML the plan says what it assumed.
. "$(dirname "$0")/lib.sh"
EMU=$BUILD/gpud/zkpipe-gpud-emu
[ -x "$EMU" ] || { log "no $EMU (built with a C++ compiler): skipping"; exit 77; }
D=$DATA/bn128/medium
cuda_config() { # cuda_config [ini lines...]: the test's pipeline on the CUDA backend, medium added
    write_config 4 0 "[circuit medium]" "zkey = $D/medium.zkey" "$@"
    sed -i 's/^backend = cpu$/backend = cuda/' "$CONF"
}
# compare NAME: the plan's device bytes for circuit NAME (zkpipe plan) and gpud's (its key line)
compare() {
    local p g
    p=$(sed -n "s/^  circuit $1: .*; \([0-9.]*\) MiB; pinned host .*/\1/p" "$T/plan.out" | head -1)
    g=$(sed -n "s/.*Loaded the key of circuit $1 .*device memory: .*; \([0-9.]*\) MiB of a .* MiB budget.*/\1/p" \
        "$T/logs/gpud.log" | tail -1)
    [ -n "$p" ] && [ -n "$g" ] || fail "circuit $1: no figure (plan '$p', gpud '$g'): $(cat "$T/plan.out")"
    python3 -c 'import sys; p, g = map(float, sys.argv[1:]); sys.exit(0 if abs(p - g) <= 0.1 * g else 1)' "$p" "$g" ||
        fail "circuit $1: planned $p MiB of device memory, gpud planned $g MiB"
    log "circuit $1: planned $p MiB of device memory, gpud $g MiB"
}
# same_mode NAME: the plan keeps NAME's key resident or streams it, and runs its NTT whole or in
# blocks, as gpud does (the chunk and block sizes may differ where CUB's sizes are estimated)
same_mode() {
    local p g
    p=$(grep "^  circuit $1: " "$T/plan.out" | grep -o "key points [a-z]*\|NTT whole\|NTT in blocks" | tr '\n' ' ')
    g=$(grep "Loaded the key of circuit $1 " "$T/logs/gpud.log" | tail -1 |
        grep -o "key points [a-z]*\|NTT whole\|NTT in blocks" | tr '\n' ' ')
    [ -n "$p" ] && [ "$p" = "$g" ] || fail "circuit $1: the plan says '$p', gpud '$g'"
}

log "1. device_memory = 64M"
cuda_config "[gpu]" "device_memory = 64M"
ZKPIPE_NVML_LIBRARY=/nonexistent "$ZKPIPE" plan --config "$CONF" >"$T/plan.out" 2>&1 || fail "plan: $(cat "$T/plan.out")"
cat "$T/plan.out"
grep -q "^gpud@0: budget 64.0 MiB (\[gpu\] device_memory (no device 0 visible to NVML here))$" "$T/plan.out" ||
    fail "the plan does not name its budget"
grep -q "^  circuit medium: key points resident (.* MiB), MSMs not chunked, NTT whole; " "$T/plan.out" ||
    fail "medium's plan"
grep -q "^gpud@0: .* MiB with every resident key loaded at once .*: fits the 64.0 MiB budget$" "$T/plan.out" ||
    fail "no gpud total"
GPUD=$EMU
start synthd1
start finalizerd
start gpud
wait_for 120 "gpud to load the keys" grep -q "Attached to" "$T/logs/gpud.log"
for c in medium mulchain poseidon mulchain381; do
    compare $c
    same_mode $c
done
stop_all

log "2. device_memory = 4M: medium's NTT in blocks"
cuda_config "[gpu]" "device_memory = 4M"
ZKPIPE_NVML_LIBRARY=/nonexistent "$ZKPIPE" plan --config "$CONF" >"$T/plan.out" 2>&1 || fail "plan: $(cat "$T/plan.out")"
cat "$T/plan.out"
grep -q "^  circuit medium: key points streamed (.* MiB), MSMs in chunks of [0-9]* points, NTT in blocks of [0-9]* elements (2^7 rows x 2^7 columns), scalars streamed; .* MiB; pinned host" \
    "$T/plan.out" || fail "medium's plan at 4M"
start synthd1
start finalizerd
start gpud
J=$(submit medium NORMAL "$D/witness.wtns")
wait_job "$J" 300 || fail "job failed: $(cat "$T/wait-$J.err")"
verify_job "$J" medium 1
compare medium
same_mode medium
stop_all
all_slabs_free || fail "slabs not FREE: $(slab_line)"

log "3. device_memory = 1M: no plan fits"
cuda_config "[gpu]" "device_memory = 1M"
rm -f "$SEGMENT"
rc=0
ZKPIPE_NVML_LIBRARY=/nonexistent "$ZKPIPE" plan --config "$CONF" >"$T/plan.out" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "^  circuit medium: does not fit: needs at least .* MiB (key points streamed .*NTT in blocks .*): short by" \
    "$T/plan.out" && grep -q "^device: circuit mulchain381 on gpud@0 is short by .* MiB of device memory$" "$T/plan.out" &&
    [ "$(grep -c "^  circuit .*: does not fit: " "$T/plan.out")" = 4 ] && ! grep -q "every resident key" "$T/plan.out" ||
    fail "plan at 1M: exit $rc: $(cat "$T/plan.out")"
rc=0
ZKPIPE_NVML_LIBRARY=/nonexistent "$ZKPIPE" setup --config "$CONF" >"$T/setup.out" 2>&1 || rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$T/setup.out")" = 1 ] &&
    grep -q "does not fit its device: circuit mulchain381 on gpud@0 needs .* MiB more device memory than the 1.0 MiB budget" \
        "$T/setup.out" || fail "setup at 1M: exit $rc: $(cat "$T/setup.out")"
[ ! -e "$SEGMENT" ] || fail "setup created the segment of a plan that does not fit"

log "4. no device_memory: NVML's free memory, or an assumption"
cuda_config "[gpu]" "devices = 2"
NVML=$BUILD/tests/fake-nvml.so
if [ -f "$NVML" ]; then
    ZKPIPE_NVML_LIBRARY=$NVML "$ZKPIPE" plan --config "$CONF" >"$T/plan.out" 2>&1 || fail "plan: $(cat "$T/plan.out")"
    cat "$T/plan.out"
    # the stand-in: 8 GiB devices with 1 and 2 GiB used; the reserve is 256 MiB
    grep -q "^gpud@0: budget 6912.0 MiB (device 0 has 7168.0 of 8192.0 MiB free (NVML), less a reserve for the runtime)$" \
        "$T/plan.out" && grep -q "^gpud@1: budget 5888.0 MiB (device 1 has 6144.0 of 8192.0 MiB free (NVML)" "$T/plan.out" ||
        fail "the NVML budgets"
fi
ZKPIPE_NVML_LIBRARY=/nonexistent "$ZKPIPE" plan --config "$CONF" >"$T/plan.out" 2>&1 || fail "plan: $(cat "$T/plan.out")"
grep -q "^gpud@1: assumed: no \[gpu\] device_memory and no device 1 visible to NVML here" "$T/plan.out" ||
    fail "the plan does not say what it assumed: $(cat "$T/plan.out")"
log "PASS"
