#!/bin/bash
# A device the CUDA build has no image for (docs/cuda.md, "Architectures"), on the host emulation
# of the CUDA runtime asked for a compute capability 7.5 device (ZKPIPE_EMU_CC): gpud refuses it at
# start with one line naming the device, its compute capability and the images built, and exits 5,
# which its systemd unit does not restart (RestartPreventExitStatus=5); no segment is touched. A
# device the build runs (9.0, the default) starts and logs the image it uses; with backend = auto a
# refused device falls back to the CPU backend with one warning that says why.
. "$(dirname "$0")/lib.sh"
GPUD=$BUILD/gpud/zkpipe-gpud-emu
[ -x "$GPUD" ] || { log "no $GPUD (built with a C++ compiler): skipping"; exit 77; }
write_config 4 0
sed -i 's/^backend = cpu$/backend = cuda/' "$CONF"

log "compute capability 7.5: refused"
rc=0
timeout 60 env ZKPIPE_EMU_CC=7.5 "$GPUD" --config "$CONF" >/dev/null 2>"$T/refused.err" || rc=$?
[ $rc = 5 ] || fail "exit $rc, expected 5: $(cat "$T/refused.err")"
[ "$(wc -l <"$T/refused.err")" = 1 ] || fail "expected one line, got: $(cat "$T/refused.err")"
grep -Eq "Failed to initialise backend cuda: CUDA: device 0 \(host emulation\) has compute capability 7\.5, and this build carries no image for it \(SASS sm_[0-9]+(, sm_[0-9]+)* and PTX compute_[0-9]+\); rebuild with -Dgpu_archs including 75$" \
    "$T/refused.err" || fail "the refusal does not name the device, its capability and the images built: $(cat "$T/refused.err")"
[ ! -e "$SEGMENT" ] || fail "the refused gpud created the segment"
grep -q '^RestartPreventExitStatus=5$' "$ROOT/systemd/zkpipe-gpud@.service.in" ||
    fail "the gpud unit restarts a refused device (no RestartPreventExitStatus=5)"

log "compute capability 9.0: starts and names the image"
start synthd1
start finalizerd
start gpud
M=$DATA/bn128/mulchain
J=$(submit mulchain NORMAL $M/witness-1.wtns $M/witness-2.wtns)
wait_job "$J" 200 || fail "job failed: $(cat $T/wait-$J.err)"
verify_job "$J" mulchain 2
grep -Eq "Backend cuda on device 0 host emulation, compute capability 9\.0, image (sm_9[0-9] SASS|compute_[0-9]+ PTX, JIT-compiled by the driver) \(built: SASS sm_" \
    "$T/logs/gpud.log" || fail "gpud does not log the device and the image it uses: $(head -5 "$T/logs/gpud.log")"
stop gpud

log "backend = auto on a refused device: the CPU backend, one warning"
sed -i 's/^backend = cuda$/backend = auto/' "$CONF"
start gpud ZKPIPE_EMU_CC=7.5
J=$(submit mulchain NORMAL $M/witness-1.wtns)
wait_job "$J" 200 || fail "job failed: $(cat $T/wait-$J.err)"
verify_job "$J" mulchain 1
grep -q "Backend cuda unavailable (CUDA: device 0 (host emulation) has compute capability 7.5" "$T/logs/gpud.log" ||
    fail "no fallback warning naming the capability: $(head -5 "$T/logs/gpud.log")"
stop_all
log "PASS"
