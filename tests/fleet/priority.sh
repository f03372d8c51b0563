#!/bin/bash
# Priority across the fleet: a CRITICAL job inserted while a long NORMAL batch runs is claimed next
# by the box (which takes only what it can start soon, so most of the batch is still in the
# database) and finishes while at least 4 of the batch's jobs are still to finish.
. "$(dirname "$0")/lib.sh"
pg_start
"$ZKPIPE" db init --dsn "$DSN" >/dev/null || fail "db init"
box_config A
box_start A all ZKPIPE_TEST_DELAY=gpu.mid_prove:300
M=$DATA/bn128/mulchain
N=14
for ((i = 0; i < N; i++)); do db_submit mulchain NORMAL "$M/witness-1.wtns" >/dev/null; done
started() { [ "$(jobs_in done)" -ge 2 ]; }
wait_for 60 "the batch to start" started
queued=$(jobs_in queued)
[ "$queued" -ge 6 ] || fail "the box claimed more than it can start soon: only $queued of $N still queued"
C=$(db_submit mulchain CRITICAL "$M/witness-2.wtns")
wait_for 120 "every job to end" all_final
[ "$(jobs_in done)" = $((N + 1)) ] || fail "not every job is done"
after=$(psql_q "SELECT count(*) FROM zkpipe_jobs WHERE priority = 2 AND finished > (SELECT finished FROM zkpipe_jobs WHERE id = '$C')")
[ "$after" -ge 4 ] || fail "the CRITICAL job finished with only $after NORMAL jobs after it"
db_verify "$C" mulchain
log "PASS: the CRITICAL job finished ahead of $after NORMAL jobs ($queued were queued when it came)"
