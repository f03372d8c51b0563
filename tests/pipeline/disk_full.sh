#!/bin/bash
# A full spool delays, never loses (issue "Nothing accepted is ever lost or proven wrong", point
# 2): 25 jobs accepted on a 3 MiB tmpfs spool that then fills up; the finalizer holds the proofs
# in their slabs (zkpipe status: "disk: full"), logs the episode once, fails nothing; once space
# is freed every job completes and verifies. Submit refuses new jobs under [pipeline] min_free.
# Needs root (mount); skipped with 77 where a tmpfs cannot be mounted.
. "$(dirname "$0")/lib.sh"
M=$DATA/bn128/mulchain
mount_tmpfs "$SPOOL" 3m
write_config 4 0 "[pipeline]" "min_free = 0"
JOBS=()
for i in $(seq 25); do JOBS+=("$(submit mulchain NORMAL "$M/witness-$((i % 2 + 1)).wtns")"); done
cat /dev/zero >"$SPOOL/filler" 2>/dev/null || true # the spool is full now
[ "$(df --output=avail -B1 "$SPOOL" | tail -1)" -lt 8192 ] || fail "could not fill the spool"
start synthd1
start gpud
start finalizerd
wait_for 60 "the finalizer to hold proofs for space" sh -c "\"$ZKPIPE\" status --config \"$CONF\" | grep -q '^disk: full'"
sleep 2
"$ZKPIPE" status --config "$CONF" | grep -q "holding [1-9][0-9]* proofs for spool space" || fail "no gauge per process"
[ -z "$(ls -A "$SPOOL/failed")" ] || fail "jobs failed while the disk was full: $(ls "$SPOOL/failed")"
[ "$(grep -c 'is full' "$T/logs/finalizerd.log")" = 1 ] || fail "the episode was not logged exactly once"
alive finalizerd && alive gpud && alive synthd1 || fail "a stage died while the disk was full"
# a submission into the full spool (min_free = 0): refused for want of space (before or during the
# copy), the partial job removed
rc=0
"$ZKPIPE" submit --config "$CONF" --circuit mulchain "$M/witness-1.wtns" >/dev/null 2>"$T/sub.err" || rc=$?
[ $rc = 1 ] && grep -q "no space left on the spool's file system\|not accepting new jobs" "$T/sub.err" ||
    fail "submit into a full spool: exit $rc: $(cat "$T/sub.err")"
[ -z "$(ls -A "$SPOOL/tmp")" ] || fail "the refused submission left $(ls -A "$SPOOL/tmp") in tmp/"
# min_free: no new job while the spool is short of space
write_config 4 0 "[pipeline]" "min_free = 1M"
rc=0
"$ZKPIPE" submit --config "$CONF" --circuit mulchain "$M/witness-1.wtns" >/dev/null 2>"$T/sub.err" || rc=$?
[ $rc = 1 ] && grep -q "min_free" "$T/sub.err" || fail "submit under min_free: exit $rc: $(cat "$T/sub.err")"
rm -f "$SPOOL/filler"
for j in "${JOBS[@]}"; do wait_job "$j" 120 || fail "job $j after space returned: $(cat "$T/wait-$j.err")"; done
[ -z "$(ls -A "$SPOOL/failed")" ] || fail "jobs failed: $(ls "$SPOOL/failed")"
for j in "${JOBS[0]}" "${JOBS[12]}" "${JOBS[24]}"; do verify_job "$j" mulchain 1; done
wait_for 10 "the gauge to clear" sh -c "\"$ZKPIPE\" status --config \"$CONF\" | grep -q '^disk: ok'"
grep -q "has space again" "$T/logs/finalizerd.log" || fail "the end of the episode was not logged"
stop_all
log "PASS: 25 jobs survived a full spool"
