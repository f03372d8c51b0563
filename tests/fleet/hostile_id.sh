#!/bin/bash
# Finding 1 of issue 25: a queue row's id is checked before anything uses it as a path. Rows whose
# ids climb out of the spool (../../victim.txt: SPOOL/fleet/ID would be the box's own file) or are
# longer than any spool id fail with the reason; the file stays as it was, no row stays leased, and
# the box proves the next job.
. "$(dirname "$0")/lib.sh"
pg_start
"$ZKPIPE" db init --dsn "$DSN" >/dev/null || fail "db init"
box_config A
echo precious >"$T/A/victim.txt" # SPOOL/fleet/../../victim.txt
LONG=$(printf 'x%.0s' {1..60})
psql_q "INSERT INTO zkpipe_jobs (id, circuit, n_parts) VALUES ('../../victim.txt', 'mulchain', 1), ('$LONG', 'mulchain', 1);
        INSERT INTO zkpipe_partitions (job, idx, input) VALUES ('../../victim.txt', 0, '\x00'), ('$LONG', 0, '\x00')" \
    >/dev/null || fail "plain INSERTs failed"
box_start A
G=$(db_submit mulchain NORMAL "$DATA/bn128/mulchain/witness-1.wtns")
wait_for 120 "every job to end" all_final
[ "$(cat "$T/A/victim.txt")" = precious ] || fail "the feeder wrote through the row's id: victim.txt is now '$(cat "$T/A/victim.txt")'"
for j in ../../victim.txt "$LONG"; do
    psql_q "SELECT state || ': ' || coalesce(error, '') FROM zkpipe_jobs WHERE id = '$j'" | grep -q "^failed: .*not a spool id" ||
        fail "row '$j': $(psql_q "SELECT state || ': ' || coalesce(error, '') FROM zkpipe_jobs WHERE id = '$j'")"
done
db_verify "$G" mulchain
log "PASS: hostile ids failed with the reason, nothing written outside the spool"
