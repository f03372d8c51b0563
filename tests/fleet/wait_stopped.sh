#!/bin/bash
# Finding 9 of issue 25: zkpipe wait --dsn --timeout T returns within T (and a little) while the
# database is stopped (SIGSTOP of the server and its backends): with a query in flight, and when
# the connection itself cannot complete.
. "$(dirname "$0")/lib.sh"
pg_start
"$ZKPIPE" db init --dsn "$DSN" >/dev/null || fail "db init"
J=$(db_submit mulchain NORMAL "$DATA/bn128/mulchain/witness-1.wtns") # no box: it stays queued
trap 'pg_signal CONT 2>/dev/null; fleet_cleanup' EXIT
timed_wait() { # timed_wait T: the wait's exit code and seconds into $T/rc
    local t0 rc=0
    t0=$(date +%s%N)
    timeout 40 "$ZKPIPE" wait --dsn "$DSN" --timeout "$1" "$J" >"$T/w.out" 2>"$T/w.err" || rc=$?
    echo "$rc $((($(date +%s%N) - t0) / 1000000))" >"$T/rc"
}
# a query in flight: the wait polls once a second; the server stops 1.5 s in
timed_wait 4 &
W=$!
sleep 1.5
pg_signal STOP
wait $W
read -r rc ms <"$T/rc"
[ "$rc" = 1 ] && [ "$ms" -lt 6500 ] ||
    fail "wait --timeout 4 with the server stopped mid-wait: exit $rc after $ms ms: $(cat "$T/w.err")"
grep -q "job $J: still" "$T/w.err" || fail "wait did not say the job is unfinished: $(cat "$T/w.err")"
# the server already stopped: the connection cannot complete
timed_wait 2
read -r rc ms <"$T/rc"
[ "$rc" = 1 ] && [ "$ms" -lt 4500 ] || fail "wait --timeout 2 on a stopped server: exit $rc after $ms ms: $(cat "$T/w.err")"
pg_signal CONT
"$ZKPIPE" wait --dsn "$DSN" --timeout 5 "$J" >"$T/w.out" 2>"$T/w.err" && fail "a queued job's wait exited 0"
grep -q "still queued" "$T/w.err" || fail "after SIGCONT: $(cat "$T/w.err")"
log "PASS: wait returned on time with the server stopped"
