#!/bin/bash
# Finding 7 of issue 25: a fleet job of 11 or more partitions works (its partitions are taken in
# index order, 0..11, not in the order of their text: 0, 1, 10, 11, 2 …).
. "$(dirname "$0")/lib.sh"
pg_start
"$ZKPIPE" db init --dsn "$DSN" >/dev/null || fail "db init"
box_config A
box_start A
W=()
for k in $(seq 0 11); do W+=("$DATA/bn128/mulchain/witness-$((k % 2 + 1)).wtns"); done
J=$(db_submit mulchain NORMAL "${W[@]}")
wait_for 240 "the 12-partition job to end" all_final
st=$(psql_q "SELECT state || ': ' || coalesce(error, '') FROM zkpipe_jobs WHERE id = '$J'")
[ "$st" = "done: " ] || fail "the 12-partition job: $st"
db_verify "$J" mulchain
for k in $(seq 0 11); do # partition k was witness-(k%2+1): its public signals are that fixture's
    cmp -s <(tr -d ' \n' <"$T/out/$J/public-$k.json") <(tr -d ' \n' <"$DATA/bn128/mulchain/public-$((k % 2 + 1)).json") ||
        fail "partition $k was proved from another partition's input"
done
log "PASS: 12 partitions in order"
