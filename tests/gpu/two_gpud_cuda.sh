#!/bin/bash
# Two gpud on one GPU (issue 23): the CUDA backend, both on device 0, each with two partitions in
# flight (the backend's two lanes) and [gpu] device_memory splitting the device, on one segment:
# both take partitions of the same jobs on both curves, every proof verifies, every partition is
# proved once, each gpud logs its plan against its share, and `zkpipe status` names the device.
# In the suite on the host emulation (zkpipe-gpud-emu; pipeline suite); tests/gpu/device-check.sh
# runs it on a GPU with the real gpud (GPUD_CUDA=PATH).
. "$(dirname "$0")/../pipeline/lib.sh"
CUDA_GPUD=${GPUD_CUDA:-$BUILD/gpud/zkpipe-gpud-emu}
[ -x "$CUDA_GPUD" ] || { log "no $CUDA_GPUD (the CUDA backend or its emulation is not built): skipping"; exit 77; }
M=$DATA/bn128/mulchain
B=$DATA/bls12381/mulchain

GPU_INFLIGHT=2 write_config 6 0 "[gpu]" "device_memory = 256M"
sed -i 's/^backend = cpu$/backend = cuda/' "$CONF"
GPUD=$CUDA_GPUD
start synthd1
start finalizerd
# a partition takes long enough that both gpud are busy at once, with two in flight each
start gpud0 ZKPIPE_TEST_DELAY=gpu.mid_prove:200
start gpud1 ZKPIPE_TEST_DELAY=gpu.mid_prove:200
# both attached, or the reason one is not (on a GPU machine: the backend's own line)
attached() { grep -q "Attached to" "$T/logs/gpud$1.log" || { alive "gpud$1" || fail "gpud@$1 did not start"; false; }; }
for i in 0 1; do wait_for 120 "gpud@$i to attach" attached $i; done
W=()
for k in 1 2 3 4 5 6 7 8; do W+=("$M/witness-$((k % 2 + 1)).wtns"); done
J1=$(submit mulchain NORMAL "${W[@]}")
J2=$(submit mulchain381 NORMAL "$B/witness-1.wtns" "$B/witness-2.wtns")
wait_job "$J1" 300 || fail "job $J1 failed: $(cat "$T/wait-$J1.err")"
wait_job "$J2" 300 || fail "job $J2 failed: $(cat "$T/wait-$J2.err")"
verify_job "$J1" mulchain 8
verify_job "$J2" mulchain381 2
for j in "$J1" "$J2"; do
    n=$([ "$j" = "$J1" ] && echo 8 || echo 2)
    for ((k = 0; k < n; k++)); do
        c=$(json_get "$(result_json "$j")" "r['partitions'][$k]['prove_count']")
        [ "$c" = 1 ] || fail "partition $k of $j was proved $c times"
    done
done
both_gpud_proved 10 cuda
for i in 0 1; do
    grep -q "Backend cuda on device 0 " "$T/logs/gpud$i.log" || fail "gpud@$i does not name device 0"
    grep -q "Loaded the key of circuit mulchain .*device memory: .* MiB of a 256.0 MiB budget (\[gpu\] device_memory)" \
        "$T/logs/gpud$i.log" || fail "gpud@$i does not log its plan against its share"
    grep "ARCH\|Backend cuda on" "$T/logs/gpud$i.log" | head -1
done
stop_all
all_slabs_free || fail "slabs not FREE: $(slab_line)"
log "PASS"
