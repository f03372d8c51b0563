#!/bin/sh
# Builds zkpipe in ./build and runs the whole test suite (unit, cli, oracle, pipeline, systemd;
# GPU tests skip with 77 where there is no GPU). Extra arguments go to `meson test`.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
# -Dcuda=auto: the main job configures the same ./build without the CUDA backend; the tests build it
if [ -d build ]; then meson setup --reconfigure build -Dcuda=auto >/dev/null; else meson setup build >/dev/null; fi
ninja -C build
meson test -C build --print-errorlogs --num-processes 2 "$@"
