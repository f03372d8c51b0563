#!/bin/bash
# Generators that loop or kill their synthd (issue 25, point 4), on the small circom circuit
# tests/witgen/spin.circom, whose generator loops for ever on x = -1:
#  (a) witness_timeout covers the wasm generator: the partition fails "generator ran past 4 s", the
#      synthd's heartbeat stays fresh meanwhile, and the same synthd proves the next job;
#  (b) zkpipe cancel reaches a partition in generation: the generator (wasm, or a witness_cmd) is
#      stopped, the job is cancelled within seconds (witness_timeout 600);
#  (c) a partition whose generation a synthd died in twice fails with that reason instead of being
#      handed to a third synthd (a synthd killed -9 inside the generator, at the circuit's log()).
. "$(dirname "$0")/lib.sh"
W=$DATA/witgen
"$ZKPIPE" keygen --insecure-dev "$W/spin.r1cs" "$T/spin.zkey" >/dev/null 2>&1 || fail "keygen spin"
"$ZKPIPE" keygen --insecure-dev "$W/guard.r1cs" "$T/guard.zkey" >/dev/null 2>&1 || fail "keygen guard"
write_witgen_config "[circuit spin]" \
    "zkey = $T/spin.zkey" \
    "wasm = $W/spin.wasm" \
    "witness_timeout = 4" \
    "[circuit spinlong]" \
    "zkey = $T/spin.zkey" \
    "wasm = $W/spin.wasm" \
    "[circuit slowcmd]" \
    "zkey = $T/spin.zkey" \
    "witness_cmd = $T/slow.sh" \
    "[circuit guard]" \
    "zkey = $T/guard.zkey" \
    "wasm = $W/guard.wasm"
heartbeat_age() { # the synthd's heartbeat age in seconds (integer part)
    "$ZKPIPE" status --config "$CONF" | awk '/^process synthd@/ {for (i = 1; i < NF; i++) if ($i == "heartbeat") print int($(i + 1))}'
}
"$ZKPIPE" witgen build --config "$CONF" spin guard >"$T/build.out" 2>&1 || fail "witgen build: $(cat "$T/build.out")"
printf '#!/bin/sh\necho $$ >%s\nexec sleep 60\n' "$T/slow.pid" >"$T/slow.sh"
chmod +x "$T/slow.sh"
echo '{"x": -1}' >"$T/loop.json"
echo '{"x": 3}' >"$T/three.json"
start synthd1
start gpud
start finalizerd

log "(a) a looping generator past witness_timeout"
J=$(submit_inputs spin "$T/loop.json")
sleep 2.5
age=$(heartbeat_age)
[ -n "$age" ] && [ "$age" -lt 2 ] || fail "synthd's heartbeat is $age s old while its generator runs"
rc=0
wait_job "$J" 60 || rc=$?
[ $rc = 1 ] || fail "job $J: wait exit $rc, expected 1: $(cat "$T/wait-$J.err")"
grep -q "input-0.json: generator ran past 4 s" "$T/wait-$J.err" || fail "job $J: no timeout reason: $(cat "$T/wait-$J.err")"
alive synthd1 || fail "synthd1 died"
J=$(submit_inputs spin "$T/three.json")
wait_job "$J" 60 || fail "a good spin job after the timeout failed: $(cat "$T/wait-$J.err")"

log "(b) zkpipe cancel during generation"
state_is() { [ "$(state_of "$1")" = "$2" ]; }
for circuit in spinlong slowcmd; do
    J=$(submit_inputs $circuit "$T/loop.json")
    wait_for 20 "the partition in generation" bash -c "\"$ZKPIPE\" status --config \"$CONF\" | grep -q 'FILLING 1'"
    [ $circuit = spinlong ] || wait_for 10 "the witness_cmd to start" test -s "$T/slow.pid"
    sleep 0.5
    "$ZKPIPE" cancel --config "$CONF" "$J" >/dev/null || fail "cancel failed"
    wait_for 10 "job $J of $circuit to be cancelled" state_is "$J" cancelled
    alive synthd1 || fail "synthd1 died"
done
wait_for 5 "the cancelled witness_cmd to end" bash -c "! kill -0 $(cat "$T/slow.pid") 2>/dev/null"
J=$(submit_inputs spinlong "$T/three.json")
wait_job "$J" 60 || fail "a good job after the cancel failed: $(cat "$T/wait-$J.err")"
stop synthd1

log "(c) two synthds die in the same partition's generation"
G=$T/g.json
echo '{"x": 7, "m": [[1, 2, 3], [4, 5, 6]]}' >"$G"
start synthd1 ZKPIPE_TEST_PAUSE=synth.witgen_log:0
J=$(submit_inputs guard "$G")
wait_for 60 "synthd1 to stop in the generator" is_stopped synthd1
kill9 synthd1
start synthd2 ZKPIPE_TEST_PAUSE=synth.witgen_log:0
wait_for 60 "synthd2 to stop in the generator" is_stopped synthd2
kill9 synthd2
start synthd1
rc=0
wait_job "$J" 60 || rc=$?
[ $rc = 1 ] || fail "job $J: wait exit $rc after two synthds died in its generation, expected 1"
grep -q "input-0.json: a synthd died 2 times while generating this witness" "$T/wait-$J.err" ||
    fail "job $J: no reason: $(cat "$T/wait-$J.err")"
J=$(submit_inputs guard "$G")
wait_job "$J" 60 || fail "a good guard job failed: $(cat "$T/wait-$J.err")"
stop_all
log "PASS"
