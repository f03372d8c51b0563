#!/bin/sh
# zkpipe fullprove against snarkjs groth16 fullprove: on every fixture input of every circuit with a
# wasm (bn128 and bls12381) snarkjs accepts the proof and public.json is byte-identical to the
# fixture's (made by snarkjs) and to what snarkjs groth16 fullprove writes; a wasm of the other
# curve and an input the circuit rejects are refused with their reason.
. "$ZKPIPE_SOURCE_ROOT/tests/oracle/env.sh"
cache=$tmp/cache
for d in bn128/mulchain bn128/poseidon bn128/medium bls12381/mulchain; do
    n=$(basename $d)
    first=1
    for i in "$data/$d"/input*.json; do
        k=$(basename "$i" .json); k=${k#input}
        if ! "$zkpipe" fullprove --cache "$cache" "$i" "$data/$d/$n.wasm" "$data/$d/$n.zkey" "$tmp/p.json" "$tmp/pub.json"; then
            echo "FAIL $d$k: zkpipe fullprove failed"; fail=$((fail + 1)); continue
        fi
        if ! "$snarkjs" groth16 verify "$data/$d/vk.json" "$tmp/pub.json" "$tmp/p.json" >/dev/null; then
            echo "FAIL $d$k: snarkjs rejects the proof"; fail=$((fail + 1)); continue
        fi
        if ! cmp -s "$tmp/pub.json" "$data/$d/public$k.json"; then
            echo "FAIL $d$k: public.json differs from the fixture's"; fail=$((fail + 1)); continue
        fi
        if [ $first = 1 ]; then
            first=0
            "$snarkjs" groth16 fullprove "$i" "$data/$d/$n.wasm" "$data/$d/$n.zkey" "$tmp/sp.json" "$tmp/spub.json" >/dev/null
            if ! cmp -s "$tmp/pub.json" "$tmp/spub.json"; then
                echo "FAIL $d$k: public.json differs from snarkjs groth16 fullprove's"; fail=$((fail + 1)); continue
            fi
        fi
        echo "ok   $d$k"
    done
done
expect_fail() { # NAME WANT ARGS...
    name=$1 want=$2; shift 2
    if "$zkpipe" fullprove --cache "$cache" "$@" "$tmp/x.json" "$tmp/xpub.json" 2>"$tmp/err"; then
        echo "FAIL $name: accepted"; fail=$((fail + 1)); return
    fi
    if grep -q "$want" "$tmp/err" && [ "$(wc -l <"$tmp/err")" -eq 1 ] && [ ! -e "$tmp/x.json" ]; then
        echo "ok   $name: $(cat "$tmp/err")"
    else
        echo "FAIL $name: wanted one line with '$want', got: $(cat "$tmp/err")"; fail=$((fail + 1))
    fi
}
expect_fail "wasm of the other curve" "prime is bls12381's, the zkey .*mulchain.zkey is for bn128" \
    "$data/bls12381/mulchain/input-1.json" "$data/bls12381/mulchain/mulchain.wasm" "$data/bn128/mulchain/mulchain.zkey"
expect_fail "wasm of another circuit" "makes witnesses of 1003 values, the zkey .*poseidon.zkey needs 557" \
    "$data/bn128/mulchain/input-1.json" "$data/bn128/mulchain/mulchain.wasm" "$data/bn128/poseidon/poseidon.zkey"
"$zkpipe" keygen --insecure-dev "$data/witgen/guard.r1cs" "$tmp/guard.zkey" >/dev/null 2>&1
echo '{"x": 5, "m": [[1, 2, 3], [4, 5, 6]]}' >"$tmp/ok.json"
echo '{"x": 1000, "m": [[1, 2, 3], [4, 5, 6]]}' >"$tmp/rejected.json"
if "$zkpipe" fullprove --cache "$cache" "$tmp/ok.json" "$data/witgen/guard.wasm" "$tmp/guard.zkey" "$tmp/g.json" "$tmp/gpub.json" &&
    "$zkpipe" verify "$tmp/guard.zkey" "$tmp/gpub.json" "$tmp/g.json" >/dev/null; then
    echo "ok   guard"
else
    echo "FAIL guard: no verified proof"; fail=$((fail + 1))
fi
expect_fail "input the circuit rejects" "rejected.json: the circuit rejects the input .*Assert Failed. Error in template Guard_0 line: 8" \
    "$tmp/rejected.json" "$data/witgen/guard.wasm" "$tmp/guard.zkey"
[ $fail -eq 0 ] || { echo "$fail failed"; exit 1; }
