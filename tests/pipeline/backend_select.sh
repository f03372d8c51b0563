#!/bin/bash
# gpud's choice of backend ([gpu] backend, --backend) on a machine without a GPU:
#  - --help names the backends built into this gpud;
#  - auto: with CUDA built in, exactly one warning naming why CUDA is unusable, then the CPU
#    backend proves a job whose proofs verify; without CUDA built in, the CPU backend and no warning;
#  - cuda forced: gpud exits 1 with one line naming the reason (no GPU, or not built in);
#  - an unknown backend name is refused with the backends that exist.
# Skipped (77) where a GPU answers: there auto picks CUDA and the fallback cannot be shown.
. "$(dirname "$0")/lib.sh"
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
    log "a GPU answers here: the CPU fallback is not what runs; skipping"
    exit 77
fi
write_config 4 0
has_cuda=false
"$GPUD" --help | grep -q "Backends built into this binary: cpu, cuda" && has_cuda=true
"$GPUD" --help | grep -q "Backends built into this binary: cpu" || fail "--help does not name the backends"
log "CUDA built in: $has_cuda"

# forced backends that cannot run: exit 1, one line that says why
expect_refusal() { # expect_refusal BACKEND PATTERN
    local rc=0 err=$T/refuse-$1.err
    timeout 60 "$GPUD" --config "$CONF" --backend "$1" >/dev/null 2>"$err" || rc=$?
    [ $rc = 1 ] || fail "--backend $1: exit $rc, expected 1 ($(cat "$err"))"
    [ "$(wc -l <"$err")" = 1 ] || fail "--backend $1: expected one line, got: $(cat "$err")"
    grep -q "$2" "$err" || fail "--backend $1: '$(cat "$err")' does not match '$2'"
}
if $has_cuda; then
    expect_refusal cuda "Failed to initialise backend cuda: CUDA: no usable GPU (cudaGetDeviceCount: "
else
    expect_refusal cuda "Failed to select backend cuda: not built into this gpud (cpu)"
fi
expect_refusal tpu "Failed to select backend tpu: not built into this gpud (cpu"

# auto: falls back with one warning (CUDA built in) or runs the CPU backend quietly
sed -i 's/^backend = cpu$/backend = auto/' "$CONF"
grep -q '^backend = auto$' "$CONF" || fail "could not set backend = auto"
start synthd1
start finalizerd
start gpud
M=$DATA/bn128/mulchain
J=$(submit mulchain NORMAL $M/witness-1.wtns $M/witness-2.wtns)
wait_job "$J" 120 || fail "job failed: $(cat $T/wait-$J.err)"
verify_job "$J" mulchain 2
warnings=$(grep -c "unavailable" "$T/logs/gpud.log" || true)
if $has_cuda; then
    [ "$warnings" = 1 ] || fail "expected one fallback warning, got $warnings: $(cat "$T/logs/gpud.log")"
    grep -q "Backend cuda unavailable (CUDA: no usable GPU" "$T/logs/gpud.log" || fail "the warning does not say why"
else
    [ "$warnings" = 0 ] || fail "a warning without CUDA built in: $(cat "$T/logs/gpud.log")"
fi
grep -q "with backend cpu" "$T/logs/gpud.log" || fail "gpud did not attach with the CPU backend"
stop_all
all_slabs_free || fail "slabs not FREE: $(slab_line)"
log "PASS"
