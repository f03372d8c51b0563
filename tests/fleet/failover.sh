#!/bin/bash
# kill -9 of every process of box A in the middle of its jobs: after the lease time box B claims them
# (generation 2) and finishes every job; restarting A afterwards writes nothing over B's results
# (its late write-back is refused by the lease generation: the fence), and its local copies are
# retired.
. "$(dirname "$0")/lib.sh"
pg_start
"$ZKPIPE" db init --dsn "$DSN" >/dev/null || fail "db init"
box_config A
box_config B
box_start A all ZKPIPE_TEST_DELAY=gpu.mid_prove:700
M=$DATA/bn128/mulchain
P=$DATA/bn128/poseidon
N=6
for ((i = 0; i < N; i++)); do db_submit mulchain NORMAL "$M/witness-1.wtns" "$M/witness-2.wtns" >/dev/null; done
db_submit poseidon NORMAL "$P/witness-1.wtns" >/dev/null
N=$((N + 1))
a_active() { [ -n "$(ls -A "$T/A/spool/active")" ] && [ "$(psql_q "SELECT count(*) FROM zkpipe_jobs WHERE lease_owner = 'A' AND state = 'leased'")" -ge 2 ]; }
wait_for 60 "box A to be proving leased jobs" a_active
sleep 0.3
box_kill9 A
held=$(psql_q "SELECT id FROM zkpipe_jobs WHERE lease_owner = 'A' AND state = 'leased' ORDER BY id")
[ -n "$held" ] || fail "box A held no lease when it was killed"
log "killed box A holding $(echo "$held" | wc -l) leases; starting box B"
t0=$SECONDS
box_start B
wait_for 120 "every job to end on box B" all_final
[ "$(jobs_in done)" = "$N" ] || fail "not every job is done: $(psql_q "SELECT id, state, error FROM zkpipe_jobs WHERE state <> 'done'")"
for j in $held; do
    [ "$(psql_q "SELECT lease_owner || ' ' || lease_gen || ' ' || attempts FROM zkpipe_jobs WHERE id = '$j'")" = "B 2 2" ] ||
        fail "job $j (A's): $(psql_q "SELECT lease_owner, lease_gen, attempts FROM zkpipe_jobs WHERE id = '$j'"), expected B's, generation 2"
    [ "$(psql_q "SELECT count(*) FROM zkpipe_partitions WHERE job = '$j' AND box = 'B' AND proof IS NOT NULL")" = 2 ] ||
        fail "job $j: its partitions were not proved by B"
done
[ $((SECONDS - t0)) -ge $((LEASE - 1)) ] || fail "B took A's jobs before their leases lapsed"
snap() { psql_q "SELECT job || idx || md5(proof) || box FROM zkpipe_partitions ORDER BY job, idx"; }
before=$(snap)
# A comes back with its stale local copies: they end locally, and the fence refuses their results
[ -n "$(ls -A "$T/A/spool/fleet")" ] || fail "box A has no record of its fleet jobs"
box_start A
a_retired() { [ -z "$(find "$T/A/spool/fleet" "$T/A/spool/active" "$T/A/spool/incoming" "$T/A/spool/done" "$T/A/spool/failed" -mindepth 1)" ]; }
wait_for 60 "box A to retire its stale copies" a_retired
grep -q "fenced" "$T/logs/A-feeder.log" || fail "box A's feeder did not report a fenced write-back"
[ "$(snap)" = "$before" ] || fail "box A's late write-back changed the results"
[ "$(jobs_in done)" = "$N" ] || fail "box A's late write-back changed a job's state: $(psql_q "SELECT id, state FROM zkpipe_jobs")"
for j in $held; do db_verify "$j" mulchain; done
log "PASS: A's $(echo "$held" | wc -l) jobs finished on B after the lease; A's late results fenced off"
