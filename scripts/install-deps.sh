#!/bin/sh
# Installs what zkpipe needs to build and test on Debian 12 (run as root), and snarkjs 0.7.6 (the
# test oracle) into ./node_modules from package-lock.json. Safe to run again.
#   scripts/install-deps.sh          everything: the build, every test and benchmark
#   scripts/install-deps.sh --main   only what the main job runs (scripts/main-job.sh): the CLI and
#                                    the three daemons on the CPU backend, witness generation from
#                                    inputs (nettle, wabt), snarkjs to check the proofs
#   scripts/install-deps.sh --list [--main]   print the Debian packages it would install, one a line
set -eu
cd "$(dirname "$0")/.."
main_only=0
list=0
for a in "$@"; do
    case $a in
    --main) main_only=1 ;;
    --list) list=1 ;;
    *) echo "install-deps.sh: unknown option $a (expected --main, --list or nothing)" >&2; exit 2 ;;
    esac
done
# the build, the daemons (liburing, libsystemd, inih) and witness generation (nettle, wabt)
pkgs="meson ninja-build pkg-config gcc python3 liburing-dev libsystemd-dev libinih-dev libjson-c-dev nettle-dev libxxhash-dev wabt"
if [ $main_only = 0 ]; then
    # g++ (the CUDA host emulation's test), systemd-container (the systemd tests' nspawn machines),
    # clang-14 and libclang-rt-14-dev (libFuzzer, the sanitizers): the fuzz targets (fuzz/)
    pkgs="$pkgs g++ systemd-container clang-14 libclang-rt-14-dev"
    # observing the pipeline: the exporter (libmicrohttpd), its tests (promtool and prometheus,
    # headless chromium, curl) and zkpipe top's (tmux)
    pkgs="$pkgs libmicrohttpd-dev prometheus chromium curl tmux"
    # zkpipe submit|wait|status --url (the HTTP job API's client, docs/api.md)
    pkgs="$pkgs libcurl4-openssl-dev"
    # the fleet queue (fleet/, feeder/, tests/fleet: a private PostgreSQL server)
    pkgs="$pkgs libpq-dev postgresql"
    # circom's C++ generator in a test (gmp, nasm, nlohmann-json)
    pkgs="$pkgs libgmp-dev nasm nlohmann-json3-dev"
    # the benchmarks' arithmetic in shell (bench/witness, witness-cold, scale/pipeline.sh)
    pkgs="$pkgs bc"
fi
if [ $list = 1 ]; then printf '%s\n' $pkgs; exit 0; fi
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || missing="$missing nodejs npm"
if [ -n "$missing" ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq $missing >/dev/null
fi
# npm ci again whenever package-lock.json is newer than what node_modules was installed from
if [ ! -x node_modules/.bin/snarkjs ] || [ ! -x node_modules/.bin/circom2 ] || [ ! -d node_modules/circomlib ] ||
    [ package-lock.json -nt node_modules/.package-lock.json ]; then
    npm ci --no-audit --no-fund --loglevel=error
fi
