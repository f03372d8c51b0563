#!/bin/bash
# Makes the 2^18 benchmark circuit in bench/data/pchain18/ (bench/make-circuits.sh pchain18: the
# 507-hash Poseidon chain with an INSECURE `zkpipe keygen --insecure-dev` key, timing only).
# Usage: bench/make-pchain18.sh [--force]
exec "$(dirname "$0")/make-circuits.sh" ${1:+"$1"} pchain18
