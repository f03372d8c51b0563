#!/bin/sh
# The compile cache is trusted only when nobody else can change it (issue 25, finding 5): a cache
# directory writable by group or others, a symbolic link to one, a cached object writable by others
# or owned by another user: refused with one line, and a planted object's constructor never runs
# (the check comes before dlopen). With HOME unset the CLI never falls back to a shared /tmp folder.
set -u
zkpipe=${ZKPIPE_BUILD_ROOT:?}/cli/zkpipe
data=${ZKPIPE_SOURCE_ROOT:?}/tests/data/bn128/mulchain
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
wasm=$data/mulchain.wasm
in=$data/input-1.json
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

# a good build tells the object's name
mkdir -m 0700 "$tmp/good"
"$zkpipe" witness --cache "$tmp/good" "$wasm" "$in" "$tmp/ok.wtns" >/dev/null || bad "a private cache: $?"
cmp -s "$tmp/ok.wtns" "$data/witness-1.wtns" || bad "the witness from a private cache differs"
so=$(cd "$tmp/good" && ls ./*.so | head -1)
[ -n "$so" ] || { echo "FAIL no object built"; exit 1; }

# the planted object: a constructor that leaves a mark, and a well-formed trailer for this wasm
cat >"$tmp/plant.c" <<C
#include <stdio.h>
__attribute__((constructor)) static void planted(void) { FILE *f = fopen("$tmp/ran", "w"); if (f) fclose(f); }
C
cc -shared -fPIC -o "$tmp/plant.so" "$tmp/plant.c" || exit 1
python3 - "$wasm" "$tmp/plant.so" <<'PY' || exit 1
import hashlib, struct, sys
w = hashlib.sha256(open(sys.argv[1], "rb").read()).digest()
so = open(sys.argv[2], "rb").read()
open(sys.argv[2], "wb").write(so + b"ZKWITGEN" + struct.pack("<II", 3, 0) + w + hashlib.sha256(so).digest() + struct.pack("<Q", len(so)))
PY
plant() { # DIR MODE
    rm -f "$1/$so"
    cp "$tmp/plant.so" "$1/$so" && chmod "$2" "$1/$so"
}
expect_refused() { # NAME CACHE TEXT
    rm -f "$tmp/ran" "$tmp/out.wtns"
    "$zkpipe" witness --cache "$2" "$wasm" "$in" "$tmp/out.wtns" >/dev/null 2>"$tmp/err"
    st=$?
    if [ -e "$tmp/ran" ]; then
        bad "$1: the planted object's constructor ran (status $st: $(cat "$tmp/err"))"
    elif [ $st -ne 1 ] || ! grep -q -- "$3" "$tmp/err" || [ "$(wc -l <"$tmp/err")" -ne 1 ] || [ -e "$tmp/out.wtns" ]; then
        bad "$1: status $st, wanted 1 and one line with '$3'; got: $(cat "$tmp/err")"
    else
        echo "ok   $1: $(cat "$tmp/err")"
    fi
}

mkdir "$tmp/open" && chmod 0777 "$tmp/open" && plant "$tmp/open" 0644
expect_refused "cache directory mode 0777" "$tmp/open" "writable by others"
mkdir "$tmp/grp" && chmod 0775 "$tmp/grp" && plant "$tmp/grp" 0644
expect_refused "cache directory mode 0775" "$tmp/grp" "writable by the group"
ln -s "$tmp/open" "$tmp/link"
expect_refused "cache a symbolic link" "$tmp/link" "symbolic link"
mkdir -m 0755 "$tmp/wobj" && plant "$tmp/wobj" 0666
expect_refused "cached object mode 0666" "$tmp/wobj" "cached object is writable by others"
mkdir -m 0777 "$tmp/above" && mkdir -m 0755 "$tmp/above/c" && plant "$tmp/above/c" 0644
expect_refused "cache below a directory others can write" "$tmp/above/c" "which is writable by others"

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
    mkdir -m 0755 "$tmp/theirs" && plant "$tmp/theirs" 0644 && chown nobody "$tmp/theirs/$so"
    expect_refused "cached object owned by another user" "$tmp/theirs" "owned by uid"
    mkdir -m 0755 "$tmp/theirdir" && chown nobody "$tmp/theirdir"
    expect_refused "cache directory owned by another user" "$tmp/theirdir" "owned by uid"
    # HOME unset: the old code built into /tmp/.cache/zkpipe, a folder any user can create first
    shared=/tmp/.cache/zkpipe
    before=$(ls -A "$shared" 2>/dev/null | wc -l)
    mkdir -m 0777 "$tmp/out"
    env -u HOME -u XDG_CACHE_HOME -u ZKPIPE_CACHE -u XDG_RUNTIME_DIR setpriv --reuid=nobody --regid=nogroup --clear-groups \
        "$zkpipe" witness "$wasm" "$in" "$tmp/out/x.wtns" >/dev/null 2>"$tmp/err"
    st=$?
    after=$(ls -A "$shared" 2>/dev/null | wc -l)
    if [ "$after" != "$before" ]; then
        bad "HOME unset: built into the shared $shared (status $st)"
    elif [ $st -eq 0 ] && ! grep -q nonexistent /etc/passwd; then
        echo "ok   HOME unset: built in nobody's home"
    elif [ $st -ne 1 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
        bad "HOME unset: status $st: $(cat "$tmp/err")"
    else
        echo "ok   HOME unset: $(cat "$tmp/err")"
    fi
else
    echo "skip the other-user cases (need root, setpriv and the user nobody)"
fi
[ $fail -eq 0 ] || { echo "$fail failed"; exit 1; }
echo "all passed"
