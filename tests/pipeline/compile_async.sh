#!/bin/bash
# A generator compile never blocks other circuits (issue 19; docs/witgen.md "In the pipeline"): two
# synthds whose C compiler ($CC, a wrapper here) holds while $T/cc-hold exists. While circuit
# mulchain381's generator compiles, an input job of mulchain (built ahead) and a .wtns job of
# poseidon complete; the waiting job's partitions are not claimed meanwhile (synthesized 0 times,
# little CPU); `zkpipe status` and the exporter's /status show the one compile (the other synthd
# waits for it instead of compiling again), then the job completes with one build. A compile killed
# out of memory (wasm2c under an address-space limit) fails the waiting job naming the wasm and the
# memory while another circuit's input job completes; a compile killed like the OOM killer does (the
# wrapper kills itself with SIGKILL) fails the waiting job with its reason, the synthds go on, and
# the next job of that circuit builds it again and completes.
. "$(dirname "$0")/lib.sh"
EXPORTER=$BUILD/exporter/zkpipe-exporter
[ -x "$EXPORTER" ] || { echo "SKIP: zkpipe-exporter not built (libmicrohttpd-dev missing)"; exit 77; }
command -v curl >/dev/null || { echo "SKIP: curl not installed"; exit 77; }
EXP_PORT=$(free_port)
write_witgen_config "[finalizer]" "verify = yes" "[exporter]" "listen = 127.0.0.1:$EXP_PORT" \
    "$(fixture_circuits_ini_wasm "$DATA" mulchain mulchain381 poseidon)"
cat >"$T/cc" <<EOF
#!/bin/sh
# the test's C compiler: dies of SIGKILL while $T/cc-kill exists, waits while $T/cc-hold exists
echo "\$*" >>"$T/cc.log"
[ -e "$T/cc-kill" ] && kill -9 \$\$
while [ -e "$T/cc-hold" ]; do sleep 0.1; done
exec cc "\$@"
EOF
mkdir "$T/bin"
cat >"$T/bin/wasm2c" <<EOF
#!/bin/sh
# the test's wasm2c: out of memory (30 MB of address space) while $T/w2c-oom exists
[ -e "$T/w2c-oom" ] && ulimit -v 30000
exec $(command -v wasm2c) "\$@"
EOF
chmod +x "$T/cc" "$T/bin/wasm2c"
"$ZKPIPE" witgen build --config "$CONF" mulchain >"$T/prebuild.out" 2>&1 || fail "witgen build: $(cat "$T/prebuild.out")"
touch "$T/cc-hold"
start synthd1 CC="$T/cc" PATH="$T/bin:$PATH"
start synthd2 CC="$T/cc" PATH="$T/bin:$PATH"
start gpud
start finalizerd
M381=$DATA/bls12381/mulchain
P=$DATA/bn128/poseidon
J1=$(submit_inputs mulchain381 "$M381/input-1.json" "$M381/input-2.json")
wait_for 60 "the compiler to run for mulchain381" test -s "$T/cc.log"
"$ZKPIPE" status --config "$CONF" >"$T/status1"
J2=$(submit_inputs mulchain "$DATA/bn128/mulchain/input-1.json")
J3=$(submit poseidon normal "$P/witness-1.wtns" "$P/witness-2.wtns")
synth_cpu() { cat "/proc/${PIDS[synthd1]}/stat" "/proc/${PIDS[synthd2]}/stat" | awk '{t += $14 + $15} END {print t}'; }
cpu0=$(synth_cpu)
wait_job "$J2" 60 || fail "job $J2 (mulchain, inputs) did not complete while mulchain381 compiled: $(cat "$T/wait-$J2.err")"
wait_job "$J3" 60 || fail "job $J3 (poseidon, .wtns) did not complete while mulchain381 compiled: $(cat "$T/wait-$J3.err")"
verify_job "$J2" mulchain 1
verify_job "$J3" poseidon 2
sleep 2
cpu1=$(synth_cpu)
[ -e "$T/cc-hold" ] && [ "$(state_of "$J1")" = active ] || fail "job $J1 is $(state_of "$J1") while its generator compiles"
"$ZKPIPE" status --config "$CONF" "$J1" >"$T/status-j1"
[ "$(grep -c "partition [01] pending .* synthesized 0 times" "$T/status-j1")" = 2 ] ||
    fail "the waiting partitions were claimed: $(cat "$T/status-j1")"
log "synthd CPU while waiting: $((cpu1 - cpu0)) ticks"
[ $((cpu1 - cpu0)) -lt 300 ] || fail "the synthds spent $((cpu1 - cpu0)) ticks of CPU while a partition waited for its generator"
"$ZKPIPE" status --config "$CONF" >"$T/status2"
for f in "$T/status1" "$T/status2"; do
    [ "$(grep -c '^compiling circuit mulchain381 (since [0-9]* s, synthd [12])$' "$f")" = 1 ] ||
        fail "zkpipe status does not show the one compile: $(cat "$f")"
done
log "status: $(grep '^compiling' "$T/status2")"
"$EXPORTER" --config "$CONF" >>"$T/logs/exporter.log" 2>&1 &
PIDS[exporter]=$!
wait_for 20 "the exporter to listen" curl -sf -o "$T/status.json" "http://127.0.0.1:$EXP_PORT/status"
python3 - "$T/status.json" <<'PY' || fail "the exporter's /status does not show the compile: $(cat "$T/status.json")"
import json, sys
st = [s for s in json.load(open(sys.argv[1]))["stages"] if s["stage"] == "synthd"]
c = [s["compiling"] for s in st if s["compiling"]]
assert len(st) == 2 and len(c) == 1 and c[0]["circuit"] == "mulchain381" and c[0]["since_s"] > 0, st
PY
rm "$T/cc-hold"
wait_job "$J1" 120 || fail "job $J1 after its compile: $(cat "$T/wait-$J1.err")"
verify_job "$J1" mulchain381 2
[ "$(grep -c -- '-o gen.so' "$T/cc.log")" = 1 ] || fail "mulchain381 was linked $(grep -c -- '-o gen.so' "$T/cc.log") times"
[ "$(cat "$T"/logs/synthd*.log | grep -c 'Built the witness generator of circuit mulchain381')" = 1 ] ||
    fail "mulchain381's generator was built more than once"
"$ZKPIPE" status --config "$CONF" | grep -q '^compiling' && fail "status shows a compile after it ended"

# the other synthd may have started a build of its own after the first failed: a job submitted
# before that one ends would wait for it, and fail with it
builds_ended() {
    [ "$(cat "$T"/logs/synthd*.log | grep -c 'Building the witness generator of circuit poseidon')" = \
        "$(cat "$T"/logs/synthd*.log | grep -c 'The witness generator of circuit poseidon failed to build')" ]
}
# failed_with JOB WANT: the job failed with a reason matching WANT
failed_with() {
    wait_job "$1" 60 && fail "job $1 completed though its generator's build failed"
    local r=$SPOOL/failed/$1/result.json
    [ -f "$r" ] || fail "job $1 is not in failed/: $(cat "$T/wait-$1.err")"
    json_get "$r" 'r["error"]' | grep -q "$2" || fail "job $1's reason: $(json_get "$r" 'r["error"]')"
    log "reason: $(json_get "$r" 'r["error"]')"
}

# wasm2c out of memory (std::bad_alloc under the wrapper's limit) fails the job that waits for it
# with that reason, while another circuit's input job completes
touch "$T/w2c-oom"
J4=$(submit_inputs poseidon "$P/input-1.json")
J4M=$(submit_inputs mulchain "$DATA/bn128/mulchain/input-2.json")
failed_with "$J4" "poseidon.wasm: out of memory building the generator: wasm2c killed by signal 6 (Aborted): .*bad_alloc"
wait_job "$J4M" 60 || fail "job $J4M (mulchain) did not complete while poseidon's build ran out of memory"
verify_job "$J4M" mulchain 1
alive synthd1 && alive synthd2 || fail "a synthd died with the build"
wait_for 60 "every build of poseidon to end" builds_ended
rm "$T/w2c-oom"

# a compile killed (by the OOM killer?) fails the job that waits for it; the next job builds again
touch "$T/cc-kill"
J4=$(submit_inputs poseidon "$P/input-1.json")
failed_with "$J4" "poseidon.wasm: out of memory building the generator: .*killed by signal 9"
alive synthd1 && alive synthd2 || fail "a synthd died with the compile"
wait_for 60 "every build of poseidon to end" builds_ended
rm "$T/cc-kill"
J5=$(submit_inputs poseidon "$P/input-1.json" "$P/input-2.json")
wait_job "$J5" 120 || fail "job $J5 after a killed compile: $(cat "$T/wait-$J5.err")"
verify_job "$J5" poseidon 2
[ -z "$(ls -d "$T"/cache/.build-* 2>/dev/null)" ] || fail "build folders left: $(ls -d "$T"/cache/.build-*)"
stop_all
log "PASS: other circuits' jobs completed while one circuit compiled; a killed compile failed its job only"
