#!/bin/bash
# gpud with the CUDA backend, run on the host emulation of the CUDA runtime (zkpipe-gpud-emu, the
# backend's own sources built against gpud/cuda/emu.h): registration of the slabs, resident keys of
# two circuits on both curves, two partitions in flight on the backend's lanes, and a SIGKILL with
# both in flight. Every proof verifies (snarkjs for the first job).
. "$(dirname "$0")/lib.sh"
GPUD=$BUILD/gpud/zkpipe-gpud-emu
[ -x "$GPUD" ] || { log "no $GPUD (built with a C++ compiler): skipping"; exit 77; }
write_config 4 0
sed -i 's/^backend = cpu$/backend = cuda/' "$CONF"
grep -q '^backend = cuda$' "$CONF" || fail "could not set backend = cuda"
M=$DATA/bn128/mulchain
B=$DATA/bls12381/mulchain

log "two circuits, both curves, two in flight"
start synthd1
start finalizerd
start gpud
J1=$(submit mulchain NORMAL $M/witness-1.wtns $M/witness-2.wtns $M/witness-1.wtns $M/witness-2.wtns)
J2=$(submit mulchain381 NORMAL $B/witness-1.wtns $B/witness-2.wtns)
wait_job "$J1" 200 || fail "job failed: $(cat $T/wait-$J1.err)"
wait_job "$J2" 200 || fail "job failed: $(cat $T/wait-$J2.err)"
verify_job "$J1" mulchain 4 snarkjs
verify_job "$J2" mulchain381 2
grep -q "with backend cuda (device 0, 2 partitions in flight)" "$T/logs/gpud.log" ||
    fail "gpud did not run the CUDA backend with 2 in flight: $(cat "$T/logs/gpud.log")"
stop_all
all_slabs_free || fail "slabs not FREE: $(slab_line)"

log "SIGKILL with two in flight"
start synthd1
start finalizerd
start gpud ZKPIPE_TEST_DELAY=gpu.mid_prove:300:0 ZKPIPE_TEST_PAUSE=gpu.submitted:1
J=$(submit mulchain NORMAL $M/witness-1.wtns $M/witness-2.wtns $M/witness-1.wtns)
wait_for 100 "gpud to stop after submitting partition 1" is_stopped gpud
slab_line | grep -q 'PROVING 2' || fail "not two partitions in flight: $(slab_line)"
kill9 gpud
start gpud
wait_job "$J" 200 || fail "job failed: $(cat $T/wait-$J.err)"
verify_job "$J" mulchain 3
for k in 0 1; do
    [ "$(json_get "$(result_json "$J")" "r['partitions'][$k]['prove_count']")" = 2 ] || fail "partition $k not proved again"
done
stop_all
all_slabs_free || fail "slabs not FREE: $(slab_line)"
log "PASS"
