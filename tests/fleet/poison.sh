#!/bin/bash
# A job that kills every box it lands on is not handed from box to box forever: with
# max_attempts = 2, box A and then box B are killed (kill -9) while proving it; when its second
# lease lapses, box C fails it with the reason (lease lapsed 2 times, the last box named) instead of
# claiming it a third time, and proves the next job. Old behaviour: C claimed it again (attempts 3).
. "$(dirname "$0")/lib.sh"
pg_start
"$ZKPIPE" db init --dsn "$DSN" >/dev/null || fail "db init"
for b in A B C; do box_config "$b" "[source postgres]" "max_attempts = 2"; done
M=$DATA/bn128/mulchain
job=$(db_submit mulchain NORMAL "$M/witness-1.wtns")
held_by() { [ "$(psql_q "SELECT lease_owner || ' ' || state FROM zkpipe_jobs WHERE id = '$job'")" = "$1 leased" ]; }
for b in A B; do
    box_start "$b" all ZKPIPE_TEST_DELAY=gpu.mid_prove:60000 # it hangs in the middle of the proof
    wait_for 60 "box $b to claim the job" held_by "$b"
    in_gpu() { [ -n "$(ls -A "$T/$b/spool/active")" ]; }
    wait_for 30 "box $b to take the job in" in_gpu
    sleep 0.5
    box_kill9 "$b"
    log "box $b killed holding the job (attempts $(psql_q "SELECT attempts FROM zkpipe_jobs WHERE id = '$job'"))"
done
box_start C
good=$(db_submit mulchain NORMAL "$M/witness-2.wtns")
wait_for 120 "every job to end" all_final
row=$(psql_q "SELECT state || ' ' || attempts || ' ' || lease_owner FROM zkpipe_jobs WHERE id = '$job'")
[ "$row" = "failed 2 B" ] || fail "the poison job: '$row' (state attempts owner), expected 'failed 2 B': it was claimed again"
why=$(psql_q "SELECT error FROM zkpipe_jobs WHERE id = '$job'")
case $why in
*"lease lapsed 2 times, the last on box B"*"max_attempts = 2"*) ;;
*) fail "the poison job's reason: '$why'" ;;
esac
[ "$(psql_q "SELECT count(*) FROM zkpipe_partitions WHERE job = '$job' AND proof IS NOT NULL")" = 0 ] ||
    fail "the failed job has proofs"
grep -q "job $job failed: its lease lapsed 2 times" "$T/logs/C-feeder.log" || fail "box C's feeder did not log the give-up"
out=$("$ZKPIPE" wait --dsn "$DSN" --timeout 10 "$job" 2>&1) && fail "zkpipe wait on the failed job exited 0: $out"
echo "$out" | grep -q "lease lapsed" || fail "zkpipe wait does not give the reason: $out"
[ "$(psql_q "SELECT state || ' ' || lease_owner FROM zkpipe_jobs WHERE id = '$good'")" = "done C" ] ||
    fail "the next job: $(psql_q "SELECT state, lease_owner, error FROM zkpipe_jobs WHERE id = '$good'")"
db_verify "$good" mulchain
log "PASS: the job that killed boxes A and B failed on its second lapse ($why); C proved the next job"
