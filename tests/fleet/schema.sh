#!/bin/bash
# zkpipe db init: creates the schema, a second run changes nothing (same tables, same rows), a
# database at a newer schema version is refused with a clear error (and so are the feeder and the
# clients), an uninitialised database is refused by the clients; the SQL function zkpipe_submit
# queues a job that any language can submit.
. "$(dirname "$0")/lib.sh"
pg_start
out=$("$ZKPIPE" status --dsn "$DSN" 2>&1) && fail "status on an empty database succeeded: $out"
echo "$out" | grep -q "run zkpipe db init" || fail "status on an empty database: $out"
"$ZKPIPE" db init --dsn "$DSN" >"$T/init1.out" 2>&1 || fail "db init: $(cat "$T/init1.out")"
grep -q "migrated from 0" "$T/init1.out" || fail "first init: $(cat "$T/init1.out")"
schema() { psql_q "SELECT table_name || ':' || column_name || ':' || data_type FROM information_schema.columns
                   WHERE table_name LIKE 'zkpipe%' ORDER BY 1"; }
before=$(schema)
[ -n "$before" ] || fail "no zkpipe tables after init"
for t in zkpipe_jobs:lease_gen zkpipe_jobs:lease_expiry zkpipe_jobs:lease_owner zkpipe_jobs:attempts \
    zkpipe_partitions:input:bytea zkpipe_partitions:proof zkpipe_partitions:gpu_ms zkpipe_boxes:heartbeat; do
    echo "$before" | grep -q "^$t" || fail "schema lacks $t"
done
# a job through the SQL function, then init again: nothing changes, the job stays
W=$DATA/bls12381/mulchain/witness-1.wtns
HEX=$(python3 -c 'import sys; print(open(sys.argv[1], "rb").read().hex())' "$W")
J=$(psql_q "SELECT zkpipe_submit('mulchain381', 'HIGH', ARRAY[decode('$HEX', 'hex')])") || fail "zkpipe_submit from SQL"
[ "$(psql_q "SELECT count(*) FROM zkpipe_jobs WHERE id = '$J'")" = 1 ] || fail "zkpipe_submit returned '$J', no such job"
out=$(psql_q "SELECT zkpipe_submit('mulchain381', 'URGENT', ARRAY[decode('00', 'hex')])" 2>&1) &&
    fail "zkpipe_submit accepted priority URGENT"
echo "$out" | grep -q "priority must be CRITICAL, HIGH, NORMAL or LOW, not URGENT" || fail "bad priority: $out"
[ "$(psql_q "SELECT state || ' ' || priority || ' ' || n_parts FROM zkpipe_jobs WHERE id = '$J'")" = "queued 1 1" ] ||
    fail "the submitted job is not queued HIGH with 1 partition"
[ "$(psql_q "SELECT length(input) FROM zkpipe_partitions WHERE job = '$J'")" = "$(stat -c %s "$W")" ] ||
    fail "the input's bytes differ from the file's"
"$ZKPIPE" db init --dsn "$DSN" >"$T/init2.out" 2>&1 || fail "second db init: $(cat "$T/init2.out")"
grep -q "up to date" "$T/init2.out" || fail "second init: $(cat "$T/init2.out")"
[ "$(schema)" = "$before" ] || fail "the second init changed the schema"
[ "$(psql_q "SELECT count(*) FROM zkpipe_jobs")" = 1 ] || fail "the second init changed the jobs"
# the CLI's submission is the same function: id on the last line, priority and inputs stored
J2=$(db_submit poseidon LOW "$DATA/bn128/poseidon/witness-1.wtns" "$DATA/bn128/poseidon/witness-2.wtns")
[ "$(psql_q "SELECT priority || ' ' || n_parts FROM zkpipe_jobs WHERE id = '$J2'")" = "3 2" ] ||
    fail "zkpipe submit --dsn did not queue LOW with 2 partitions"
out=$("$ZKPIPE" submit --dsn "$DSN" --circuit poseidon /dev/null 2>&1) && fail "a device was accepted as an input"
echo "$out" | grep -q "/dev/null: not a regular file" || fail "bad input error: $out"
# a newer schema: init, status, submit and the feeder refuse it
psql_q "UPDATE zkpipe_schema SET version = 99" >/dev/null
out=$("$ZKPIPE" db init --dsn "$DSN" 2>&1) && fail "init accepted a newer schema"
echo "$out" | grep -q "schema version 99 is newer than this zkpipe knows (1)" || fail "init on a newer schema: $out"
out=$("$ZKPIPE" status --dsn "$DSN" 2>&1) && fail "status accepted a newer schema"
echo "$out" | grep -q "newer than this zkpipe knows" || fail "status on a newer schema: $out"
[ "$(psql_q "SELECT version FROM zkpipe_schema")" = 99 ] || fail "the refused init changed the version"
box_config A
box_start A feeder
sleep 1.5
grep -q "newer than this zkpipe knows" "$T/logs/A-feeder.log" || fail "the feeder did not refuse the newer schema"
[ "$(jobs_in queued)" = 2 ] || fail "the feeder claimed from a newer schema"
log "PASS: init idempotent, newer schema refused everywhere, zkpipe_submit from SQL"
