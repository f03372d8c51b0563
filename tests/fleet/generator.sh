#!/bin/bash
# zkpipe-generator and the fleet: an ini with a [source postgres] dsn makes zkpipe.target want
# zkpipe-feeder.service with the spool opened to it; without one, no feeder. Bad [source postgres]
# keys are one-line errors naming the file and line.
set -u
BUILD=${ZKPIPE_BUILD_ROOT:?}
GEN=$BUILD/systemd/zkpipe-generator
[ -x "$GEN" ] || { echo "SKIP: $GEN not built"; exit 77; }
T=$(mktemp -d /tmp/zkpipe-fleet-gen.XXXXXX)
trap '[ "${KEEP_TMP:-0}" = 1 ] || rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
printf '[pipeline]\nspool = %s/spool\n[source postgres]\ndsn = host=db user=zkpipe\nlease = 20\n' "$T" >"$T/fleet.ini"
printf '[pipeline]\nspool = %s/spool\n' "$T" >"$T/plain.ini"
mkdir -p "$T/a" "$T/b"
ZKPIPE_CONFIG=$T/fleet.ini SYSTEMD_LOG_TARGET=console "$GEN" "$T/a" 2>/dev/null || fail "generator failed"
[ -L "$T/a/zkpipe.target.wants/zkpipe-feeder.service" ] || fail "no feeder wanted: $(ls "$T/a/zkpipe.target.wants")"
grep -q "^ReadWritePaths=$T/spool$" "$T/a/zkpipe-feeder.service.d/"*.conf || fail "the feeder's drop-in lacks the spool"
ZKPIPE_CONFIG=$T/plain.ini SYSTEMD_LOG_TARGET=console "$GEN" "$T/b" 2>/dev/null || fail "generator failed"
[ -L "$T/b/zkpipe.target.wants/zkpipe-feeder.service" ] && fail "a feeder is wanted without [source postgres]"
[ -L "$T/b/zkpipe.target.wants/zkpipe-synthd@1.service" ] || fail "the plain ini lost its stages"
printf '[pipeline]\nspool = /x\n[source postgres]\nlease = 1\n' >"$T/bad.ini"
out=$("$BUILD/cli/zkpipe" setup --config "$T/bad.ini" 2>&1) && fail "lease = 1 accepted"
echo "$out" | grep -q "bad.ini:4: lease = 1: expected seconds from 2 to 86400" || fail "bad lease: $out"
printf '[pipeline]\nspool = /x\n[source postgres]\nbogus = 1\n' >"$T/bad.ini"
out=$("$BUILD/cli/zkpipe" setup --config "$T/bad.ini" 2>&1) && fail "an unknown key accepted"
echo "$out" | grep -q "bad.ini:4: unknown key 'bogus' in \[source postgres\]" || fail "unknown key: $out"
printf '[pipeline]\nspool = /x\n[source postgres]\nmax_attempts = -1\n' >"$T/bad.ini"
out=$("$BUILD/cli/zkpipe" setup --config "$T/bad.ini" 2>&1) && fail "max_attempts = -1 accepted"
echo "$out" | grep -q "bad.ini:4: max_attempts = -1: expected 0 (no cap) to 1000 claims" || fail "bad max_attempts: $out"
echo "PASS: the feeder is wanted exactly when the ini has a fleet source"
