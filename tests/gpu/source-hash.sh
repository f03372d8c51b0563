# Sourced by tests/gpu/prebuild.sh and tests/gpu/device-check.sh: source_hash SRC prints a hash of
# every source and build file the device check's programs and daemons are compiled from (not the scripts), so
# that prebuilt programs are used only when they were built from these very sources. Needs no git
# (the GPU machine gets a plain copy of the tree).
source_hash() {
    (cd "$1" && find meson.build meson_options.txt base zk gpud config shm common synthd finalizerd cli witgen exporter \
        tests/meson.build tests/test.h tests/backend_fixture.h tests/test_cuda_host.cpp \
        tests/gpu -path tests/gpu/prebuilt -prune -o -type f \( -name '*.[ch]' -o -name '*.cpp' -o -name '*.cu' \
        -o -name '*.cuh' -o -name meson.build -o -name meson_options.txt \) -print | LC_ALL=C sort | xargs cat |
        sha256sum | cut -c1-16)
}
