#!/bin/bash
# libpq is loaded by the first database connection, not at start (fleet/pq_lazy.c): zkpipe and
# zkpipe-feeder do not list it as a needed library, a one-shot `zkpipe verify` never maps it, a
# --dsn command maps it and gets libpq's own connection error, and a libpq that cannot be loaded
# is one line naming it (exit 1), not a crash.
. "$(dirname "$0")/lib.sh"
for b in "$ZKPIPE" "$FEEDER"; do
    readelf -d "$b" | grep -q 'NEEDED.*libpq' && fail "$b links libpq at start"
done
M=$DATA/bn128/mulchain
LD_DEBUG=files "$ZKPIPE" verify "$M/vk.json" "$M/public-1.json" "$M/proof-1.json" >"$T/verify.out" 2>"$T/ld.log" ||
    fail "zkpipe verify: $(cat "$T/verify.out")"
grep -q 'file=libpq' "$T/ld.log" && fail "zkpipe verify loaded libpq"
LD_DEBUG=files "$ZKPIPE" status --dsn "host=$T/nosuchdir port=1 dbname=x" >"$T/status.out" 2>"$T/ld2.log" &&
    fail "status --dsn against no server exited 0"
grep -q 'file=libpq.so.5' "$T/ld2.log" || fail "status --dsn did not load libpq"
grep -q "cannot connect to the database" "$T/ld2.log" || fail "status --dsn: $(grep -v '^ *[0-9]*:' "$T/ld2.log")"
mkdir -p "$T/badlib"
echo "not a library" >"$T/badlib/libpq.so.5"
out=$(LD_LIBRARY_PATH=$T/badlib "$ZKPIPE" status --dsn "host=$T/nosuchdir" 2>&1) && fail "a broken libpq: exit 0"
[ "$(echo "$out" | wc -l)" = 1 ] || fail "a broken libpq: more than one line: $out"
echo "$out" | grep -q "cannot load libpq.so.5 (Debian package libpq5): .*badlib/libpq.so.5" ||
    fail "a broken libpq: $out"
log "PASS: libpq is loaded on the first connection only; a broken one is one line: $out"
