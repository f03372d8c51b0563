#!/bin/bash
# The libraries as installed: `meson install --destdir` into a temporary tree, then clients that
# include only rapidsnark's prover.h and verifier.h (tests/lib/rs_client.c, built as C and as C++
# with the installed rapidsnark.pc, and once statically against librapidsnark.a) prove the bn128 and
# the bls12381 fixture, snarkjs verifies their proofs, the installed libraries export their API
# only, and docs/library.md's libzkpipe example, built with zkpipe.pc, proves from circuit inputs.
set -u
unset LD_LIBRARY_PATH # meson test points it at the build tree: the clients must load the installed library
root=${ZKPIPE_SOURCE_ROOT:?}
build=${ZKPIPE_BUILD_ROOT:?}
data=$root/tests/data
snarkjs=$root/node_modules/.bin/snarkjs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

meson install -C "$build" --destdir "$tmp/dest" --no-rebuild --quiet > "$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; echo "FAIL: meson install"; exit 1; }
pc=$(find "$tmp/dest" -name rapidsnark.pc | head -1)
[ -n "$pc" ] || { echo "FAIL: no rapidsnark.pc installed"; exit 1; }
prefix=$(sed -n 's/^prefix=//p' "$pc")
pkg() { PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --define-variable=prefix="$tmp/dest$prefix" "$@"; }
libdir=$(pkg --variable=libdir rapidsnark)
incdir=$(pkg --variable=includedir rapidsnark)
for f in "$incdir/rapidsnark/prover.h" "$incdir/rapidsnark/verifier.h" "$incdir/zkpipe/zkpipe.h" \
    "$libdir/librapidsnark.so" "$libdir/librapidsnark.a" "$libdir/libzkpipe.so"; do
    [ -e "$f" ] || bad "not installed: ${f#"$tmp/dest"}"
done

# symbol hygiene: the API and nothing else
api="groth16_proof_size groth16_prover groth16_prover_create groth16_prover_create_zkey_file groth16_prover_destroy \
groth16_prover_prove groth16_prover_zkey_file groth16_public_size_for_zkey_buf groth16_public_size_for_zkey_file \
groth16_verify"
got=$(nm -D --defined-only "$libdir/librapidsnark.so" | awk '{print $3}' | sort | tr '\n' ' ')
[ "$got" = "$api " ] || bad "librapidsnark.so exports: $got"
got=$(nm -g --defined-only "$libdir/librapidsnark.a" | awk 'NF == 3 {print $3}' | sort | tr '\n' ' ')
[ "$got" = "$api " ] || bad "librapidsnark.a defines globally: $got"
other=$(nm -D --defined-only "$libdir/libzkpipe.so" | awk '{print $3}' | grep -v '^zkpipe_\|^wasm_rt_\|^ZKPIPE_0$')
[ -z "$other" ] || bad "libzkpipe.so exports more than its API: $other"
[ "$(readelf -d "$libdir/librapidsnark.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')" = librapidsnark.so ] ||
    bad "librapidsnark.so's soname is not librapidsnark.so (rapidsnark's)"

cflags=$(pkg --cflags rapidsnark) libs=$(pkg --libs rapidsnark)
src=$root/tests/lib/rs_client.c
cc -x c -std=c11 -Wall -Wextra -Werror $cflags "$src" $libs -Wl,-rpath,"$libdir" -pthread -o "$tmp/client_c" ||
    bad "the C client does not build"
c++ -x c++ -std=c++17 -Wall -Wextra -Werror $cflags "$src" $libs -Wl,-rpath,"$libdir" -pthread -o "$tmp/client_cpp" ||
    bad "the C++ client does not build"
cc -x c -std=c11 $cflags "$src" -x none "$libdir/librapidsnark.a" $(pkg --static --libs-only-l rapidsnark | sed 's/-lrapidsnark//') \
    -fopenmp -pthread -o "$tmp/client_static" || bad "the C client does not link statically"
ldd "$tmp/client_c" | grep -q "$libdir/librapidsnark.so" || bad "the C client does not load the installed library"

# client, curve, fixture, another circuit's witness, threads x proofs
run() {
    local client=$1 curve=$2 other=$3 threads=$4 proofs=$5 out=$tmp/out-$1-$2
    local d=$data/$curve/mulchain
    mkdir -p "$out"
    if ! "$tmp/$client" "$d/mulchain.zkey" "$d/witness-1.wtns" "$other" "$d/vk.json" "$out" "$threads" "$proofs" \
        > "$out/log" 2>&1; then
        cat "$out/log"
        bad "$client on $curve"
        return
    fi
    tail -1 "$out/log" | sed "s/^/$client $curve: /"
    if [ -x "$snarkjs" ]; then
        "$snarkjs" groth16 verify "$d/vk.json" "$out/public.json" "$out/proof.json" > "$out/snarkjs.log" 2>&1 ||
            { cat "$out/snarkjs.log"; bad "snarkjs rejects the proof of $client on $curve"; }
    fi
}
[ -x "$snarkjs" ] || echo "note: snarkjs not installed (npm ci): its check is skipped"
run client_c bn128 "$data/bn128/poseidon/witness-1.wtns" 8 4
run client_cpp bls12381 "$data/bn128/poseidon/witness-1.wtns" 8 4
run client_cpp bn128 "$data/bn128/poseidon/witness-1.wtns" 0 0
run client_c bls12381 "$data/bn128/poseidon/witness-1.wtns" 0 0
run client_static bn128 "$data/bn128/poseidon/witness-1.wtns" 2 2

# docs/library.md's example, as the page shows it, against the installed libzkpipe
zpc=$(find "$tmp/dest" -name zkpipe.pc | head -1)
zpkg() { PKG_CONFIG_PATH=$(dirname "$zpc") pkg-config --define-variable=prefix="$tmp/dest$prefix" "$@"; }
sed -n '/<!-- example begin -->/,/<!-- example end -->/p' "$root/docs/library.md" | sed '1,2d;$d' | sed '$d' \
    > "$tmp/fullprove.c"
if cc -std=c11 -Wall -Wextra -Werror $(zpkg --cflags zkpipe) "$tmp/fullprove.c" $(zpkg --libs zkpipe) \
    -Wl,-rpath,"$libdir" -o "$tmp/fullprove"; then
    export ZKPIPE_CACHE=$tmp/cache
    for curve in bn128 bls12381; do
        d=$data/$curve/mulchain
        if "$tmp/fullprove" "$d/input-1.json" "$d/mulchain.wasm" "$d/mulchain.zkey" "$tmp/ex-proof.json" \
            "$tmp/ex-public.json" > "$tmp/ex.log" 2>&1; then
            echo "example $curve: $(cat "$tmp/ex.log")"
            cmp -s "$tmp/ex-public.json" "$d/public-1.json" || bad "example $curve: public.json differs from the fixture's"
            if [ -x "$snarkjs" ]; then
                "$snarkjs" groth16 verify "$d/vk.json" "$tmp/ex-public.json" "$tmp/ex-proof.json" > "$tmp/ex-sj.log" 2>&1 ||
                    { cat "$tmp/ex-sj.log"; bad "snarkjs rejects the example's $curve proof"; }
            fi
        else
            cat "$tmp/ex.log"
            bad "the example fails on $curve"
        fi
    done
    # an input the circuit rejects: one line, exit 1
    echo '{"a": "1"}' > "$tmp/bad-input.json"
    "$tmp/fullprove" "$tmp/bad-input.json" "$data/bn128/mulchain/mulchain.wasm" "$data/bn128/mulchain/mulchain.zkey" \
        "$tmp/x.json" "$tmp/y.json" > "$tmp/ex-bad.log" 2>&1
    rc=$?
    [ $rc = 1 ] && [ "$(wc -l < "$tmp/ex-bad.log")" = 1 ] || { cat "$tmp/ex-bad.log"; bad "bad input: exit $rc"; }
    echo "example, bad input: $(cat "$tmp/ex-bad.log")"
else
    bad "docs/library.md's example does not build"
fi
exit $fail
