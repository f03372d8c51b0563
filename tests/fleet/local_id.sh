#!/bin/bash
# Finding 2 of issue 25: a queue row whose id is a local job's id (zkpipe status and the exporter
# show local ids) never adopts that job: the row fails with the reason, the local job's done/ folder
# and its proof stay, and the row carries no proof.
. "$(dirname "$0")/lib.sh"
pg_start
"$ZKPIPE" db init --dsn "$DSN" >/dev/null || fail "db init"
box_config A
box_start A
CONF=$T/A/zkpipe.ini
L=$(submit mulchain NORMAL "$DATA/bn128/mulchain/witness-1.wtns")
wait_job "$L" 120 || fail "local job $L: $(cat "$T/wait-$L.err")"
cp "$T/A/spool/done/$L/proof-0.json" "$T/local-proof.json"
HEX=$(od -An -v -tx1 "$DATA/bn128/poseidon/witness-1.wtns" | tr -d ' \n')
psql_q "INSERT INTO zkpipe_jobs (id, circuit, n_parts) VALUES ('$L', 'poseidon', 1);
        INSERT INTO zkpipe_partitions (job, idx, input) VALUES ('$L', 0, decode('$HEX', 'hex'))" >/dev/null ||
    fail "plain INSERT failed"
wait_for 60 "the row to end" all_final
st=$(psql_q "SELECT state || ': ' || coalesce(error, '') FROM zkpipe_jobs WHERE id = '$L'")
echo "$st" | grep -q "^failed: .*local job" || fail "the row with a local job's id: '$st'"
[ "$(psql_q "SELECT count(*) FROM zkpipe_partitions WHERE job = '$L' AND proof IS NOT NULL")" = 0 ] ||
    fail "the row got a proof (the local job's)"
cmp -s "$T/A/spool/done/$L/proof-0.json" "$T/local-proof.json" || fail "the local job's done/$L was taken or removed"
"$ZKPIPE" verify "$(vk_of mulchain)" "$T/A/spool/done/$L/public-0.json" "$T/A/spool/done/$L/proof-0.json" >/dev/null ||
    fail "the local proof does not verify any more"
log "PASS: the row failed, the local job kept"
