#!/bin/bash
# The segment and its file system (issue "Nothing accepted is ever lost or proven wrong", points
# 7 and 10): a segment larger than the file system it lives on is refused by zkpipe setup (and by
# a stage) with the free space in the message, instead of killing every stage with SIGBUS later;
# a stage whose segment is truncated under it logs SIGBUS with the mapping's name and exits 4 for
# a restart; zkpipe status on a corrupt segment says so and exits 1. Needs root (mount); skipped
# with 77 where a tmpfs cannot be mounted.
. "$(dirname "$0")/lib.sh"
mount_tmpfs "$T/shm" 8m
write_config 8 0 "[pipeline]" "segment = $T/shm/seg"
rc=0
"$ZKPIPE" setup --config "$CONF" >"$T/setup.out" 2>&1 || rc=$?
[ $rc = 1 ] || fail "setup of a 16 MiB segment on an 8 MiB file system: exit $rc: $(cat "$T/setup.out")"
grep -q "cannot reserve .* MiB for the segment: No space left on device (the file system has [0-9]* MiB free)" "$T/setup.out" ||
    fail "no clear message: $(cat "$T/setup.out")"
[ -z "$(ls -A "$T/shm")" ] || fail "a refused segment left files: $(ls -A "$T/shm")"
rc=0
"$FINALIZERD" --config "$CONF" >"$T/fin.out" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "cannot reserve" "$T/fin.out" || fail "finalizerd with an oversized segment: exit $rc: $(cat "$T/fin.out")"
# a segment that fits; then truncated under a running stage
write_config 2 0 "[pipeline]" "segment = $T/shm/seg"
"$ZKPIPE" setup --config "$CONF" >/dev/null || fail "setup of a segment that fits"
start finalizerd
wait_for 20 "finalizerd to attach" grep -q "Attached" "$T/logs/finalizerd.log"
truncate -s 4096 "$T/shm/seg"
rc=0
wait "${PIDS[finalizerd]}" || rc=$?
unset "PIDS[finalizerd]"
[ $rc = 4 ] || fail "finalizerd after its segment was truncated: exit $rc, expected 4"
grep -q "SIGBUS in the segment $T/shm/seg" "$T/logs/finalizerd.log" ||
    fail "no line naming the mapping: $(tail -3 "$T/logs/finalizerd.log")"
# a corrupt segment: status says so and exits 1
rc=0
"$ZKPIPE" status --config "$CONF" >"$T/status.out" 2>&1 || rc=$?
[ $rc = 1 ] || fail "status on a truncated segment: exit $rc"
grep -q "seg: .*\(too small\|bytes, header says\)" "$T/status.out" || fail "status: $(cat "$T/status.out")"
printf 'garbage%.0s' $(seq 1000) >"$T/shm/seg"
rc=0
"$ZKPIPE" status --config "$CONF" >"$T/status.out" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "not a zkpipe segment" "$T/status.out" || fail "status on garbage: exit $rc: $(cat "$T/status.out")"
log "PASS"
