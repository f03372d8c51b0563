#!/bin/bash
# A box whose spool is full spends none of a job's attempts (found by bench/soak: good fleet jobs
# failed "its lease lapsed 3 times" through the soak's disk-full episodes): with max_attempts = 1
# and a 2 s lease, (a) space above min_free but not for the job's input: the feeder's claim is
# refused by the spool and the job is given back to the queue, its attempt undone; (b) space below
# min_free: the feeder claims nothing. Each job stays queued at 0 attempts through several leases,
# and once space is freed it is proved at attempts 1. Before: the claim lapsed and the job failed.
LEASE=2
. "$(dirname "$0")/lib.sh"
pg_start
"$ZKPIPE" db init --dsn "$DSN" >/dev/null || fail "db init"
box_config A "[source postgres]" "max_attempts = 1" "[pipeline]" "min_free = 1M"
mount_tmpfs "$T/A/spool" 8M
box_start A
box_up() { [ "$(psql_q "SELECT count(*) FROM zkpipe_boxes")" = 1 ]; }
wait_for 30 "the feeder's heartbeat" box_up
fill_to() { # fill_to BYTES: leave that much free on the spool's file system
    rm -f "$T/A/spool/tmp/.fill"
    local free
    free=$(df -B1 --output=avail "$T/A/spool" | tail -n 1)
    fallocate -l $((free - $1)) "$T/A/spool/tmp/.fill" || fail "fallocate"
}
M=$DATA/bn128/mulchain
row() { psql_q "SELECT state || ' ' || attempts FROM zkpipe_jobs WHERE id = '$1'"; }
# (a) 1 MiB + 8 KiB free: above min_free, below min_free + the 32 KiB witness
fill_to $(((1 << 20) + 8192))
J1=$(db_submit mulchain NORMAL "$M/witness-1.wtns")
sleep 7
[ "$(row "$J1")" = "queued 0" ] || fail "(a) the job through 3 leases with the spool full: '$(row "$J1")': $(psql_q "SELECT error FROM zkpipe_jobs WHERE id = '$J1'")"
grep -q "job $J1: not taken in: .*given back to the queue" "$T/logs/A-feeder.log" || fail "(a) the feeder did not give the job back"
# (b) 512 KiB free: below min_free
fill_to $((512 << 10))
sleep 1.5
J2=$(db_submit mulchain NORMAL "$M/witness-2.wtns")
sleep 5
[ "$(row "$J2")" = "queued 0" ] || fail "(b) the job with the spool below min_free: '$(row "$J2")'"
grep -q "less than \[pipeline\] min_free: claiming nothing until space is freed" "$T/logs/A-feeder.log" ||
    fail "(b) the feeder did not say it holds off"
rm -f "$T/A/spool/tmp/.fill"
wait_for 60 "both jobs to end" all_final
for j in "$J1" "$J2"; do
    [ "$(row "$j")" = "done 1" ] || fail "job $j after space was freed: '$(row "$j")'"
    db_verify "$j" mulchain
done
log "PASS: a full spool cost the jobs no attempt; both proved at attempts 1"
