#!/bin/bash
# The fence: box A's feeder is frozen (SIGSTOP) while its job is proved; its lease lapses and box B
# claims the job (generation 2) and finishes it. A's local copy ends done with valid proofs of its
# own, but when A's feeder wakes its write-back (generation 1) is refused: B's results and the job's
# state stay as B wrote them, nothing is duplicated, and A retires its copy.
. "$(dirname "$0")/lib.sh"
pg_start
"$ZKPIPE" db init --dsn "$DSN" >/dev/null || fail "db init"
box_config A
box_config B
box_start A all ZKPIPE_TEST_DELAY=gpu.mid_prove:400
M=$DATA/bn128/mulchain
J=$(db_submit mulchain NORMAL "$M/witness-1.wtns" "$M/witness-2.wtns")
a_has() { [ -n "$(ls -A "$T/A/spool/active")" ]; }
wait_for 30 "box A to take the job in" a_has
kill -STOP "${PIDS[A-feeder]}"
a_done() { [ -n "$(ls -A "$T/A/spool/done")" ]; }
wait_for 30 "box A's local copy to finish" a_done
box_start B
b_done() { [ "$(psql_q "SELECT state || lease_owner || lease_gen FROM zkpipe_jobs WHERE id = '$J'")" = doneB2 ]; }
wait_for 60 "box B to finish the job after A's lease lapsed" b_done
snap() { psql_q "SELECT state || lease_owner || lease_gen || coalesce(error, '') FROM zkpipe_jobs WHERE id = '$J';
                 SELECT idx || md5(proof) || md5(public) || box FROM zkpipe_partitions WHERE job = '$J' ORDER BY idx"; }
before=$(snap)
[ -n "$(ls -A "$T/A/spool/done")" ] || fail "box A's local copy is gone before its feeder woke"
kill -CONT "${PIDS[A-feeder]}"
a_retired() { [ -z "$(find "$T/A/spool/done" "$T/A/spool/fleet" -mindepth 1)" ]; }
wait_for 30 "box A to retire its copy" a_retired
grep -q "job $J: the lease of generation 1 was lost; its result is not written (fenced)" "$T/logs/A-feeder.log" ||
    fail "box A's feeder did not report the fenced write-back: $(tail -n 5 "$T/logs/A-feeder.log")"
[ "$(snap)" = "$before" ] || fail "box A's stale write-back changed the job: $(snap)"
grep -q "job $J .*written back" "$T/logs/A-feeder.log" && fail "box A claims to have written the job back"
db_verify "$J" mulchain
log "PASS: the stale write-back of generation 1 was refused; B's results stand"
