#!/bin/bash
# Builds the device check's programs on this machine (nvcc compiles and links without a GPU) into
# tests/gpu/prebuilt/ (ignored by git), with the shared libraries they need beyond glibc, so that a
# short loan of a GPU machine is spent checking rather than compiling: the two test programs, and
# zkpipe and the three daemons in prebuilt/build/ (laid out as a build directory, for
# tests/gpu/two_gpud_cuda.sh). GPU_ARCHS=90 builds one architecture (default: the meson default):
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
archs=()
[ -n "${GPU_ARCHS:-}" ] && archs=(-Dgpu_archs="$GPU_ARCHS")
if [ -f "$build/build.ninja" ]; then
    meson configure "$build" -Dcuda=enabled -Ddaemons=enabled "${archs[@]}"
else
    meson setup "$build" "$src" -Dcuda=enabled -Ddaemons=enabled "${archs[@]}"
fi
daemons=(cli/zkpipe synthd/zkpipe-synthd gpud/zkpipe-gpud finalizerd/zkpipe-finalizerd)
ninja -C "$build" tests/test_cuda_host tests/gpu/test_cuda_device "${daemons[@]}"
rm -rf "$dst"
mkdir -p "$dst/lib"
cp "$build/tests/test_cuda_host" "$build/tests/gpu/test_cuda_device" "$dst/"
for d in "${daemons[@]}"; do
    mkdir -p "$dst/build/$(dirname "$d")"
    cp "$build/$d" "$dst/build/$d"
done
strip --strip-debug "$dst"/test_cuda_* "${daemons[@]/#/$dst/build/}"
for lib in $(ldd "$dst"/test_cuda_* "${daemons[@]/#/$dst/build/}" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u); do
    case $(basename "$lib") in libc.so.* | libm.so.* | ld-linux*) continue ;; esac
    cp -L "$lib" "$dst/lib/"
done
source_hash "$src" >"$dst/stamp"
du -sh "$dst"
echo "prebuilt: $(cat "$dst/stamp") ($(ls "$dst/lib" | tr '\n' ' '))"
