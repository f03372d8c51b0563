#!/bin/bash
# Device check of the CUDA backend (docs/cuda.md), for a machine with a GPU and no package registry
# (nvcc, meson and ninja are needed only where it builds the programs itself). One run, under 8
# minutes on an H200 with 16 cores:
#   1. uses the programs tests/gpu/prebuild.sh made from these sources (carried in tests/gpu/prebuilt),
#      or builds them with -Dcuda=enabled -Ddaemons=disabled into a fresh directory;
#   2. runs the host-compiled arithmetic test, then every kernel against the CPU code on fresh
#      random inputs (field ops, curve ops, MSM G1/G2 2^10..2^20 with zero scalars and infinity
#      points, NTT/iNTT/coset 2^1..2^22), every fixture witness proved on the GPU (raw points equal
#      to the CPU core's, the proof verified), partitions two in flight on alternating lanes, a
#      2^20-variable core against the CPU core, and the same core under device-memory caps that
#      chunk its MSMs, stream its key and run its NTT in blocks (equal to the CPU core's, the device
#      memory it took equal to its plan; a cap too small refused), the NTT in blocks at every block
#      size against the CPU, and two gpud on the GPU's two lanes each, sharing one segment
#      (tests/gpu/two_gpud_cuda.sh, with the daemons prebuilt or built here);
#   3. times MSM G1/G2 2^20 and 2^22 on both curves, NTT 2^20/2^22, the core at the largest
#      fixture and at 2^20 variables (2^21 domain), alone and back to back with two in flight,
#      H2D from a registered slab against pageable, and bn128's MSMs at windows around the
#      backend's choice (test_cuda_device msm_windows);
#   4. prints one markdown table last (paste it into bench/RESULTS.md), headed by the device, its
#      compute capability and the image of the build it ran ("architecture: ...").
# Exit status: 0 all checks passed, 1 a check failed, 77 no GPU. With $OUT set, the logs and the
# table are also written there.
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
export PATH="$PATH:/usr/local/cuda/bin"
t0=$(date +%s)
out=${OUT:-}
log() { echo "device-check: $*" >&2; }
elapsed() { echo $(( $(date +%s) - t0 )); }

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
    log "no GPU here (nvidia-smi -L fails): nothing to check"
    exit 77
fi
gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)
log "GPU: $gpu"

# Programs prebuilt elsewhere from these very sources (tests/gpu/prebuild.sh; carried to the GPU
# machine) save the build; otherwise a fresh build directory each run (ZKPIPE_DEVCHECK_BUILD=DIR
# reuses one on a rerun).
. "$src/tests/gpu/source-hash.sh"
pre=$src/tests/gpu/prebuilt
bin=
if [ -z "${ZKPIPE_DEVCHECK_BUILD:-}" ] && [ -f "$pre/programs.tar.gz" ] && [ -f "$pre/stamp" ]; then
    ex=$(mktemp -d /tmp/zkpipe-prebuilt.XXXXXX)
    if [ "$(cat "$pre/stamp")" != "$(source_hash "$src")" ]; then
        log "prebuilt programs are from other sources (stamp $(cat "$pre/stamp")): building"
    elif ! tar -xzf "$pre/programs.tar.gz" -C "$ex"; then
        log "prebuilt programs do not unpack: building"
    elif LD_LIBRARY_PATH=$ex/lib ldd "$ex/test_cuda_device" "$ex/test_cuda_host" "$ex"/build/*/zkpipe* |
        grep -q "not found"; then
        log "prebuilt programs miss libraries here: building"
    else
        bin=$ex
        daemons=$ex/build
        export LD_LIBRARY_PATH=$ex/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
        export ZKPIPE_TEST_DATA=$src/tests/data
        logs=${out:-$(mktemp -d /tmp/zkpipe-devcheck.XXXXXX)}
        mkdir -p "$logs"
        log "using the prebuilt programs (stamp $(cat "$pre/stamp"))"
        "$bin/test_cuda_host" >"$logs/host.log" 2>&1
        hrc=$?
        if [ $hrc -ge 126 ]; then # cannot run here (e.g. an instruction this CPU lacks): build instead
            log "prebuilt test_cuda_host cannot run here (exit $hrc): building"
            bin=
        fi
    fi
fi
if [ -z "$bin" ]; then
    # only a build needs the compiler and the build tools (the prebuilt programs need none)
    command -v nvcc >/dev/null || { log "nvcc not found (PATH, /usr/local/cuda/bin)"; exit 1; }
    for p in meson ninja; do command -v $p >/dev/null || { log "$p not found"; exit 1; }; done
    # json-c is optional: without it the JSON readers (zkpipe verify, vk.json) are left out, and the
    # check proves and verifies against the .zkey, which is all it needs.
    if command -v pkg-config >/dev/null && ! pkg-config --exists json-c; then
        log "json-c not found: building without the JSON readers (not needed here)"
    fi
    build=${ZKPIPE_DEVCHECK_BUILD:-$(mktemp -d /tmp/zkpipe-devcheck.XXXXXX)}
    logs=${out:-$build}
    mkdir -p "$logs"
    log "building in $build ($(nproc) cores)"
    if [ -f "$build/build.ninja" ]; then
        meson configure "$build" -Dcuda=enabled -Ddaemons=auto >"$logs/setup.log" 2>&1
    elif ! meson setup "$build" "$src" -Dcuda=enabled >"$logs/setup.log" 2>&1; then
        tail -30 "$logs/setup.log" >&2
        log "meson setup failed"
        exit 1
    fi
    if ! ninja -C "$build" -j"$(nproc)" tests/test_cuda_host tests/gpu/test_cuda_device >"$logs/build.log" 2>&1; then
        tail -40 "$logs/build.log" >&2
        log "build failed"
        exit 1
    fi
    mkdir -p "$build/bin"
    ln -sf ../tests/test_cuda_host ../tests/gpu/test_cuda_device "$build/bin/"
    bin=$build/bin
    # the daemons, for two gpud on one GPU (they need liburing, libsystemd, inih and json-c here)
    if ninja -C "$build" -j"$(nproc)" cli/zkpipe synthd/zkpipe-synthd gpud/zkpipe-gpud finalizerd/zkpipe-finalizerd \
        >>"$logs/build.log" 2>&1; then
        daemons=$build
    else
        log "the daemons did not build here (see $logs/build.log): two gpud on one GPU is not checked"
    fi
    log "built in $(elapsed) s"
fi

rc=0
[ -n "${hrc:-}" ] || { "$bin/test_cuda_host" >"$logs/host.log" 2>&1; hrc=$?; }
[ "$hrc" = 0 ] || { rc=1; tail -20 "$logs/host.log" >&2; log "host arithmetic test FAILED"; }
log "checks (kernels vs CPU, fixtures, 2^20 core) ..."
timeout 330 "$bin/test_cuda_device" arch_images field_ops ec_ops msm ntt ntt_blocked prove_fixtures prove_inflight \
    prove_large prove_chunked >"$logs/checks.log" 2>&1
crc=$?
cat "$logs/checks.log" >&2
# two gpud on the one GPU, two partitions in flight each (its two lanes), on one segment
if [ -n "${daemons:-}" ]; then
    log "two gpud on one GPU ..."
    ZKPIPE_SOURCE_ROOT=$src ZKPIPE_BUILD_ROOT=$daemons GPUD_CUDA=$daemons/gpud/zkpipe-gpud \
        timeout 150 bash "$src/tests/gpu/two_gpud_cuda.sh" >"$logs/two_gpud.log" 2>&1
    trc=$?
    tail -12 "$logs/two_gpud.log" >&2
    case $trc in
    0) two="ok   two_gpud_cuda" ;;
    77) two="SKIP two_gpud_cuda" ;;
    *) two="FAIL two_gpud_cuda"; rc=1; log "two gpud on one GPU FAILED (exit $trc)" ;;
    esac
else
    two="SKIP two_gpud_cuda (no daemons)"
fi
echo "$two" >>"$logs/checks.log"
# the device, its compute capability and the image of the build it ran (SASS or JIT-compiled PTX)
arch=$(grep -m1 '^ARCH|' "$logs/checks.log" | cut -d'|' -f2-)
[ -n "$arch" ] || arch="unknown (the backend did not start; see above)"
log "architecture: $arch"
if [ $crc -ne 0 ]; then rc=1; log "device checks FAILED (exit $crc)"; fi
log "checks done at $(elapsed) s; timing ..."
left=$(( 470 - $(elapsed) ))
[ $left -lt 60 ] && left=60
timeout $left "$bin/test_cuda_device" bench_h2d bench_ntt bench_msm bench_core >"$logs/times.txt" 2>"$logs/bench.log"
brc=$?
[ $brc -ne 0 ] && { tail -20 "$logs/bench.log" >&2; log "timing run exit $brc (partial table)"; }
# the MSM window around the backend's choice (13 at 2^20, 15 at 2^22: gpud/cuda/msm_plan.h), each
# window's result checked too: the rows "MSM G1/G2 bn128 2^L window c" say whether the choice holds
for lw in "20:11 12 13 14 16" "22:13 14 15 16"; do
    left=$(( 470 - $(elapsed) ))
    [ $left -lt 30 ] && { log "no time left for the window sweep at 2^${lw%%:*}"; break; }
    ZKPIPE_CHECK_MSM_LOG=${lw%%:*} ZKPIPE_CHECK_WINDOWS=${lw#*:} timeout $left "$bin/test_cuda_device" msm_windows \
        >>"$logs/times.txt" 2>>"$logs/bench.log" || { rc=1; log "window sweep at 2^${lw%%:*} FAILED (see bench.log)"; }
done

# per-check verdicts from the test harness
verdicts=$(grep -E '^(ok|FAIL|SKIP) ' "$logs/checks.log" | awk '{printf "%s %s; ", $1, $2}')
table=$( {
    echo "GPU: $gpu — $(date -u '+%Y-%m-%d %H:%M UTC') — sources $(source_hash "$src")$(git -C "$src" rev-parse --short HEAD 2>/dev/null | sed 's/^/, commit /')"
    echo "architecture: $arch"
    echo "checks: ${verdicts:-none ran}"
    echo
    echo "| what | value | unit | target |"
    echo "|---|---|---|---|"
    awk -F'|' '/^TIME\|/ {
        t = "";
        if ($2 == "MSM G1 bn128 2^20") t = "<= 15 ms";
        if ($2 == "MSM G1 bls12381 2^20") t = "<= 25 ms";
        if ($2 == "MSM G2 bn128 2^20") t = "<= 45 ms";
        if ($2 == "NTT bn128 2^20") t = "<= 0.5 ms";
        if ($2 == "H2D 1 GiB registered slab") t = ">= 45 GB/s";
        if ($2 == "H2D registered/pageable") t = ">= 3x";
        if ($2 ~ /^core bn128 2\^20/) t = "<= 80 ms";
        printf "| %s | %s | %s | %s |\n", $2, $3, $4, t }' "$logs/times.txt"
    echo
    echo "total $(elapsed) s; exit $rc"
} )
[ -n "$out" ] && echo "$table" >"$out/table.md"
echo "$table"
exit $rc
