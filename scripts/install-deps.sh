#!/bin/sh
# Installs what zkpipe needs to build and test on Debian 12 (run as root), and snarkjs 0.7.6 (the
# test oracle) into ./node_modules from package-lock.json. Safe to run again.
set -eu
cd "$(dirname "$0")/.."
pkgs="meson ninja-build pkg-config gcc g++ python3 liburing-dev libsystemd-dev libinih-dev libjson-c-dev nettle-dev wabt libgmp-dev nasm nlohmann-json3-dev systemd-container"
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
if [ ! -x node_modules/.bin/snarkjs ]; then
    npm ci --no-audit --no-fund --loglevel=error
fi
