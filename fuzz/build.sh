#!/bin/sh
# Builds the libFuzzer targets with clang (-fsanitize=fuzzer,address,undefined): the readers' sources
# are compiled once into objects, then each fuzz_*.c is linked with the ones it needs.
# Usage: fuzz/build.sh CLANG SOURCE_ROOT OUT_DIR [EXTRA_CFLAG...]   (meson runs it: fuzz/meson.build)
set -eu
cc=$1 src=$2 out=$3
shift 3
mkdir -p "$out/obj"
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cflags="-std=gnu11 -O1 -g -D_GNU_SOURCE -DZK_HAVE_JSONC -DFUZZ_DATA_DIR=\"$src/tests/data\" -I$src -Wall -Wno-unused-function $*"
zk="bigint curve_info binfile zkey wtns r1cs verify"
for f in $zk; do
    $cc $cflags $san -fsanitize=fuzzer-no-link -c "$src/zk/$f.c" -o "$out/obj/zk_$f.o"
done
# The pairing code (Miller loops, final exponentiation, subgroup checks) reads no input bytes, only
# fixed-size field elements the readers made: optimized and not instrumented, so that a fuzzed key or
# proof that gets as far as a pairing costs well under a millisecond instead of tens.
for f in pairing_bn pairing_bls; do
    $cc $cflags -O2 -c "$src/zk/$f.c" -o "$out/obj/zk_$f.o"
done
for f in config/config spool/spool base/file base/mem base/testpoint base/text; do
    $cc $cflags $san -fsanitize=fuzzer-no-link -c "$src/$f.c" -o "$out/obj/$(echo $f | tr / _).o"
done
o=$out/obj
link() { # target, objects...
    t=$1
    shift
    $cc $cflags $san -fsanitize=fuzzer "$src/fuzz/$t.c" "$@" -o "$out/$t" -ljson-c -linih -lm -lpthread
}
base="$o/base_file.o $o/base_mem.o $o/base_testpoint.o"
fmt="$o/zk_bigint.o $o/zk_curve_info.o $o/zk_binfile.o $base"
ver="$fmt $o/zk_zkey.o $o/zk_verify.o $o/zk_pairing_bn.o $o/zk_pairing_bls.o"
link fuzz_zkey $ver
link fuzz_wtns $fmt $o/zk_wtns.o $o/zk_zkey.o
link fuzz_r1cs $fmt $o/zk_r1cs.o
link fuzz_vk $ver
link fuzz_proof $ver
link fuzz_public $ver
link fuzz_jobini $o/spool_spool.o $o/config_config.o $o/base_text.o $base
link fuzz_ini $o/config_config.o $base
