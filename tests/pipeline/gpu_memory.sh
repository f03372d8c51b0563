#!/bin/bash
# [gpu] device_memory on the emulated CUDA backend (docs/cuda.md, "Device memory"): gpud logs each
# key's device-memory plan against the cap; a cap no plan fits is named when the key loads, and a
# job for that circuit fails with the sizes (never a crash, nothing left in flight) while gpud
# keeps serving; the CPU backend warns that it ignores the key.
. "$(dirname "$0")/lib.sh"
EMU=$BUILD/gpud/zkpipe-gpud-emu
[ -x "$EMU" ] || { log "no $EMU (built with a C++ compiler): skipping"; exit 77; }
M=$DATA/bn128/mulchain

log "device_memory = 64M: planned, logged, proved"
write_config 4 0 "[gpu]" "device_memory = 64M"
sed -i 's/^backend = cpu$/backend = cuda/' "$CONF"
GPUD=$EMU
start synthd1
start finalizerd
start gpud
J=$(submit mulchain NORMAL $M/witness-1.wtns $M/witness-2.wtns)
wait_job "$J" 200 || fail "job failed: $(cat $T/wait-$J.err)"
verify_job "$J" mulchain 2
grep -q "Loaded the key of circuit mulchain .*device memory: key points resident (.* MiB), MSMs not chunked, NTT whole; .* MiB of a 64.0 MiB budget (\[gpu\] device_memory)" \
    "$T/logs/gpud.log" || fail "gpud does not log the key's plan against the cap: $(grep -i 'key' "$T/logs/gpud.log")"
stop_all

log "device_memory = 1K: the key is refused with the sizes, its job fails, gpud stays up"
sed -i 's/^device_memory = 64M$/device_memory = 1K/' "$CONF"
start synthd1
start finalizerd
start gpud
J=$(submit mulchain NORMAL $M/witness-1.wtns)
wait_job "$J" 200 && fail "a job ran on a device it does not fit"
grep -q "device memory: a partition of this circuit (.* wires, domain .*) needs at least .* MiB on the device (key points streamed (.* MiB), MSMs .*, NTT in blocks of .*), the budget is 0.0 MiB (device free memory and \[gpu\] device_memory)" \
    "$T/wait-$J.err" || fail "the job's error does not name the sizes: $(cat "$T/wait-$J.err")"
alive gpud || fail "gpud died: $(tail -5 "$T/logs/gpud.log")"
grep -q "Failed to preload circuit mulchain: CUDA: device memory" "$T/logs/gpud.log" || fail "the preload does not name it"
stop_all
all_slabs_free || fail "slabs not FREE: $(slab_line)"

log "the CPU backend ignores device_memory with a warning"
sed -i 's/^backend = cuda$/backend = cpu/' "$CONF"
GPUD=$BUILD/gpud/zkpipe-gpud
start gpud
wait_for 60 "gpud to warn" grep -q "\[gpu\] device_memory is ignored by backend cpu" "$T/logs/gpud.log"
stop_all
log "PASS"
