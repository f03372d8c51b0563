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
    elif ls -A "$tmp" | grep -q '\.tmp\.'; then # the outputs are written under temporary names while the proof is verified
        echo "FAIL $what: a temporary was left: $(ls -A "$tmp" | grep '\.tmp\.')"; fail=1
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
# special files where a file belongs are refused at once, never read without end or waited on
mkfifo "$tmp/fifo"
expect_quick() { # expect with a time limit: a hang or an endless read is a failure, not a stuck test
    local what=$1 want=$2 name=$3
    shift 3
    rm -f "$tmp/p.json" "$tmp/pub.json"
    timeout 10 "$zkpipe" prove "$@" "$tmp/p.json" "$tmp/pub.json" 2>"$tmp/err" >/dev/null
    local rc=$?
    if [ $rc -eq 124 ]; then
        echo "FAIL $what: still running after 10 s"; fail=1
    elif [ $rc -eq 0 ] || [ $rc -ge 128 ]; then
        echo "FAIL $what: exit status $rc"; fail=1
    elif ! grep -qF -- "$want" "$tmp/err" || ! grep -qF -- "$name" "$tmp/err" || [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
        echo "FAIL $what: want one line naming $name with '$want': $(cat "$tmp/err")"; fail=1
    else
        echo "ok   $what: $(cat "$tmp/err")"
    fi
}
expect_quick "/dev/zero as wtns" "not a regular file (a character device)" /dev/zero $mz /dev/zero
expect_quick "/dev/zero as zkey" "not a regular file (a character device)" /dev/zero /dev/zero $mw
expect_quick "FIFO as wtns" "not a regular file (a FIFO)" "$tmp/fifo" $mz "$tmp/fifo"
expect_quick "FIFO as zkey" "not a regular file (a FIFO)" "$tmp/fifo" "$tmp/fifo" $mw
expect_quick "FIFO as r1cs" "not a regular file (a FIFO)" "$tmp/fifo" --r1cs "$tmp/fifo" $mz $mw
expect_quick "directory as wtns" "not a regular file (a directory)" "$tmp" $mz "$tmp"
# a file whose size says 0 but that reads more (as /proc files do): the read is bounded by the size
expect_quick "/proc file as wtns" "its size is 0 bytes but more than 0 were read" /proc/self/status $mz /proc/self/status
ln -s /dev/zero "$tmp/zero-link"
expect_quick "symlink to /dev/zero as wtns" "not a regular file (a character device)" zero-link $mz "$tmp/zero-link"

# a failed prove leaves no older proof at the output paths, and no half-written pair
for why in "bad witness" "public.json not writable"; do
    echo old >"$tmp/p.json"; echo old >"$tmp/pub.json"
    if [ "$why" = "bad witness" ]; then
        "$zkpipe" prove $mz $d/bad/wtns_truncated.wtns "$tmp/p.json" "$tmp/pub.json" 2>/dev/null
    else
        "$zkpipe" prove $mz $mw "$tmp/p.json" "$tmp/nodir/pub.json" 2>/dev/null
    fi
    rc=$?
    if [ $rc -ne 1 ] || [ -e "$tmp/p.json" ] || { [ "$why" = "bad witness" ] && [ -e "$tmp/pub.json" ]; }; then
        echo "FAIL failed prove ($why): exit $rc, left: $(ls "$tmp" | grep -E '^p(ub)?\.json$' | tr '\n' ' ')"; fail=1
    else
        echo "ok   failed prove ($why) leaves no older proof"
    fi
done
rm -f "$tmp/pub.json"
# an output that is an input is refused, and the input stays
cp $mw "$tmp/w.wtns"
"$zkpipe" prove $mz "$tmp/w.wtns" "$tmp/w.wtns" "$tmp/pub.json" 2>"$tmp/err"
if [ $? -ne 1 ] || ! cmp -s $mw "$tmp/w.wtns" || ! grep -q "the output is the input" "$tmp/err"; then
    echo "FAIL output = input: $(cat "$tmp/err")"; fail=1
else
    echo "ok   output = input: $(cat "$tmp/err")"
fi

"$zkpipe" prove $mz $mw "$tmp/same.json" "$tmp/same.json" 2>"$tmp/err"
if [ $? -ne 1 ] || [ -e "$tmp/same.json" ] || ! grep -q "same.json: given as both" "$tmp/err"; then
    echo "FAIL one path for both outputs: $(cat "$tmp/err")"; fail=1
else
    echo "ok   one path for both outputs: $(cat "$tmp/err")"
fi

# a corrupt point in the key's PointsA (section 5, payload at 89064) or PointsH (section 9, payload at
# 409880) is named with the file, the section and the point, not as the proof's pi_a or pi_c
corrupt() { # out, offset of the byte to change
    cp $mz "$1"
    python3 -c 'import sys; f=open(sys.argv[1],"r+b"); f.seek(int(sys.argv[2])); b=f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0]^1]))' "$1" "$2"
}
corrupt "$tmp/bad_a.zkey" $((89064 + 64 * 1 + 32))
expect "corrupt PointsA" "section 5 (PointsA): point 1 (G1) is not on the curve" bad_a.zkey "$tmp/bad_a.zkey" $mw
corrupt "$tmp/bad_h.zkey" $((409880 + 64 * 3 + 32))
expect "corrupt PointsH" "section 9 (PointsH): point 3 (G1) is not on the curve" bad_h.zkey "$tmp/bad_h.zkey" $mw
# PointsC (section 8, payload at 345868) is not 8-byte aligned in the file: zkpipe prove copies it only
# for its MSM (ZK_ZKEY_LAZY), and the scan of a bad proof still reads the real points
corrupt "$tmp/bad_c.zkey" $((345868 + 64 * 500 + 32))
expect "corrupt PointsC (unaligned)" "section 8 (PointsC): point 500 (G1) is not on the curve" bad_c.zkey "$tmp/bad_c.zkey" $mw
# delta2's x.c0 (section 2 payload at 40, then 84 bytes of fields and counts, alpha1, beta1, beta2,
# gamma2, delta1) set to all ones: not below q
cp $mz "$tmp/bad_d.zkey"
python3 -c 'import sys; f=open(sys.argv[1],"r+b"); f.seek(572); f.write(b"\xff"*32)' "$tmp/bad_d.zkey"
expect "delta2 not below q" "section 2 (groth16 header): point delta2 has a coordinate that is not below q" \
    bad_d.zkey "$tmp/bad_d.zkey" $mw

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
# a symlink planted at the temporary names prove writes through (NAME.tmp.PID): never followed
echo precious >"$tmp/victim"
sh -c 'ln -s "$1" "$2.tmp.$$"; ln -s "$1" "$3.tmp.$$"; exec "$4" prove "$5" "$6" "$2" "$3"' sh "$tmp/victim" \
    "$tmp/pl.json" "$tmp/publ.json" "$zkpipe" "$mz" "$mw" 2>"$tmp/err" ||
    { echo "FAIL: prove with planted temporaries: $(cat "$tmp/err")"; fail=1; }
[ "$(cat "$tmp/victim")" = precious ] || { echo "FAIL: prove wrote through a planted temporary symlink"; fail=1; }
[ -s "$tmp/pl.json" ] && [ ! -L "$tmp/pl.json" ] || { echo "FAIL: no proof after planted temporaries"; fail=1; }
exit $fail
