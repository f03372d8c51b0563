#!/bin/bash
# A truncated segment under a synthd that has loaded a wasm generator (issue 25, point 14): the
# generator's fault handler passes a SIGBUS that is not the generator's on to the stage's own, so
# synthd logs the same line as gpud and finalizerd ("SIGBUS in the segment ...") and exits 4 for a
# restart, instead of dying with a bare "Bus error".
. "$(dirname "$0")/lib.sh"
W=$DATA/witgen
"$ZKPIPE" keygen --insecure-dev "$W/guard.r1cs" "$T/guard.zkey" >/dev/null 2>&1 || fail "keygen guard"
write_witgen_config "[circuit guard]" \
    "zkey = $T/guard.zkey" \
    "wasm = $W/guard.wasm"
echo '{"x": 7, "m": [[1, 2, 3], [4, 5, 6]]}' >"$T/g.json"
start synthd1
start gpud
start finalizerd
J=$(submit_inputs guard "$T/g.json")
wait_job "$J" 60 || fail "the guard job failed: $(cat "$T/wait-$J.err")"
truncate -s 4096 "$SEGMENT"
rc=0
wait "${PIDS[synthd1]}" || rc=$?
unset "PIDS[synthd1]"
[ $rc = 4 ] || fail "synthd after its segment was truncated: exit $rc, expected 4: $(tail -2 "$T/logs/synthd1.log")"
grep -q "SIGBUS in the segment $SEGMENT (its file was truncated" "$T/logs/synthd1.log" ||
    fail "no line naming the mapping: $(tail -3 "$T/logs/synthd1.log")"
log "PASS"
