#!/bin/bash
# A finished job is read back by the spool's rules (issue 20, 1: spool_read_result): a FIFO planted
# as done/J/result.json does not hang `zkpipe wait` or `zkpipe status J`, and a result.json that is
# a symbolic link to a result somewhere else is not followed; both are refused with one line.
. "$(dirname "$0")/lib.sh"
write_config 2 0
for d in tmp incoming active done failed; do mkdir -p "$SPOOL/$d"; done
F=20261130T000000.000000-f1f0f1
L=20261130T000000.000000-11aa11
mkdir "$SPOOL/done/$F" "$SPOOL/done/$L"
mkfifo "$SPOOL/done/$F/result.json"
printf '{"job": "%s", "status": "done", "error": "", "partitions": []}\n' "$L" >"$T/elsewhere.json"
ln -s "$T/elsewhere.json" "$SPOOL/done/$L/result.json"
for J in $F $L; do
    rc=0
    timeout 20 "$ZKPIPE" wait --config "$CONF" --timeout 5 "$J" >"$T/w.out" 2>"$T/w.err" || rc=$?
    [ $rc = 1 ] || fail "zkpipe wait $J (result.json $(stat -c %F "$SPOOL/done/$J/result.json")): exit $rc, expected 1: $(cat "$T/w.err")"
    grep -q "job $J: cannot read" "$T/w.err" || fail "zkpipe wait $J: $(cat "$T/w.err")"
    rc=0
    timeout 20 "$ZKPIPE" status --config "$CONF" "$J" >"$T/s.out" 2>&1 || rc=$?
    [ $rc != 124 ] || fail "zkpipe status $J hangs"
    ! grep -q "^result .* status done" "$T/s.out" || fail "zkpipe status $J read a result it must refuse: $(cat "$T/s.out")"
done
log "PASS"
