#!/bin/sh
# The main job: builds zkpipe, then proves the bundled circuits end to end and verifies every proof.
# When the pipeline daemons are built, it runs them (scripts/run-demo.sh); otherwise it proves each
# bundled witness with the one-shot `zkpipe prove` and verifies it with snarkjs.
set -eu
cd "$(dirname "$0")/.."
# Only what the demo runs: the packages it needs, no CUDA backend (the demo proves on the CPU), and
# of the build only the CLI and the three daemons (run-demo.sh names them); scripts/test.sh builds
# and tests everything in the same ./build.
./scripts/install-deps.sh --main
if [ -d build ]; then meson setup --reconfigure build -Dcuda=disabled >/dev/null; else meson setup build -Dcuda=disabled >/dev/null; fi
if [ -x scripts/run-demo.sh ] && ninja -C build -t targets all 2>/dev/null | grep -q '^gpud/zkpipe-gpud:'; then
    exec ./scripts/run-demo.sh --snarkjs "$@"
fi
ninja -C build cli/zkpipe
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
