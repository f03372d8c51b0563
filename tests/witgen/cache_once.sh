#!/bin/sh
# Two processes that need the same generator on an empty cache build it once (docs/witgen.md: the
# builder holds flock on <object>.lock, the other waits and loads that build): of two concurrent
# `zkpipe witgen build`, one says "built" and the other "cached", and the object works.
set -u
zkpipe=${ZKPIPE_BUILD_ROOT:?}/cli/zkpipe
data=${ZKPIPE_SOURCE_ROOT:?}/tests/data/bn128/mulchain
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/spool"
cat >"$tmp/z.ini" <<INI
[pipeline]
name = once-$$
spool = $tmp/spool
cache = $tmp/cache
[circuit mulchain]
zkey = $data/mulchain.zkey
wasm = $data/mulchain.wasm
INI
"$zkpipe" witgen build --config "$tmp/z.ini" mulchain >"$tmp/a" 2>&1 &
a=$!
"$zkpipe" witgen build --config "$tmp/z.ini" mulchain >"$tmp/b" 2>&1 &
b=$!
wait $a; ra=$?
wait $b; rb=$?
[ $ra = 0 ] && [ $rb = 0 ] || { echo "FAIL witgen build: $ra $rb: $(cat "$tmp/a" "$tmp/b")"; exit 1; }
built=$(cat "$tmp/a" "$tmp/b" | grep -c "^mulchain: built ")
cached=$(cat "$tmp/a" "$tmp/b" | grep -c "^mulchain: cached ")
[ "$built" = 1 ] && [ "$cached" = 1 ] || { echo "FAIL wanted one build and one cached: $(cat "$tmp/a" "$tmp/b")"; exit 1; }
[ "$(ls "$tmp/cache" | grep -c '\.so$')" = 1 ] || { echo "FAIL objects: $(ls -a "$tmp/cache")"; exit 1; }
ls -a "$tmp/cache" | grep -q '^\.build-' && { echo "FAIL a build folder was left: $(ls -a "$tmp/cache")"; exit 1; }
"$zkpipe" witness --cache "$tmp/cache" "$data/mulchain.wasm" "$data/input-1.json" "$tmp/w.wtns" >/dev/null &&
    cmp -s "$tmp/w.wtns" "$data/witness-1.wtns" || { echo "FAIL the shared build's witness"; exit 1; }
echo "ok   $(cat "$tmp/a" "$tmp/b" | tr '\n' ' ')"
