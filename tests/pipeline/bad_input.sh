#!/bin/bash
# Test 5: a witness that fails the r1cs check, and one for another circuit, fail their jobs with that
# reason (zkpipe status, result.json, zkpipe wait's stderr and exit 1) while a good job flows; a
# corrupt job.ini goes to spool/failed with a reason; a daemon whose config has another geometry
# than the live segment refuses to start and says what differs.
. "$(dirname "$0")/lib.sh"
M=$DATA/bn128/mulchain
# a key whose PointsH section is corrupt (point 3's y flipped): the proofs cannot verify, and the
# reason names the key's bad point
cp "$M/mulchain.zkey" "$T/badkey.zkey"
python3 -c 'import sys; f=open(sys.argv[1],"r+b"); f.seek(409880+64*3+32); b=f.read(1); f.seek(409880+64*3+32); f.write(bytes([b[0]^1]))' "$T/badkey.zkey"
write_config 4 0 "[circuit badkey]" "zkey = $T/badkey.zkey" "r1cs = $M/mulchain.r1cs"
start synthd1
start gpud
start finalizerd
BAD1=$(submit mulchain NORMAL $M/witness-1.wtns $DATA/bad/wtns_unsatisfied.wtns $M/witness-2.wtns)
BAD2=$(submit mulchain NORMAL $DATA/bad/wtns_other_circuit.wtns)
BAD3=$(submit mulchain NORMAL $DATA/bad/wtns_bls12381.wtns)
GOOD=$(submit mulchain NORMAL $M/witness-1.wtns $M/witness-2.wtns)
BADKEY=$(submit badkey NORMAL $M/witness-1.wtns)
# a job directory with a corrupt job.ini, dropped straight into incoming/
CORRUPT=20200101T000000.000000-c0ffee
mkdir -p "$SPOOL/tmp/$CORRUPT"
printf '[job]\nid = %s\ncircuit = mulchain\npartitions = two\n' $CORRUPT >"$SPOOL/tmp/$CORRUPT/job.ini"
mv "$SPOOL/tmp/$CORRUPT" "$SPOOL/incoming/$CORRUPT"
"$ZKPIPE" submit --config "$CONF" --circuit mulchain >/dev/null 2>&1 && fail "submit without witnesses succeeded"
[ $? = 2 ] || fail "submit without witnesses: exit code not 2"

wait_job "$GOOD" 120 || fail "the good job failed: $(cat $T/wait-$GOOD.err)"
verify_job "$GOOD" mulchain 2
expect_fail() { # JOB REASON
    local rc=0
    wait_job "$1" 120 || rc=$?
    [ $rc = 1 ] || fail "job $1: wait exit $rc, expected 1"
    grep -q "$2" "$T/wait-$1.err" || fail "job $1: wait's stderr lacks '$2': $(cat $T/wait-$1.err)"
    local res=$SPOOL/failed/$1/result.json
    [ "$(json_get "$res" 'r["status"]')" = failed ] || fail "job $1: result.json status"
    json_get "$res" 'r["error"]' | grep -q "$2" || fail "job $1: result.json error lacks '$2'"
    "$ZKPIPE" status --config "$CONF" "$1" | grep -q "$2" || fail "job $1: zkpipe status lacks '$2'"
}
expect_fail "$BAD1" "does not satisfy constraint"
expect_fail "$BAD2" "another circuit"
expect_fail "$BAD3" "curve"
expect_fail "$BADKEY" "badkey.zkey: section 9 (PointsH): point 3 (G1) is not on the curve"
wait_for 10 "the corrupt job in failed/" test -f "$SPOOL/failed/$CORRUPT/result.json"
json_get "$SPOOL/failed/$CORRUPT/result.json" 'r["error"]' | grep -q "job.ini:4: partitions = two" ||
    fail "corrupt job.ini: reason missing: $(cat "$SPOOL/failed/$CORRUPT/result.json")"
[ -z "$(ls -A "$SPOOL/active")" ] || fail "spool/active not empty"
# geometry mismatch against the live segment
cp "$CONF" "$T/other.ini"
sed -i 's/^slabs = 4/slabs = 6/' "$T/other.ini"
rc=0
"$GPUD" --config "$T/other.ini" >"$T/geo.out" 2>&1 || rc=$?
[ $rc != 0 ] || fail "gpud attached to a segment of another geometry"
grep -q "slabs is 4 in the segment, 6 in the config" "$T/geo.out" || fail "no clear geometry error: $(cat $T/geo.out)"
"$ZKPIPE" setup --config "$T/other.ini" >/dev/null 2>&1 && fail "zkpipe setup accepted the other geometry"
wait_for 10 "every slab FREE" all_slabs_free
stop_all
log "PASS"
