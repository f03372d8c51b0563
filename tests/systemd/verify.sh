#!/bin/bash
# `systemd-analyze verify` of every zkpipe unit as `meson install` lays them out, with the drop-ins
# and wants zkpipe-generator makes from a sample ini. verify exits 0 on unknown keys and typos, so any
# output at all is a failure. A deliberately broken copy checks that verify sees our files at all.
# Runs in a private mount namespace where the installed tree is overlaid on the real /usr.
set -euo pipefail
B=${ZKPIPE_BUILD_ROOT:?run through meson test}
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze not installed"; exit 77; }

if [ -z "${ZKPIPE_VERIFY_INNER:-}" ]; then
  T=$(mktemp -d "${TMPDIR:-/tmp}/zkpipe-verify.XXXXXX")
  trap 'rm -rf "$T"' EXIT
  meson install -C "$B" --destdir "$T/dest" --no-rebuild --quiet > "$T/install.log" 2>&1 \
    || fail "meson install: $(tail -20 "$T/install.log")"
  export ZKPIPE_VERIFY_INNER=$T
  # the inner run is a child (not exec'd), so this shell's trap removes $T once its namespace is gone
  if [ "$(id -u)" = 0 ]; then
    rc=0
    unshare -m --propagation private "$0" "$@" || rc=$?
    exit $rc
  fi
  unshare -rm --propagation private true 2>/dev/null \
    || { echo "SKIP: not root and no user namespaces: cannot overlay the install tree on /usr"; exit 77; }
  rc=0
  unshare -rm --propagation private "$0" "$@" || rc=$?
  exit $rc
fi

T=$ZKPIPE_VERIFY_INNER
. "$B/systemd/install-paths.sh"
# Overlay each top-level folder of the install tree on the real one (so /usr/local/bin/zkpipe-synthd,
# /usr/local/lib/systemd/system/... exist exactly where the units and systemd look for them).
# Shallower first (prefix /usr: usr/ and lib/ = /usr/lib; the /usr overlay must not hide the other).
for d in "$T/dest"/*; do
  echo "$(realpath "/$(basename "$d")") $d"
done | awk '{ print length($1), $0 }' | sort -n | while read -r _ real d; do
  mount -t overlay overlay -o "lowerdir=$d:$real" "$real" || fail "overlay $d on $real"
done
GEN=$ZKPIPE_GENERATORDIR/zkpipe-generator
[ -x "$GEN" ] || fail "generator not installed at $GEN"

mkdir -p "$T/gen"
cat > "$T/zkpipe.ini" <<INI
[pipeline]
name = verify
[synth]
instances = 2
[gpu]
devices = 1
backend = cpu
INI
ZKPIPE_CONFIG=$T/zkpipe.ini SYSTEMD_LOG_TARGET=console "$GEN" "$T/gen" "$T/gen" "$T/gen" || fail "generator"

UNITS=(zkpipe.target zkpipe-segment.service zkpipe-reconcile.service zkpipe-synthd@1.service zkpipe-synthd@2.service
       zkpipe-gpud@0.service zkpipe-finalizerd@1.service)
# the exporter, where it is built (libmicrohttpd)
[ -x "$B/exporter/zkpipe-exporter" ] && UNITS+=(zkpipe-exporter.service)
# zkpipe-api, where it is built (libmicrohttpd, nettle)
[ -x "$B/api/zkpipe-api" ] && UNITS+=(zkpipe-api.service)
for u in zkpipe.target zkpipe-segment.service zkpipe-reconcile.service zkpipe-synthd@.service zkpipe-gpud@.service zkpipe-finalizerd@.service; do
  [ -f "$ZKPIPE_UNITDIR/$u" ] || fail "$u not installed in $ZKPIPE_UNITDIR"
done
[ -f "$ZKPIPE_SYSUSERSDIR/zkpipe.conf" ] || fail "sysusers.d snippet not installed"
[ -f "$ZKPIPE_TMPFILESDIR/zkpipe.conf" ] || fail "tmpfiles.d snippet not installed"

# The unit search path: generator output first (as /run/systemd/generator is), then the defaults.
export SYSTEMD_UNIT_PATH="$T/gen:"
out=$(systemd-analyze verify --man=no --generators=no "${UNITS[@]}" 2>&1) || fail "verify exited non-zero: $out"
[ -z "$out" ] || fail "systemd-analyze verify printed:
$out"
echo "ok: verify clean for ${UNITS[*]} (+ generated drop-ins)"
# zkpipe-api's hardening (issue 24: systemd-analyze security <= 2.0), from the unit file alone
if [ -x "$B/api/zkpipe-api" ]; then
  x=$(systemd-analyze security --offline=yes --no-pager "$ZKPIPE_UNITDIR/zkpipe-api.service" 2>/dev/null |
      awk '/Overall exposure level/ { print $(NF-2) }')
  [ -n "$x" ] && awk -v x="$x" 'BEGIN { exit !(x <= 2.0) }' || fail "zkpipe-api.service exposure '$x' > 2.0"
  echo "ok: zkpipe-api.service exposure $x"
fi

# Negative control: the same check must notice a typo.
mkdir -p "$T/bad"
sed 's/^RestartSec=/RestartSecs=/' "$ZKPIPE_UNITDIR/zkpipe-synthd@.service" > "$T/bad/zkpipe-synthd@.service"
out=$(SYSTEMD_UNIT_PATH="$T/bad:$T/gen:" systemd-analyze verify --man=no --generators=no zkpipe-synthd@1.service 2>&1 || true)
case "$out" in *"Unknown key 'RestartSecs'"*) ;; *) fail "verify did not flag a typo in our unit: '$out'";; esac
echo "ok: a typo is flagged"
# sysusers.d and tmpfiles.d snippets applied to an empty root: the user exists, the spool parent
# belongs to it.
mkdir -p "$T/root/etc"
out=$(systemd-sysusers --root="$T/root" "$ZKPIPE_SYSUSERSDIR/zkpipe.conf" 2>&1) || fail "sysusers: $out"
grep -q '^zkpipe:x:[0-9]*:[0-9]*:.*:/usr/sbin/nologin$' "$T/root/etc/passwd" || fail "no zkpipe user: $(cat "$T/root/etc/passwd")"
out=$(systemd-tmpfiles --root="$T/root" --create "$ZKPIPE_TMPFILESDIR/zkpipe.conf" 2>&1) || fail "tmpfiles: $out"
uid=$(awk -F: '$1 == "zkpipe" { print $3 }' "$T/root/etc/passwd")
[ "$(stat -c '%u %a' "$T/root/var/spool/zkpipe")" = "$uid 750" ] || fail "spool parent: $(stat -c '%u %a' "$T/root/var/spool/zkpipe")"
echo "ok: sysusers.d makes user zkpipe (uid $uid), tmpfiles.d its spool parent"
echo PASS
