#!/bin/bash
# The database restarted in the middle of a batch (pg_ctl restart): both feeders lose their
# connection, reconnect with back-off, and every job completes; each job is written back exactly
# once (no fenced duplicate, no job lost); a zkpipe wait --dsn started before the restart reconnects
# and returns when its job is done.
. "$(dirname "$0")/lib.sh"
pg_start
"$ZKPIPE" db init --dsn "$DSN" >/dev/null || fail "db init"
box_config A
box_config B
box_start A all ZKPIPE_TEST_DELAY=gpu.mid_prove:250
box_start B all ZKPIPE_TEST_DELAY=gpu.mid_prove:250
M=$DATA/bn128/mulchain
M3=$DATA/bls12381/mulchain
N=12
JOBS=()
for ((i = 0; i < N; i++)); do
    if ((i % 2)); then JOBS+=("$(db_submit mulchain381 NORMAL "$M3/witness-1.wtns")"); else JOBS+=("$(db_submit mulchain NORMAL "$M/witness-2.wtns")"); fi
done
some_done() { [ "$(jobs_in done)" -ge 2 ]; }
wait_for 60 "the first jobs to finish" some_done
[ "$(jobs_in done)" -lt "$N" ] || fail "the batch ended before the restart"
log "restarting the database with $(jobs_in done) of $N jobs done"
LAST=${JOBS[$((N - 1))]}
"$ZKPIPE" wait --dsn "$DSN" --timeout 120 "$LAST" >"$T/wait-last.out" 2>&1 &
WAITER=$!
sleep 0.3
pg_ctl_do restart
wait_for 120 "every job to end after the restart" all_final
[ "$(jobs_in done)" = "$N" ] || fail "not every job is done: $(psql_q "SELECT id, state, error FROM zkpipe_jobs WHERE state <> 'done'")"
wait "$WAITER" || fail "zkpipe wait --dsn across the restart: $(cat "$T/wait-last.out")"
grep -q "job $LAST done" "$T/wait-last.out" || fail "zkpipe wait --dsn: $(cat "$T/wait-last.out")"
grep -q "lost the connection to the fleet queue" "$T/logs/A-feeder.log" "$T/logs/B-feeder.log" ||
    fail "no feeder noticed the restart"
for b in A B; do
    [ "$(grep -c "connected to the fleet queue" "$T/logs/$b-feeder.log")" -ge 2 ] || fail "box $b's feeder did not reconnect"
done
written=$(cat "$T/logs/A-feeder.log" "$T/logs/B-feeder.log" | grep -c "written back")
[ "$written" = "$N" ] || fail "$written write-backs for $N jobs"
for j in "${JOBS[@]}"; do
    [ "$(grep -h "job $j .*written back" "$T/logs/A-feeder.log" "$T/logs/B-feeder.log" | wc -l)" = 1 ] ||
        fail "job $j was not written back exactly once"
done
[ "$(psql_q "SELECT count(*) FROM zkpipe_partitions WHERE proof IS NOT NULL")" = "$N" ] || fail "a proof is missing"
for ((i = 0; i < N; i++)); do
    if ((i % 2)); then db_verify "${JOBS[$i]}" mulchain381; else db_verify "${JOBS[$i]}" mulchain; fi
done
log "PASS: the database restarted mid-batch; $N jobs done, each written once"
