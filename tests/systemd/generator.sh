#!/bin/bash
# zkpipe-generator on its own: stage counts from the ini become zkpipe.target wants, the spool becomes
# ReadWritePaths= drop-ins, and a bad or missing ini generates nothing (with a file:line message).
#   generator.sh PATH/TO/zkpipe-generator [exporter|no-exporter] [api|no-api]  (whether zkpipe-exporter,
#   zkpipe-api are built)
set -euo pipefail
GEN=${1:?usage: generator.sh zkpipe-generator [exporter|no-exporter]}
EXPORTER=${2:-no-exporter}
T=$(mktemp -d "${TMPDIR:-/tmp}/zkpipe-gen.XXXXXX")
trap 'rm -rf "$T"' EXIT
export SYSTEMD_LOG_TARGET=console
fail() { echo "FAIL: $*" >&2; exit 1; }
wants() { (cd "$1/zkpipe.target.wants" 2>/dev/null && ls) | tr '\n' ' ' | sed 's/ $//'; }

# --- counts from the ini
cat > "$T/a.ini" <<INI
[pipeline]
name = gen
spool = /srv/zkpipe/spool
[synth]
instances = 3
[gpu]
devices = 2
backend = cpu
[finalizer]
instances = 2
INI
mkdir "$T/out" "$T/early" "$T/late"
ZKPIPE_CONFIG=$T/a.ini "$GEN" "$T/out" "$T/early" "$T/late" 2> "$T/log" || fail "generator failed: $(cat "$T/log")"
got=$(wants "$T/out")
exp="zkpipe-finalizerd@1.service zkpipe-finalizerd@2.service zkpipe-gpud@0.service zkpipe-gpud@1.service zkpipe-synthd@1.service zkpipe-synthd@2.service zkpipe-synthd@3.service"
[ "$EXPORTER" = exporter ] && exp="zkpipe-exporter.service $exp"
[ "$got" = "$exp" ] || fail "wants: got '$got', expected '$exp'"
l=$(readlink "$T/out/zkpipe.target.wants/zkpipe-synthd@3.service")
case "$l" in /*/zkpipe-synthd@.service) ;; *) fail "link target '$l'";; esac
grep -qx 'ReadWritePaths=-/srv/zkpipe/spool' "$T/out/zkpipe-segment.service.d/50-zkpipe-generator.conf" \
  || fail "segment drop-in must tolerate a missing spool (it creates it)"
for u in zkpipe-synthd@ zkpipe-gpud@ zkpipe-finalizerd@; do
  f=$T/out/$u.service.d/50-zkpipe-generator.conf
  [ -f "$f" ] || fail "no drop-in $f"
  grep -qx 'ReadWritePaths=/srv/zkpipe/spool' "$f" || fail "$f lacks ReadWritePaths for the spool: $(cat "$f")"
done
grep -qx 'ExecStartPre=+/usr/bin/install -d -o zkpipe -g zkpipe -m 2770 /srv/zkpipe/spool' \
  "$T/out/zkpipe-segment.service.d/50-zkpipe-generator.conf" || fail "segment drop-in does not create the spool"
[ -z "$(find "$T/early" "$T/late" -mindepth 1)" ] || fail "wrote into the early/late dirs"
grep -q 'wants 3 synthd, 2 gpud, 2 finalizerd' "$T/log" || fail "no summary line: $(cat "$T/log")"
echo "ok: 3 synthd, 2 gpud, 2 finalizerd + drop-ins"

# --- defaults (empty [synth]): 2 synthd, gpud@0, finalizerd@1; segment on hugetlbfs opens its folder
printf '[pipeline]\nsegment = /dev/hugepages/zkpipe-x\n' > "$T/b.ini"
mkdir "$T/outb"
ZKPIPE_CONFIG=$T/b.ini "$GEN" "$T/outb" 2> "$T/log" || fail "generator failed on defaults: $(cat "$T/log")"
got=$(wants "$T/outb")
exp="zkpipe-finalizerd@1.service zkpipe-gpud@0.service zkpipe-synthd@1.service zkpipe-synthd@2.service"
[ "$EXPORTER" = exporter ] && exp="zkpipe-exporter.service $exp"
[ "$got" = "$exp" ] || fail "defaults: got '$got', expected '$exp'"
grep -qx 'ReadWritePaths=/var/spool/zkpipe/main /dev/hugepages' "$T/outb/zkpipe-gpud@.service.d/50-zkpipe-generator.conf" \
  || fail "hugetlbfs segment folder not opened: $(cat "$T/outb/zkpipe-gpud@.service.d/50-zkpipe-generator.conf")"
echo "ok: defaults"

# --- bad ini: nothing generated, error names file:line
printf '[pipeline]\nname = x\n[synth]\ninstances = 3\nfrobnicate = 1\n' > "$T/c.ini"
mkdir "$T/outc"
ZKPIPE_CONFIG=$T/c.ini "$GEN" "$T/outc" 2> "$T/log" || fail "generator must exit 0 on a bad ini (systemd only logs it)"
[ -z "$(ls -A "$T/outc")" ] || fail "bad ini generated: $(ls -R "$T/outc")"
grep -q "c.ini:5: .*frobnicate" "$T/log" || fail "no file:line error: $(cat "$T/log")"
echo "ok: bad ini -> nothing, '$(head -1 "$T/log")'"

# --- a count out of range is a bad ini too
printf '[synth]\ninstances = 0\n' > "$T/d.ini"
mkdir "$T/outd"
ZKPIPE_CONFIG=$T/d.ini "$GEN" "$T/outd" 2> "$T/log" || fail "exit status on instances = 0"
[ -z "$(ls -A "$T/outd")" ] || fail "instances = 0 generated something"
grep -q "d.ini:2:" "$T/log" || fail "no file:line error for instances = 0: $(cat "$T/log")"
echo "ok: instances = 0 rejected"

# --- a spool path a unit file cannot carry: nothing generated
printf '[pipeline]\nspool = /srv/my spool\n' > "$T/e.ini"
mkdir "$T/oute"
ZKPIPE_CONFIG=$T/e.ini "$GEN" "$T/oute" 2> "$T/log" || fail "exit status on a spool with a space"
[ -z "$(ls -A "$T/oute")" ] || fail "spool with a space generated something"
echo "ok: unusable spool path -> nothing"

# --- no ini: nothing, exit 0
mkdir "$T/outf"
ZKPIPE_CONFIG=$T/missing.ini "$GEN" "$T/outf" 2> "$T/log" || fail "exit status without an ini"
[ -z "$(ls -A "$T/outf")" ] || fail "missing ini generated something"
echo "ok: no ini -> nothing"

# --- the exporter: loopback (the default) limits it to localhost; another address does not
if [ "$EXPORTER" = exporter ]; then
  f=$T/outb/zkpipe-exporter.service.d/50-zkpipe-generator.conf
  grep -qx 'IPAddressDeny=any' "$f" && grep -qx 'IPAddressAllow=localhost' "$f" \
    || fail "exporter on 127.0.0.1:9821 not limited to localhost: $(cat "$f")"
  printf '[exporter]\nlisten = 0.0.0.0:9100\n' > "$T/g.ini"
  mkdir "$T/outg"
  ZKPIPE_CONFIG=$T/g.ini "$GEN" "$T/outg" 2> "$T/log" || fail "generator failed on [exporter] listen: $(cat "$T/log")"
  ! grep -q '^IPAddress' "$T/outg/zkpipe-exporter.service.d/50-zkpipe-generator.conf" \
    || fail "exporter on 0.0.0.0 limited to localhost"
  grep -q 'listen = 0.0.0.0:9100' "$T/outg/zkpipe-exporter.service.d/50-zkpipe-generator.conf" || fail "drop-in lacks the address"
  printf '[exporter]\nlisten = localhost:9100\n' > "$T/h.ini"
  mkdir "$T/outh"
  ZKPIPE_CONFIG=$T/h.ini "$GEN" "$T/outh" 2> "$T/log" || true
  [ -z "$(ls -A "$T/outh")" ] || fail "a bad [exporter] listen generated something"
  grep -q "h.ini:2: listen = localhost:9100: expected ADDRESS:PORT" "$T/log" || fail "no file:line error for listen: $(cat "$T/log")"
  echo "ok: exporter wanted; localhost only on loopback; a bad listen refused"
fi

# --- zkpipe-api (where built): wanted once its tokens file exists, the spool writable, localhost only on loopback
if [ "${3:-no-api}" = api ]; then
  printf '[pipeline]\nspool = /srv/zkpipe/sp\n[api]\nlisten = 127.0.0.1:9080\ntokens = %s/tok\n' "$T" > "$T/api.ini"
  mkdir "$T/outapi1" "$T/outapi2"
  ZKPIPE_CONFIG=$T/api.ini "$GEN" "$T/outapi1" 2> "$T/log" || fail "generator failed on [api]: $(cat "$T/log")"
  case " $(wants "$T/outapi1") " in *" zkpipe-api.service "*) fail "zkpipe-api wanted without a tokens file";; esac
  touch "$T/tok"
  ZKPIPE_CONFIG=$T/api.ini "$GEN" "$T/outapi2" 2> "$T/log" || fail "generator failed on [api]: $(cat "$T/log")"
  case " $(wants "$T/outapi2") " in *" zkpipe-api.service "*) ;; *) fail "zkpipe-api not wanted: $(wants "$T/outapi2")";; esac
  f=$T/outapi2/zkpipe-api.service.d/50-zkpipe-generator.conf
  grep -qx 'ReadWritePaths=/srv/zkpipe/sp' "$f" && grep -qx 'IPAddressAllow=localhost' "$f" || fail "api drop-in: $(cat "$f")"
  echo "ok: zkpipe-api wanted once its tokens file exists; the spool writable; localhost only on loopback"
fi

# --- usage
if "$GEN" 2>/dev/null; then fail "no arguments accepted"; fi
echo PASS
