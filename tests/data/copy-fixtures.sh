#!/bin/sh
# Copies the fixtures the tests use from the shared fixture set (made by its make.sh with
# snarkjs 0.7.6 / circom 2.2.3) into tests/data, so that tests never read outside the project.
# Usage: tests/data/copy-fixtures.sh [SHARED_FIXTURES_DIR]   (default: ../shared/fixtures)
# To regenerate the fixtures themselves from scratch, run tests/data/make.sh (a copy of the
# shared make.sh), then this script with its output directory.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=${1:-$here/../../../shared/fixtures}
for d in bn128/mulchain bn128/poseidon bn128/medium bls12381/mulchain; do
    mkdir -p "$here/$d"
    for f in "$src/$d"/*; do
        case "$f" in *.sym|*_js) continue ;; esac
        cp "$f" "$here/$d/"
    done
    # circom's witness generator (zkpipe witness, tests/witgen); the JavaScript around it is not needed
    n=$(basename "$d")
    cp "$src/$d/${n}_js/$n.wasm" "$here/$d/$n.wasm"
done
mkdir -p "$here/vectors" "$here/bad"
cp "$src"/vectors/* "$here/vectors/"
cp "$src"/bad/* "$here/bad/"
cp "$src/make.sh" "$here/make.sh"
chmod -R u+w "$here"
echo "copied fixtures from $src"
