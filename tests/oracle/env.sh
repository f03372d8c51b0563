# Sourced by the snarkjs oracle scripts (tests/oracle/prove_oracle.sh, tests/test_keygen.sh): the
# paths meson passes, exit 77 when snarkjs (npm ci) is not installed, a temporary directory removed
# on exit, and fail=0 for the script to count failures in.
set -u
root=${ZKPIPE_SOURCE_ROOT:?}
build=${ZKPIPE_BUILD_ROOT:?}
zkpipe=$build/cli/zkpipe
snarkjs=$root/node_modules/.bin/snarkjs
data=$root/tests/data
if [ ! -x "$snarkjs" ]; then
    echo "SKIP: snarkjs not installed (run npm ci in $root)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
