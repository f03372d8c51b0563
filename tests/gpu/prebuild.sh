#!/bin/bash
# Builds the device check's programs on this machine (nvcc compiles and links without a GPU) into
# tests/gpu/prebuilt/ (ignored by git), with the shared libraries they need beyond glibc, so that a
# short loan of a GPU machine is spent checking rather than compiling:
#   tests/gpu/prebuild.sh                       here (about 10 min on 2 cores; BUILD=DIR to reuse one)
#   run tool: carry ["tests/gpu/prebuilt"], command "OUT=$OUT tests/gpu/device-check.sh"
# device-check.sh uses them when tests/gpu/prebuilt/stamp matches the sources it was given and
# every library resolves; otherwise it builds them itself.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/tests/gpu/source-hash.sh"
build=${BUILD:-$src/build-devcheck}
dst=$src/tests/gpu/prebuilt
export PATH="$PATH:/usr/local/cuda/bin"
[ -f "$build/build.ninja" ] || meson setup "$build" "$src" -Dcuda=enabled -Ddaemons=disabled
ninja -C "$build" tests/test_cuda_host tests/gpu/test_cuda_device
rm -rf "$dst"
mkdir -p "$dst/lib"
cp "$build/tests/test_cuda_host" "$build/tests/gpu/test_cuda_device" "$dst/"
strip --strip-debug "$dst"/test_cuda_*
for lib in $(ldd "$dst"/test_cuda_* | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u); do
    case $(basename "$lib") in libc.so.* | libm.so.* | ld-linux*) continue ;; esac
    cp -L "$lib" "$dst/lib/"
done
source_hash "$src" >"$dst/stamp"
du -sh "$dst"
echo "prebuilt: $(cat "$dst/stamp") ($(ls "$dst/lib" | tr '\n' ' '))"
