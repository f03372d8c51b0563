#!/bin/bash
# Finding 3 of issue 25: an input.json with bytes that are not UTF-8 fails that one job (its reason
# written back escaped) and feeding goes on: the next job is claimed and proved, and the feeder does
# not reconnect in a loop.
. "$(dirname "$0")/lib.sh"
pg_start
"$ZKPIPE" db init --dsn "$DSN" >/dev/null || fail "db init"
L=$DATA/bls12381/mulchain
box_config A "wasm = $L/mulchain.wasm" "[pipeline]" "cache = $T/cache"
box_start A
# the bytes in a signal's name: errors name the signal (never its value, docs/witgen.md)
printf '{"a":"3","b":"1","\xff\xfe":"1"}' >"$T/bad.json"
out=$("$ZKPIPE" submit --dsn "$DSN" --circuit mulchain381 --input "$T/bad.json" 2>&1) || fail "submit --dsn --input: $out"
BAD=$(echo "$out" | tail -n 1)
wait_for 60 "the bad job to end" all_final
G=$(db_submit mulchain NORMAL "$DATA/bn128/mulchain/witness-1.wtns")
wait_for 60 "the next job to end" all_final
st=$(psql_q "SELECT state FROM zkpipe_jobs WHERE id = '$BAD'")
[ "$st" = failed ] || fail "the bad job is $st"
psql_q "SELECT error FROM zkpipe_jobs WHERE id = '$BAD'" | grep -q '\\xFF\\xFE' ||
    fail "the reason does not carry the escaped bytes: $(psql_q "SELECT error FROM zkpipe_jobs WHERE id = '$BAD'")"
db_verify "$G" mulchain
n=$(grep -c "lost the connection" "$T/logs/A-feeder.log")
[ "$n" -le 1 ] || fail "the feeder reconnected $n times"
log "PASS: the bad job failed with its reason escaped, the next one proved"
