#!/bin/sh
# zkpipe witness against snarkjs wtns calculate: byte-identical .wtns for every fixture circuit with a
# wasm (bn128 and bls12381) on every fixture input, and on random valid inputs (decimal strings,
# 0x hex, negative values, plain numbers, nested arrays) for mulchain on both curves, poseidon and guard,
# and on edge values of the field (0, 1, p - 1, ...) for mulchain on both curves.
. "$ZKPIPE_SOURCE_ROOT/tests/oracle/env.sh"
cache=$tmp/cache
check() { # NAME WASM INPUT
    if ! "$zkpipe" witness --cache "$cache" "$2" "$3" "$tmp/z.wtns" >/dev/null; then
        echo "FAIL $1: zkpipe witness failed"; fail=$((fail + 1)); return
    fi
    if ! "$snarkjs" wtns calculate "$2" "$3" "$tmp/s.wtns" >/dev/null; then
        echo "FAIL $1: snarkjs wtns calculate failed"; fail=$((fail + 1)); return
    fi
    if cmp -s "$tmp/z.wtns" "$tmp/s.wtns"; then echo "ok   $1"; else echo "FAIL $1: .wtns differs from snarkjs's"; fail=$((fail + 1)); fi
}
for d in bn128/mulchain bn128/poseidon bn128/medium bls12381/mulchain; do
    n=$(basename $d)
    for i in "$data/$d"/input*.json; do
        k=$(basename "$i" .json); k=${k#input}
        check "$d$k" "$data/$d/$n.wasm" "$i"
        # and the fixture witness, made by snarkjs when the fixtures were made
        if ! cmp -s "$tmp/z.wtns" "$data/$d/witness$k.wtns"; then
            echo "FAIL $d$k: differs from the fixture witness$k.wtns"; fail=$((fail + 1))
        fi
    done
done
seed=${WITGEN_SEED:-$(date +%s)}
echo "random inputs: WITGEN_SEED=$seed"
python3 - "$tmp" "$seed" <<'PY'
import json, random, sys
tmp, seed = sys.argv[1], int(sys.argv[2])
rnd = random.Random(seed)
BN = 21888242871839275222246405745257275088548364400416034343698204186575808495617
BLS = 52435875175126190479447740508185965837690552500527637822603658699938581184513
def form(v, p, free=True):
    """v written one of the ways circom's input JSON allows; free: v may be replaced by any value"""
    k = rnd.randrange(5)
    if k == 0: return str(v)                      # decimal string
    if k == 1: return hex(v)                      # 0x hex string
    if k == 2: return str(v - p)                  # negative: taken mod p
    if k == 3:                                    # a JSON number (negative ones too, when free)
        return v if v < 2**53 or not free else rnd.randrange(-2**53, 2**53)
    return str(v + p * rnd.randrange(1, 4))       # not reduced
for i in range(6):
    for name, p in (("mc_bn", BN), ("mc_bls", BLS)):
        json.dump({"a": form(rnd.randrange(p), p), "b": form(rnd.randrange(p), p)}, open(f"{tmp}/{name}-{i}.json", "w"))
    # poseidon: x, y, z with LessThan(32) on them (values below 2^32)
    json.dump({c: form(rnd.randrange(2**32), BN, free=False) for c in "xyz"},
              open(f"{tmp}/pos-{i}.json", "w"))
    m = [[form(rnd.randrange(BN), BN) for _ in range(3)] for _ in range(2)]
    json.dump({"x": rnd.randrange(1000), "m": m}, open(f"{tmp}/guard-{i}.json", "w"))
# edge values for the field multiplication (the compiled generator's native Montgomery product)
for name, p in (("bn", BN), ("bls", BLS)):
    edge = [0, 1, 2, p - 1, p - 2, (p - 1) // 2, (p + 1) // 2, 2**128 - 1, 2**253 % p, 2**255 % p]
    for i, (a, b) in enumerate([(a, b) for a in edge[::2] for b in edge[1::3]]):
        json.dump({"a": str(a), "b": str(b)}, open(f"{tmp}/edge_{name}-{i}.json", "w"))
PY
for i in 0 1 2 3 4 5; do
    check "random mulchain bn128 $i" "$data/bn128/mulchain/mulchain.wasm" "$tmp/mc_bn-$i.json"
    check "random mulchain bls12381 $i" "$data/bls12381/mulchain/mulchain.wasm" "$tmp/mc_bls-$i.json"
    check "random poseidon $i" "$data/bn128/poseidon/poseidon.wasm" "$tmp/pos-$i.json"
    check "random guard $i" "$data/witgen/guard.wasm" "$tmp/guard-$i.json"
done
for f in "$tmp"/edge_bn-*.json; do check "edge mulchain bn128 $(basename "$f")" "$data/bn128/mulchain/mulchain.wasm" "$f"; done
for f in "$tmp"/edge_bls-*.json; do check "edge mulchain bls12381 $(basename "$f")" "$data/bls12381/mulchain/mulchain.wasm" "$f"; done
[ $fail -eq 0 ] || { echo "$fail failed (WITGEN_SEED=$seed)"; exit 1; }
