#!/bin/bash
# Builds the device check's programs on this machine (nvcc compiles and links without a GPU) into
# tests/gpu/prebuilt/ (ignored by git), with the shared libraries they need beyond glibc, so that a
# short loan of a GPU machine is spent checking rather than compiling: the two test programs, and
# zkpipe and the three daemons in build/ (laid out as a build directory, for
# tests/gpu/two_gpud_cuda.sh), packed as prebuilt/programs.tar.gz (about 38 MB: the run tool
# carries at most 64 MiB; unpacked they are about 84 MB), beside prebuilt/stamp.
# GPU_ARCHS=90 builds one architecture (default: the meson default):
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
stage=$(mktemp -d /tmp/zkpipe-prebuild.XXXXXX)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib"
cp "$build/tests/test_cuda_host" "$build/tests/gpu/test_cuda_device" "$stage/"
for d in "${daemons[@]}"; do
    mkdir -p "$stage/build/$(dirname "$d")"
    cp "$build/$d" "$stage/build/$d"
done
strip --strip-debug "$stage"/test_cuda_* "${daemons[@]/#/$stage/build/}"
for lib in $(ldd "$stage"/test_cuda_* "${daemons[@]/#/$stage/build/}" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u); do
    case $(basename "$lib") in libc.so.* | libm.so.* | ld-linux*) continue ;; esac
    cp -L "$lib" "$stage/lib/"
done
rm -rf "$dst"
mkdir -p "$dst"
tar -czf "$dst/programs.tar.gz" -C "$stage" .
source_hash "$src" >"$dst/stamp"
du -sh "$stage" "$dst"
echo "prebuilt: $(cat "$dst/stamp") ($(ls "$stage/lib" | tr '\n' ' '))"
