#!/bin/bash
# A generator build that runs out of memory or disk (issue 19, "bad input at scale"): `zkpipe
# witness` exits 1 with one line naming the wasm and what was missing, and the cache keeps no
# half-built entry (no object, no build folder), so the next build with room gives the right witness.
#   memory: wasm2c under a 30 MB address-space limit (a wrapper first in PATH: std::bad_alloc, then
#           SIGABRT), and the C compiler under 100 MB ($CC, a wrapper: cc1 "out of memory");
#   disk:   the cache on a 256 KiB tmpfs (root only; skipped elsewhere).
set -u
zkpipe=${ZKPIPE_BUILD_ROOT:?}/cli/zkpipe
data=${ZKPIPE_SOURCE_ROOT:?}/tests/data/bn128
tmp=$(mktemp -d)
cleanup() {
    mountpoint -q "$tmp/small" 2>/dev/null && umount "$tmp/small"
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
    echo "FAIL $*"
    exit 1
}
w2c=$(command -v wasm2c) || { echo "SKIP: no wasm2c"; exit 77; }
mkdir "$tmp/bin"
cat >"$tmp/bin/wasm2c" <<EOF
#!/bin/sh
ulimit -v 30000
exec $w2c "\$@"
EOF
cat >"$tmp/cc" <<'EOF'
#!/bin/sh
ulimit -v 100000
exec cc "$@"
EOF
chmod +x "$tmp/bin/wasm2c" "$tmp/cc"

# no_entry CACHE: nothing of a build is left in CACHE but the lock files
no_entry() {
    local left
    left=$(ls -A "$1" | grep -v '\.so\.lock$')
    [ -z "$left" ] || fail "$2: the cache keeps $left"
}

# refused NAME WANT ENV...: zkpipe witness of circuit NAME fails with one line matching WANT
refused() {
    local name=$1 want=$2 rc=0
    shift 2
    env "$@" "$zkpipe" witness --cache "$cache" "$data/$name/$name.wasm" "$data/$name/input-1.json" "$tmp/out.wtns" \
        >/dev/null 2>"$tmp/err" || rc=$?
    [ $rc = 1 ] || fail "$name ($*): exit $rc, not 1: $(cat "$tmp/err")"
    [ "$(wc -l <"$tmp/err")" = 1 ] || fail "$name ($*): not one line: $(cat "$tmp/err")"
    grep -q "$want" "$tmp/err" || fail "$name ($*): wanted '$want', got: $(cat "$tmp/err")"
    echo "ok   $(cat "$tmp/err")"
}

# then_builds NAME: with room, the same cache builds it and the witness is the fixture's
then_builds() {
    "$zkpipe" witness --cache "$cache" "$data/$1/$1.wasm" "$data/$1/input-1.json" "$tmp/out.wtns" >/dev/null ||
        fail "$1: no witness once there was room"
    cmp -s "$tmp/out.wtns" "$data/$1/witness-1.wtns" || fail "$1: the witness differs from the fixture's"
}

cache=$tmp/c1
refused poseidon "poseidon.wasm: out of memory building the generator: wasm2c killed by signal 6 (Aborted): .*bad_alloc" \
    PATH="$tmp/bin:$PATH"
no_entry "$cache" "wasm2c out of memory"
then_builds poseidon

cache=$tmp/c2
refused mulchain "mulchain.wasm: out of memory building the generator: $tmp/cc exited with status 1: .*memory" CC="$tmp/cc"
no_entry "$cache" "cc out of memory"
then_builds mulchain

mkdir "$tmp/small"
if mount -t tmpfs -o size=256k zkpipe-test "$tmp/small" 2>/dev/null; then
    cache=$tmp/small/cache
    refused mulchain "no space left on the cache's file system .*mulchain.wasm"
    no_entry "$cache" "disk full"
    mount -o remount,size=64m "$tmp/small" || fail "cannot grow the tmpfs"
    then_builds mulchain
else
    echo "skip the full disk: cannot mount a tmpfs (not root?)"
fi
echo "PASS: builds out of memory or disk failed with one line naming the wasm and left no entry"
