#!/bin/bash
# zkpipe wait --dsn rides through a stopped database until its timeout (found by bench/soak: a
# `wait --out` started while PostgreSQL was stopped gave up on its first connection): the server is
# stopped (SIGSTOP) for 7 s, longer than a connection's 5 s handshake, when the wait on a done job
# starts; the wait connects once it is continued and writes every proof, exit 0. Without a timeout
# the first connection is still tried for no more than 30 s, so a wrong DSN does not wait forever.
. "$(dirname "$0")/lib.sh"
pg_start
"$ZKPIPE" db init --dsn "$DSN" >/dev/null || fail "db init"
box_config A
box_start A
J=$(db_submit mulchain NORMAL "$DATA/bn128/mulchain/witness-1.wtns" "$DATA/bn128/mulchain/witness-2.wtns")
"$ZKPIPE" wait --dsn "$DSN" --timeout 120 "$J" >/dev/null 2>&1 || fail "the job did not end done"
box_stop A
trap 'pg_signal CONT 2>/dev/null; fleet_cleanup' EXIT
mkdir -p "$T/out"
pg_signal STOP
t0=$(date +%s%N)
"$ZKPIPE" wait --dsn "$DSN" --out "$T/out" --timeout 30 "$J" >"$T/w.out" 2>"$T/w.err" &
W=$!
sleep 7
pg_signal CONT
rc=0
wait $W || rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
[ $rc = 0 ] || fail "wait --out through a 7 s stop of the server: exit $rc after $ms ms: $(cat "$T/w.err")"
for k in 0 1; do
    "$ZKPIPE" verify "$(vk_of mulchain)" "$T/out/public-$k.json" "$T/out/proof-$k.json" >/dev/null ||
        fail "proof $k written by the wait does not verify"
done
# a DSN nothing answers, no --timeout: one line after about 30 s, not a wait for ever
t0=$(date +%s)
rc=0
timeout 60 "$ZKPIPE" wait --dsn "host=$T/nowhere port=1 user=zkpipe dbname=postgres" "$J" >/dev/null 2>"$T/w2.err" || rc=$?
s=$(($(date +%s) - t0))
[ $rc = 1 ] && [ $s -ge 25 ] && [ $s -le 40 ] && [ "$(wc -l <"$T/w2.err")" = 1 ] ||
    fail "wait on a DSN nothing answers: exit $rc after $s s: $(cat "$T/w2.err")"
log "PASS: wait --out rode through a 7 s stop of the server ($ms ms); a dead DSN gave up after $s s"
