#!/bin/bash
# Finding 11 of issue 25 (the fleet's part): `submit --dsn --input` refuses an input.json larger than
# every box refuses (the spool's cap); the feeder compares a job's input sizes before it fetches
# them, so a job of three 30 MB inputs fails with the reason while the feeder's memory stays small,
# and the next job proves.
. "$(dirname "$0")/lib.sh"
pg_start
"$ZKPIPE" db init --dsn "$DSN" >/dev/null || fail "db init"
head -c $(((64 << 20) + 1)) /dev/zero | tr '\0' ' ' >"$T/big.json"
out=$("$ZKPIPE" submit --dsn "$DSN" --circuit mulchain --input "$T/big.json" 2>&1) &&
    fail "submit --dsn --input of 64 MiB + 1 accepted: $out"
echo "$out" | grep -q "big.json: .*more than" || fail "submit --dsn --input of 64 MiB + 1: $out"
[ "$(psql_q "SELECT count(*) FROM zkpipe_jobs")" = 0 ] || fail "the refused input is in the queue"
# the last section of box_config's circuits is mulchain381: a generator that fails, so its input jobs
# are taken in (and then fail in synthd)
box_config A "witness_cmd = /bin/false"
box_start A
box_up() { [ "$(psql_q "SELECT count(*) FROM zkpipe_boxes")" = 1 ]; }
wait_for 30 "the feeder's heartbeat" box_up
hwm() { awk '/^VmHWM/ {print $2}' "/proc/${PIDS[A-feeder]}/status"; }
before=$(hwm)
psql_q "INSERT INTO zkpipe_jobs (id, circuit, n_parts) VALUES ('huge-3', 'mulchain', 3);
        INSERT INTO zkpipe_partitions (job, idx, input)
        SELECT 'huge-3', k, convert_to(repeat('x', 30000000), 'UTF8') FROM generate_series(0, 2) k" >/dev/null ||
    fail "INSERT of the huge job"
wait_for 60 "the huge job to end" all_final
after=$(hwm)
psql_q "SELECT state || ': ' || coalesce(error, '') FROM zkpipe_jobs WHERE id = 'huge-3'" |
    grep -q "^failed: .*30000000 bytes, more than the .* an input of this circuit can be" ||
    fail "the huge job: $(psql_q "SELECT state || ': ' || coalesce(error, '') FROM zkpipe_jobs WHERE id = 'huge-3'")"
[ $((after - before)) -lt 20000 ] || fail "the feeder's peak RSS grew by $(((after - before) / 1024)) MiB for a refused job"
# inputs within the cap are fetched one at a time: three of 24 MB cost the feeder about one
# (libpq's buffer and its result: ~2 x 24 MB), not all three at once (~6 x 24 MB before)
before=$(hwm)
psql_q "INSERT INTO zkpipe_jobs (id, circuit, n_parts, inputs) VALUES ('big-3', 'mulchain381', 3, true);
        INSERT INTO zkpipe_partitions (job, idx, input)
        SELECT 'big-3', k, convert_to(repeat(' ', 24000000) || '{}', 'UTF8') FROM generate_series(0, 2) k" >/dev/null ||
    fail "INSERT of the big job"
wait_for 60 "the big job to end" all_final
after=$(hwm)
grep -q "job big-3 (mulchain381, 3 partitions, generation 1) claimed into the spool" "$T/logs/A-feeder.log" ||
    fail "the big job was not taken in: $(psql_q "SELECT state || ': ' || coalesce(error, '') FROM zkpipe_jobs WHERE id = 'big-3'")"
[ $((after - before)) -lt 70000 ] ||
    fail "the feeder's peak RSS grew by $(((after - before) / 1024)) MiB for three inputs of 24 MB: it held them at once"
log "three inputs of 24 MB taken in one at a time (peak RSS +$(((after - before) / 1024)) MiB)"
G=$(db_submit mulchain NORMAL "$DATA/bn128/mulchain/witness-1.wtns")
db_verify "$G" mulchain
log "PASS: oversized inputs refused before they were fetched (peak RSS +$(((after - before) / 1024)) MiB)"
