#!/bin/bash
# gpud's handoff with partitions in flight (issue 26): on the replay backend with inflight = 2, a
# slab that becomes READY while a slow partition is in flight is submitted at once on the free
# lane, not when the slow one ends. gpud polls its lanes (backend.h `poll`) instead of waiting in
# `collect`; before, it waited there and the READY slab waited with it.
. "$(dirname "$0")/lib.sh"
BN=$DATA/bn128/mulchain
BLS=$DATA/bls12381/mulchain
# a device on which a bls12381 mulchain partition takes 4 x 700 + 900 + 6 x 1 + 1 = 3707 ms and a
# bn128 one 4 x 1 + 1 + 6 x 0.1 + 1 = 6.6 ms
cat >"$T/model.ini" <<'INI'
[device]
name = slow and fast
h2d = 1G
fixed = 1ms
[bn128]
msm_g1 = 2^10 1ms
msm_g2 = 2^10 1ms
ntt = 2^10 0.1ms
[bls12381]
msm_g1 = 2^10 700ms
msm_g2 = 2^10 900ms
ntt = 2^10 1ms
INI
SLOW_MS=3707
write_config 4 0
use_replay "$T/model.ini" 2
for c in mulchain:$BN mulchain381:$BLS; do
    "$ZKPIPE" replay prepare --config "$CONF" --circuit "${c%%:*}" --threads 1 "${c#*:}/witness-1.wtns" >>"$T/prep.out" 2>&1 ||
        fail "replay prepare ${c%%:*} failed: $(cat "$T/prep.out")"
done

start synthd1
start gpud
start finalizerd
log "a slow partition (bls12381, $SLOW_MS ms) in flight, then a fast one (bn128) becomes READY"
SLOW=$(submit mulchain381 NORMAL "$BLS/witness-1.wtns")
proving() { slab_line | awk '{for (i = 2; i < NF; i += 2) if ($i == "PROVING") f = $(i + 1)} END {exit !(f == 1)}'; }
wait_for 60 "the slow partition in flight" proving
FAST=$(submit mulchain NORMAL "$BN/witness-1.wtns")
wait_job "$FAST" 60 || fail "job $FAST failed: $(cat "$T/wait-$FAST.err")"
wait_job "$SLOW" 60 || fail "job $SLOW failed: $(cat "$T/wait-$SLOW.err")"
python3 - "$(result_json "$SLOW")" "$(result_json "$FAST")" "$SLOW_MS" <<'PY' || fail "the READY slab waited for the slow lane"
import json, sys
slow = json.load(open(sys.argv[1]))["partitions"][0]
fast = json.load(open(sys.argv[2]))["partitions"][0]
slow_end = slow["t_prove_start_ns"] + slow["gpu_ms"] * 1e6
ready_before = (slow_end - fast["t_ready_ns"]) / 1e6
print(f"slow partition: gpu {slow['gpu_ms']:.1f} ms; fast partition READY {ready_before:.1f} ms before the slow one ended, "
      f"picked {fast['ready_wait_ms']:.1f} ms after READY")
# the fast slab was READY while the slow lane still had most of its time to run
assert ready_before > 1000, "the fast partition became READY too late to tell (a machine this slow cannot judge)"
assert fast["t_prove_start_ns"] < slow_end, "the fast partition was picked only after the slow one ended (gpud waited in collect)"
assert fast["ready_wait_ms"] < 500, f"the fast partition waited {fast['ready_wait_ms']:.1f} ms for a free lane"
PY
verify_job "$SLOW" mulchain381 1
verify_job "$FAST" mulchain 1
stop gpud || fail "gpud did not stop cleanly"
stop_all
log "PASS"
