#!/bin/bash
# Every bad input of tests/data/bad (see its README.md) makes `zkpipe prove` exit non-zero with one
# line on stderr that names the file and says what is wrong, and writes no proof.
set -u
root=${ZKPIPE_SOURCE_ROOT:?}
zkpipe=${ZKPIPE_BUILD_ROOT:?}/cli/zkpipe
d=$root/tests/data
mz=$d/bn128/mulchain/mulchain.zkey
mw=$d/bn128/mulchain/witness-1.wtns
mr=$d/bn128/mulchain/mulchain.r1cs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() { # description, expected substring, expected file name in message, args...
    local what=$1 want=$2 name=$3
    shift 3
    rm -f "$tmp/p.json" "$tmp/pub.json"
    "$zkpipe" prove "$@" "$tmp/p.json" "$tmp/pub.json" 2>"$tmp/err" >/dev/null
    local rc=$?
    local lines
    lines=$(wc -l <"$tmp/err")
    if [ $rc -eq 0 ] || [ $rc -ge 128 ]; then
        echo "FAIL $what: exit status $rc"; fail=1
    elif ! grep -qF -- "$want" "$tmp/err"; then
        echo "FAIL $what: message lacks '$want': $(cat "$tmp/err")"; fail=1
    elif ! grep -qF -- "$name" "$tmp/err"; then
        echo "FAIL $what: message does not name $name: $(cat "$tmp/err")"; fail=1
    elif [ "$lines" -ne 1 ]; then
        echo "FAIL $what: $lines lines on stderr"; fail=1
    elif [ -e "$tmp/p.json" ] || [ -e "$tmp/pub.json" ]; then
        echo "FAIL $what: an output file was written"; fail=1
    else
        echo "ok   $what: $(cat "$tmp/err")"
    fi
}
expect "truncated zkey" "section 7" zkey_truncated.zkey $d/bad/zkey_truncated.zkey $mw
expect "truncated wtns" "past end of file" wtns_truncated.wtns $mz $d/bad/wtns_truncated.wtns
expect "bls witness, bn zkey" "another curve" wtns_bls12381.wtns $mz $d/bad/wtns_bls12381.wtns
expect "bn witness, bls zkey" "another curve" witness-1.wtns $d/bls12381/mulchain/mulchain.zkey $mw
expect "other circuit" "another circuit" wtns_other_circuit.wtns $mz $d/bad/wtns_other_circuit.wtns
expect "unsatisfied (r1cs)" "constraint 500" mulchain.r1cs --r1cs $mr $mz $d/bad/wtns_unsatisfied.wtns
expect "unsatisfied (verify)" "does not verify" wtns_unsatisfied.wtns $mz $d/bad/wtns_unsatisfied.wtns
expect "not reduced" "not < r" wtns_not_reduced.wtns $mz $d/bad/wtns_not_reduced.wtns
expect "zkey magic" "magic" wrong_magic.zkey $d/bad/wrong_magic.zkey $mw
expect "wtns magic" "magic" wrong_magic.wtns $mz $d/bad/wrong_magic.wtns
expect "r1cs as zkey" "r1cs" r1cs_as.zkey $d/bad/r1cs_as.zkey $mw
expect "empty zkey" "empty" empty.zkey $d/bad/empty.zkey $mw
expect "section past eof" "section 9" zkey_section_past_eof.zkey $d/bad/zkey_section_past_eof.zkey $mw
expect "last section past eof" "section 10" zkey_last_section_past_eof.zkey $d/bad/zkey_last_section_past_eof.zkey $mw
expect "section size overflow" "section 5" zkey_section_size_overflow.zkey $d/bad/zkey_section_size_overflow.zkey $mw
expect "nVars mismatch" "64256" zkey_nvars_mismatch.zkey $d/bad/zkey_nvars_mismatch.zkey $mw
expect "plonk zkey" "plonk" zkey_plonk.zkey $d/bad/zkey_plonk.zkey $mw
expect "missing zkey" "No such file" nonexistent.zkey $tmp/nonexistent.zkey $mw
expect "missing wtns" "No such file" nonexistent.wtns $mz $tmp/nonexistent.wtns
expect "r1cs of another circuit" "another circuit" poseidon.r1cs --r1cs $d/bn128/poseidon/poseidon.r1cs $mz $mw
expect "directory as zkey" "$d/bad" bad $d/bad $mw
# usage errors exit 2
"$zkpipe" prove "$mz" 2>/dev/null; [ $? -eq 2 ] || { echo "FAIL: missing arguments do not exit 2"; fail=1; }
"$zkpipe" prove --threads 0 "$mz" "$mw" a b 2>/dev/null; [ $? -eq 2 ] || { echo "FAIL: --threads 0 does not exit 2"; fail=1; }
"$zkpipe" prove --help | grep -q "Usage: zkpipe prove" || { echo "FAIL: --help"; fail=1; }
# the output directory is not writable: error, nothing left behind
mkdir -p "$tmp/ro" && chmod 555 "$tmp/ro"
if [ "$(id -u)" != 0 ]; then
    "$zkpipe" prove "$mz" "$mw" "$tmp/ro/p.json" "$tmp/ro/pub.json" 2>"$tmp/err"
    [ $? -eq 1 ] && grep -q "ro/p.json" "$tmp/err" || { echo "FAIL: unwritable output"; fail=1; }
fi
"$zkpipe" prove "$mz" "$mw" "$tmp/nodir/p.json" "$tmp/pub.json" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "nodir/p.json" "$tmp/err" || { echo "FAIL: missing output directory: $(cat "$tmp/err")"; fail=1; }
exit $fail
