#!/bin/sh
# Builds zkpipe in ./build and runs the whole test suite (unit, cli, oracle, pipeline, systemd;
# GPU tests skip with 77 where there is no GPU). Extra arguments go to `meson test`.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
# -Dcuda=auto: the main job configures the same ./build without the CUDA backend; the tests build it,
# for one architecture (sm_90 and its PTX: no test runs the device code here, and each architecture
# is another nvcc pass over every kernel); a GPU box's own build keeps the default list (docs/cuda.md)
opts="-Dcuda=auto -Dgpu_archs=90"
if [ -d build ]; then meson setup --reconfigure build $opts >/dev/null; else meson setup build $opts >/dev/null; fi
ninja -C build
meson test -C build --print-errorlogs --num-processes 2 "$@"
