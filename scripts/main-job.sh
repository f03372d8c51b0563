#!/bin/sh
# The main job: builds zkpipe, then proves the bundled circuits end to end and verifies every proof.
# When the pipeline daemons are built, it runs them (scripts/run-demo.sh); otherwise it proves each
# bundled witness with the one-shot `zkpipe prove` and verifies it with snarkjs.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
if [ -d build ]; then meson setup --reconfigure build >/dev/null; else meson setup build >/dev/null; fi
ninja -C build
if [ -x build/gpud/zkpipe-gpud ] && [ -x scripts/run-demo.sh ]; then
    exec ./scripts/run-demo.sh --snarkjs "$@"
fi
out=$(mktemp -d /tmp/zkpipe-main.XXXXXX)
d=tests/data
n=0
for job in bn128/mulchain:mulchain:witness-1 bn128/mulchain:mulchain:witness-2 \
           bn128/poseidon:poseidon:witness-1 bn128/poseidon:poseidon:witness-2 \
           bn128/poseidon:poseidon:witness-3 bn128/poseidon:poseidon:witness-4 \
           bls12381/mulchain:mulchain:witness-1 bls12381/mulchain:mulchain:witness-2 \
           bn128/medium:medium:witness; do
    dir=${job%%:*}; rest=${job#*:}; stem=${rest%%:*}; wit=${rest#*:}
    name=$(echo "$dir-$wit" | tr / -)
    build/cli/zkpipe prove --timings --r1cs "$d/$dir/$stem.r1cs" "$d/$dir/$stem.zkey" "$d/$dir/$wit.wtns" \
        "$out/$name.proof.json" "$out/$name.public.json" 2>"$out/$name.timings"
    printf '%-34s %s  ' "$name" "$(grep total "$out/$name.timings" | tr -s ' ')"
    node_modules/.bin/snarkjs groth16 verify "$d/$dir/vk.json" "$out/$name.public.json" "$out/$name.proof.json" \
        | grep -q OK && echo "snarkjs: OK"
    n=$((n + 1))
done
echo "$n proofs written to $out, every one accepted by snarkjs groth16 verify"
