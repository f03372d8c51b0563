#!/bin/bash
# Jobs of circuit inputs (input.json partitions; docs/witgen.md): synthd computes each witness with
# the circuit's generator, in the slab.
#  (a) 2 synthd + gpud + finalizerd, input jobs on bn128 and bls12381: every proof accepted by snarkjs,
#      public.json as the fixtures' (snarkjs's); a .wtns job still flows beside them.
#  (b) a synthd killed -9 inside the wasm generator's run (at the circuit's log() line): the
#      partition is synthesized again and the job completes.
#  (b2) a synthd killed -9 while its witness_cmd child runs: the child dies with it (PDEATHSIG), the
#      partition is synthesized again and the job completes.
#  (c) witness_cmd with circom's own C++ generator (circom2 --c, built here): proofs accepted.
#  (d) every failure, each with its reason in zkpipe status, result.json and zkpipe wait, while a good
#      job completes and both synthds keep serving: an assert (the circuit's message, the input file),
#      an unknown signal, a missing signal, too many values, a value that is not a number, a wasm trap,
#      a wasm of the other curve, a child that crashes, runs past its timeout or writes a bad .wtns.
. "$(dirname "$0")/lib.sh"
[ -x "$ROOT/node_modules/.bin/circom2" ] || { echo "SKIP: circom2 not installed (npm ci)"; exit 77; }
W=$DATA/witgen
"$ZKPIPE" keygen --insecure-dev "$W/guard.r1cs" "$T/guard.zkey" "$T/guard_vk.json" >/dev/null || fail "keygen guard"
"$ZKPIPE" keygen --insecure-dev "$W/deep.r1cs" "$T/deep.zkey" >/dev/null || fail "keygen deep"

# circom's C++ witness generator of mulchain (needs g++, libgmp-dev, nasm, nlohmann-json3-dev)
mkdir -p "$T/cpp"
node "$ROOT/node_modules/.bin/circom2" "$ROOT/tests/witgen/mulchain.circom" --c -o "$T/cpp" >/dev/null ||
    fail "circom2 --c failed"
make -s -C "$T/cpp/mulchain_cpp" >"$T/cpp/make.log" 2>&1 || fail "building circom's C++ generator failed: $(tail -3 "$T/cpp/make.log")"
NATIVE=$T/cpp/mulchain_cpp/mulchain

# small stand-ins for broken native generators
printf '#!/bin/sh\nkill -SEGV $$\n' >"$T/crash.sh"
printf '#!/bin/sh\nexec sleep 30\n' >"$T/slow.sh"
printf '#!/bin/sh\nprintf "wtns-not-really" >"$2"\n' >"$T/garbage.sh"
# slowgen.sh: the real generator, or, while $T/hold exists, a generator that takes 60 s
printf '#!/bin/sh\necho $$ >>%s\n[ -e %s ] && exec sleep 60\nexec %s "$@"\n' "$T/slowgen.pids" "$T/hold" "$NATIVE" >"$T/slowgen.sh"
chmod +x "$T/crash.sh" "$T/slow.sh" "$T/garbage.sh" "$T/slowgen.sh"
M=$DATA/bn128/mulchain
cat >"$CONF" <<INI
[pipeline]
name = $PIPE_NAME
spool = $SPOOL
cache = $T/cache
slabs = 4
jobs = 32
events = 8192
[synth]
threads = 1
[gpu]
backend = cpu
threads = 1
[finalizer]
verify = yes
$(fixture_circuits_ini_wasm "$DATA" mulchain mulchain381)
[circuit guard]
zkey = $T/guard.zkey
wasm = $W/guard.wasm
[circuit deep]
zkey = $T/deep.zkey
wasm = $W/deep.wasm
[circuit otherprime]
zkey = $M/mulchain.zkey
wasm = $DATA/bls12381/mulchain/mulchain.wasm
[circuit native]
zkey = $M/mulchain.zkey
r1cs = $M/mulchain.r1cs
witness_cmd = $NATIVE
witness_timeout = 60
witness_memory = 1G
[circuit slownative]
zkey = $M/mulchain.zkey
witness_cmd = $T/slowgen.sh
[circuit plain]
zkey = $M/mulchain.zkey
[circuit crash]
zkey = $M/mulchain.zkey
witness_cmd = $T/crash.sh
[circuit slow]
zkey = $M/mulchain.zkey
witness_cmd = $T/slow.sh
witness_timeout = 2
[circuit garbage]
zkey = $M/mulchain.zkey
witness_cmd = $T/garbage.sh
INI
"$ZKPIPE" witgen build --config "$CONF" mulchain >"$T/build.out" || fail "zkpipe witgen build: $(cat "$T/build.out")"
grep -q "^mulchain: built $T/cache/" "$T/build.out" || fail "witgen build did not build: $(cat "$T/build.out")"
"$ZKPIPE" witgen build --config "$CONF" mulchain | grep -q "^mulchain: cached" || fail "witgen build rebuilt a cached generator"

same_public() { # JOB K FIXTURE_PUBLIC
    cmp -s <(tr -d ' \n' <"$SPOOL/done/$1/public-$2.json") <(tr -d ' \n' <"$3") || fail "job $1: public-$2.json differs from $3"
}

rc=0
"$ZKPIPE" submit --config "$CONF" --circuit plain --input $M/input-1.json >/dev/null 2>"$T/plain.err" || rc=$?
[ $rc = 2 ] && grep -q "circuit plain has no witness generator (wasm or witness_cmd)" "$T/plain.err" ||
    fail "submit --input for a circuit without a generator: exit $rc, $(cat "$T/plain.err")"
log "(a) input jobs on both curves"
start synthd1
start synthd2
start gpud
start finalizerd
B=$DATA/bls12381/mulchain
J1=$(submit_inputs mulchain $M/input-1.json $M/input-2.json $M/input-2.json)
J2=$(submit_inputs mulchain381 $B/input-1.json $B/input-2.json)
J3=$(submit mulchain NORMAL $M/witness-1.wtns)
wait_job "$J1" 180 || fail "job $J1: $(cat $T/wait-$J1.err)"
wait_job "$J2" 180 || fail "job $J2: $(cat $T/wait-$J2.err)"
wait_job "$J3" 180 || fail "job $J3: $(cat $T/wait-$J3.err)"
verify_job "$J1" mulchain 3 snarkjs
verify_job "$J2" mulchain381 2 snarkjs
verify_job "$J3" mulchain 1
same_public "$J1" 0 $M/public-1.json
same_public "$J1" 2 $M/public-2.json
same_public "$J2" 1 $B/public-2.json
grep -q "Built the witness generator of circuit mulchain381" "$T"/logs/synthd*.log || fail "synthd did not log its build"
grep -q "inputs = yes" "$SPOOL/done/$J1/job.ini" || fail "job.ini lacks inputs = yes"
stop_all

log "(b) synthd killed -9 inside the generator"
start gpud
start finalizerd
start synthd1 ZKPIPE_TEST_PAUSE=synth.witgen_log:1
G=$T/g.json
echo '{"x": 7, "m": [[1, 2, 3], [4, 5, 6]]}' >"$G"
J=$(submit_inputs guard "$G" "$G" "$G")
wait_for 60 "synthd1 to stop in partition 1's generator" is_stopped synthd1
slab_line | grep -q 'FILLING 1' || fail "no slab FILLING while synthd1 is stopped: $(slab_line)"
kill9 synthd1
start synthd2
wait_job "$J" 120 || fail "job failed: $(cat $T/wait-$J.err)"
R=$(result_json "$J")
[ "$(json_get "$R" 'r["partitions"][1]["synth_count"]')" = 2 ] || fail "partition 1 was not synthesized again"
for k in 0 1 2; do
    "$SNARKJS" groth16 verify "$T/guard_vk.json" "$SPOOL/done/$J/public-$k.json" "$SPOOL/done/$J/proof-$k.json" |
        grep -q 'OK!' || fail "guard proof $k rejected by snarkjs"
done
stop_all

log "(b2) synthd killed -9 while its witness_cmd child runs"
start gpud
start finalizerd
touch "$T/hold"
# synthd ticks (and so stops here) right after its fork, maybe before the child has run at all: the
# child is the line slowgen.sh appends after the ones earlier runs left
seen=$(cat "$T/slowgen.pids" 2>/dev/null | wc -l)
start synthd1 ZKPIPE_TEST_PAUSE=synth.witgen_tick:0
J=$(submit_inputs slownative $M/input-1.json $M/input-2.json $M/input-1.json)
wait_for 60 "synthd1 to stop while partition 0's generator runs" is_stopped synthd1
wait_for 30 "partition 0's generator to start" bash -c "[ \$(cat '$T/slowgen.pids' 2>/dev/null | wc -l) -gt $seen ]"
child=$(sed -n "$((seen + 1))p" "$T/slowgen.pids")
kill -0 "$child" 2>/dev/null || fail "the generator is not running while synthd1 is stopped"
kill9 synthd1
wait_for 10 "the generator to die with synthd1 (it would run 60 s)" bash -c "! kill -0 $child 2>/dev/null"
rm "$T/hold"
start synthd2
wait_job "$J" 120 || fail "job failed: $(cat $T/wait-$J.err)"
verify_job "$J" mulchain 3 snarkjs
[ "$(json_get "$(result_json "$J")" 'r["partitions"][0]["synth_count"]')" = 2 ] || fail "partition 0 was not synthesized again"
stop_all

log "(c) witness_cmd: circom's C++ generator, (d) every failure beside good jobs"
start synthd1
start synthd2
start gpud
start finalizerd
j() { printf '%s\n' "$2" >"$T/$1.json"; echo "$T/$1.json"; }
m='"m": [[1, 2, 3], [4, 5, 6]]'
NAT=$(submit_inputs native $M/input-1.json $M/input-2.json)
F_ASSERT=$(submit_inputs guard "$(j ok "{\"x\": 1, $m}")" "$(j big "{\"x\": 5000, $m}")")
F_UNKNOWN=$(submit_inputs guard "$(j unknown "{\"x\": 1, $m, \"zz\": 1}")")
F_MISSING=$(submit_inputs guard "$(j missing '{"x": 1}')")
F_MANY=$(submit_inputs guard "$(j many '{"x": 1, "m": [[1, 2, 3], [4, 5, 6, 7]]}')")
F_NAN=$(submit_inputs guard "$(j nan "{\"x\": \"seven\", $m}")")
F_TRAP=$(submit_inputs deep "$(j deep '{"n": 100000}')")
F_PRIME=$(submit_inputs otherprime $B/input-1.json)
F_CRASH=$(submit_inputs crash $M/input-1.json)
F_SLOW=$(submit_inputs slow $M/input-1.json)
F_GARBAGE=$(submit_inputs garbage $M/input-1.json)
GOOD=$(submit_inputs mulchain $M/input-2.json $M/input-1.json)
AFTER_TRAP=$(submit_inputs deep "$(j shallow '{"n": 50}')")
expect_fail() { # JOB REASON
    local rc=0
    wait_job "$1" 120 || rc=$?
    [ $rc = 1 ] || fail "job $1: wait exit $rc, expected 1 (wanted '$2')"
    grep -q -- "$2" "$T/wait-$1.err" || fail "job $1: wait's stderr lacks '$2': $(cat $T/wait-$1.err)"
    local res=$SPOOL/failed/$1/result.json
    [ "$(json_get "$res" 'r["status"]')" = failed ] || fail "job $1: result.json status"
    json_get "$res" 'r["error"]' | grep -q -- "$2" || fail "job $1: result.json error lacks '$2'"
    "$ZKPIPE" status --config "$CONF" "$1" | grep -q -- "$2" || fail "job $1: zkpipe status lacks '$2'"
    log "failed as expected: $(cat $T/wait-$1.err)"
}
wait_job "$GOOD" 180 || fail "the good job failed: $(cat $T/wait-$GOOD.err)"
verify_job "$GOOD" mulchain 2 snarkjs
wait_job "$NAT" 180 || fail "the witness_cmd job failed: $(cat $T/wait-$NAT.err)"
verify_job "$NAT" mulchain 2 snarkjs
same_public "$NAT" 1 $M/public-2.json
expect_fail "$F_ASSERT" "input-1.json: the circuit rejects the input .*Assert Failed. Error in template Guard_0 line: 8"
expect_fail "$F_UNKNOWN" "input-0.json: signal zz is not an input of the circuit"
expect_fail "$F_MISSING" "input-0.json: an input signal is missing"
expect_fail "$F_MANY" "input-0.json: signal m: 7 values given, the circuit's input has 6 (too many values)"
expect_fail "$F_NAN" "input-0.json: signal x: a string that is not a number"
expect_fail "$F_TRAP" "input-0.json: generator trap (setInputSignal): out-of-bounds memory access"
expect_fail "$F_PRIME" "the wasm's prime is bls12381's, the zkey .*mulchain.zkey is for bn128"
expect_fail "$F_CRASH" "crash.sh: killed by signal 11"
expect_fail "$F_SLOW" "slow.sh: ran past its timeout of 2 s"
expect_fail "$F_GARBAGE" "witness_cmd's output for input-0.json"
wait_job "$AFTER_TRAP" 120 || fail "the job after the trap failed: $(cat $T/wait-$AFTER_TRAP.err)"
alive synthd1 && alive synthd2 || fail "a synthd died"
pgrep -f "$T/slow.sh" >/dev/null && fail "the timed-out generator is still running"
grep -q "ZKPIPE_TRIM_NS\|trim [0-9.]* ms" "$T"/logs/synthd*.log || true
stop_all
all_slabs_free || fail "slabs not FREE: $(slab_line)"
[ -z "$(ls "$SPOOL/active")" ] || fail "spool/active not empty"
log "PASS"
