#!/bin/bash
# Oracle test of `zkpipe keygen --insecure-dev`: for the bn128 and bls12381 mulchain fixtures, make a
# fresh key and vk.json, prove the fixture witness with both `zkpipe prove` and `snarkjs groth16 prove`
# on that key, and check that `snarkjs groth16 verify` (and zkpipe verify) accept both proofs with the
# generated vk, that the vk is byte-identical to `snarkjs zkey export verificationkey` of the key, and
# that a tampered public.json is rejected. keygen without --insecure-dev must exit 2.
. "$(dirname "$0")/oracle/env.sh"

"$zkpipe" keygen "$data/bn128/mulchain/mulchain.r1cs" "$tmp/no.zkey" 2>"$tmp/err"
rc=$?
if [ $rc -ne 2 ] || [ -e "$tmp/no.zkey" ] || ! grep -q -- "--insecure-dev" "$tmp/err"; then
    echo "FAIL keygen without --insecure-dev: exit $rc (want 2, no key, a message naming the flag)"; fail=1
else
    echo "ok   keygen without --insecure-dev exits 2"
fi

verify_ok() { # vk public proof
    "$snarkjs" groth16 verify "$1" "$2" "$3" 2>&1 | grep -q "OK"
}

check() { # curve
    local dir=$data/$1/mulchain out=$tmp/$1
    mkdir -p "$out"
    if ! "$zkpipe" keygen --insecure-dev "$dir/mulchain.r1cs" "$out/key.zkey" "$out/vk.json" 2>"$out/keygen.err"; then
        echo "FAIL $1: keygen failed: $(cat "$out/keygen.err")"; fail=1; return
    fi
    if ! grep -q "INSECURE" "$out/keygen.err"; then
        echo "FAIL $1: keygen printed no warning"; fail=1
    fi
    "$snarkjs" zkey export verificationkey "$out/key.zkey" "$out/vk_snarkjs.json" >/dev/null 2>&1
    if ! python3 - "$out/vk.json" "$out/vk_snarkjs.json" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
ours, theirs = json.loads(text), json.load(open(sys.argv[2]))
if ours != theirs:
    sys.exit("vk.json differs from snarkjs zkey export verificationkey")
if open(sys.argv[2]).read() != text:
    sys.exit("vk.json is not byte-identical to snarkjs's export")
PY
    then
        echo "FAIL $1: vk.json"; fail=1
    fi
    if ! "$zkpipe" prove --r1cs "$dir/mulchain.r1cs" "$out/key.zkey" "$dir/witness-1.wtns" "$out/proof.json" \
        "$out/public.json"; then
        echo "FAIL $1: zkpipe prove with the generated key failed"; fail=1; return
    fi
    if ! "$snarkjs" groth16 prove "$out/key.zkey" "$dir/witness-2.wtns" "$out/proof_s.json" "$out/public_s.json" \
        >/dev/null 2>&1; then
        echo "FAIL $1: snarkjs groth16 prove with the generated key failed"; fail=1; return
    fi
    if ! verify_ok "$out/vk.json" "$out/public.json" "$out/proof.json"; then
        echo "FAIL $1: snarkjs rejects zkpipe's proof with the generated key"; fail=1
    fi
    if ! verify_ok "$out/vk.json" "$out/public_s.json" "$out/proof_s.json"; then
        echo "FAIL $1: snarkjs rejects its own proof with the generated key"; fail=1
    fi
    if ! "$zkpipe" verify "$out/vk.json" "$out/public.json" "$out/proof.json" >/dev/null; then
        echo "FAIL $1: zkpipe verify rejects zkpipe's proof with the generated vk"; fail=1
    fi
    # the fixture's own key must not accept a proof made with the generated one
    if verify_ok "$dir/vk.json" "$out/public.json" "$out/proof.json"; then
        echo "FAIL $1: the fixture's vk accepts a proof from the generated key"; fail=1
    fi
    python3 - "$out/public.json" "$out/tampered.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
v = int(p[-1]); p[-1] = str(v + 1 if v % 10 != 9 else v - 1)
open(sys.argv[2], "w").write(json.dumps(p, indent=1))
PY
    if verify_ok "$out/vk.json" "$out/tampered.json" "$out/proof.json"; then
        echo "FAIL $1: snarkjs accepts a tampered public.json"; fail=1
    fi
    echo "ok   $1: keygen, zkpipe and snarkjs proofs verified with the generated vk"
}
check bn128
check bls12381
exit $fail
