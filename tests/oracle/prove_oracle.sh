#!/bin/bash
# Oracle test: for every fixture circuit and witness, `zkpipe prove` (with the r1cs check), then
# `snarkjs groth16 verify` (0.7.6, from npm ci) must accept the proof, public.json must be
# byte-identical to snarkjs's, and a tampered public.json must be rejected.
. "$(dirname "$0")/env.sh"
n=0
check() { # dir stem witness public
    local dir=$data/$1 stem=$2 wit=$3 pub=$4
    n=$((n + 1))
    if ! "$zkpipe" prove --r1cs "$dir/$stem.r1cs" "$dir/$stem.zkey" "$dir/$wit" "$tmp/proof.json" "$tmp/public.json"; then
        echo "FAIL $1/$wit: zkpipe prove failed"; fail=1; return
    fi
    if ! cmp -s "$tmp/public.json" "$dir/$pub"; then
        echo "FAIL $1/$wit: public.json differs from snarkjs's"; fail=1
    fi
    if ! "$snarkjs" groth16 verify "$dir/vk.json" "$tmp/public.json" "$tmp/proof.json" | grep -q "OK"; then
        echo "FAIL $1/$wit: snarkjs rejects zkpipe's proof"; fail=1; return
    fi
    # proof.json is formatted exactly as snarkjs writes it (JSON.stringify(o, null, 1), keys in its order)
    if ! python3 - "$tmp/proof.json" "$1" <<'PY'
import json, sys
s = open(sys.argv[1]).read()
o = json.loads(s)
assert s == json.dumps(o, indent=1), "formatting differs from JSON.stringify(o, null, 1)"
assert list(o) == ["pi_a", "pi_b", "pi_c", "protocol", "curve"], list(o)
assert o["curve"] == sys.argv[2].split("/")[0] and o["protocol"] == "groth16"
assert o["pi_a"][2] == "1" and o["pi_c"][2] == "1" and o["pi_b"][2] == ["1", "0"]
PY
    then
        echo "FAIL $1/$wit: proof.json is not in snarkjs's format"; fail=1
    fi
    # tamper: add one to the last public signal's last digit (mod 10)
    python3 - "$tmp/public.json" "$tmp/tampered.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
v = int(p[-1]); p[-1] = str(v + 1 if v % 10 != 9 else v - 1)
open(sys.argv[2], "w").write(json.dumps(p, indent=1))
PY
    if "$snarkjs" groth16 verify "$dir/vk.json" "$tmp/tampered.json" "$tmp/proof.json" | grep -q "OK"; then
        echo "FAIL $1/$wit: snarkjs accepts a tampered public.json"; fail=1; return
    fi
    echo "ok   $1/$wit"
}
check bn128/mulchain mulchain witness-1.wtns public-1.json
check bn128/mulchain mulchain witness-2.wtns public-2.json
for k in 1 2 3 4; do check bn128/poseidon poseidon witness-$k.wtns public-$k.json; done
check bls12381/mulchain mulchain witness-1.wtns public-1.json
check bls12381/mulchain mulchain witness-2.wtns public-2.json
check bn128/medium medium witness.wtns public.json
# Threads: the default is the CPUs of the affinity mask (taskset), and with every CPU taken each
# worker is bound to one of its own (zk/threads.h); the proofs above ran that way.
ncpu=$(nproc)
med=$data/bn128/medium
if [ "$ncpu" -ge 2 ] && [ -z "${OMP_PROC_BIND-}${OMP_PLACES-}${GOMP_CPU_AFFINITY-}" ]; then
    first=$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')
    taskset -c "$first" "$zkpipe" prove --timings "$med/medium.zkey" "$med/witness.wtns" "$tmp/proof.json" \
        "$tmp/public.json" 2>"$tmp/timings" || { echo "FAIL prove under taskset -c $first"; fail=1; }
    grep -q "threads 1\$" "$tmp/timings" || { echo "FAIL under taskset -c $first: $(head -1 "$tmp/timings")"; fail=1; }
    "$zkpipe" prove --timings "$med/medium.zkey" "$med/witness.wtns" "$tmp/proof.json" "$tmp/public.json" \
        2>"$tmp/timings" || { echo "FAIL prove --timings"; fail=1; }
    want="threads $ncpu ($((ncpu - 1)) worker"
    grep -qF "$want" "$tmp/timings" || { echo "FAIL: '$(head -1 "$tmp/timings")' lacks '$want'"; fail=1; }
    # libgomp binding as told: it holds the main thread to one CPU before main(), yet every CPU is used
    OMP_PROC_BIND=close OMP_PLACES=cores "$zkpipe" prove --timings "$med/medium.zkey" "$med/witness.wtns" \
        "$tmp/proof.json" "$tmp/public.json" 2>"$tmp/timings" || { echo "FAIL prove under OMP_PROC_BIND"; fail=1; }
    grep -q "threads $ncpu\$" "$tmp/timings" || { echo "FAIL under OMP_PROC_BIND=close: $(head -1 "$tmp/timings")"; fail=1; }
    echo "ok   threads: 1 under taskset -c $first, $ncpu with $((ncpu - 1)) bound, $ncpu under OMP_PROC_BIND=close"
fi
echo "$n proofs checked"
exit $fail
