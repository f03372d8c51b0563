#!/bin/bash
# A box that holds a job and is only late renewing it does not count against the job: the
# database is stopped (SIGSTOP of the server and its backends) for longer than the lease, three
# times, while the box's only job is in the middle of its proof; with max_attempts = 1 every lapse
# the box itself counted would fail the job ("its lease lapsed 1 times") or claim it anew. The
# feeder renews what it holds (no other box claimed it: the same generation) and never claims or
# gives up a job it holds: the job ends done, generation 1, attempts 1.
LEASE=2
. "$(dirname "$0")/lib.sh"
pg_start
"$ZKPIPE" db init --dsn "$DSN" >/dev/null || fail "db init"
box_config A "[source postgres]" "max_attempts = 1"
M=$DATA/bn128/mulchain
trap 'pg_signal CONT 2>/dev/null; fleet_cleanup' EXIT
job=$(db_submit mulchain NORMAL "$M/witness-1.wtns")
box_start A all ZKPIPE_TEST_DELAY=gpu.mid_prove:14000 # the proof takes 14 s
in_gpu() { [ -n "$(ls -A "$T/A/spool/active" 2>/dev/null)" ]; }
wait_for 60 "box A to take the job in" in_gpu
for i in 1 2 3; do
    sleep 0.7
    pg_signal STOP
    sleep 3 # longer than the 2 s lease
    pg_signal CONT
done
wait_for 60 "the job to end" all_final
row=$(psql_q "SELECT state || ' ' || lease_gen || ' ' || attempts FROM zkpipe_jobs WHERE id = '$job'")
[ "$row" = "done 1 1" ] ||
    fail "the job: '$row' (state generation attempts), expected 'done 1 1': $(psql_q "SELECT error FROM zkpipe_jobs WHERE id = '$job'")"
db_verify "$job" mulchain
log "PASS: three database stops longer than the lease cost the job held by a live box nothing ($row)"
