#!/bin/bash
# zkpipe under a real systemd: PID 1 of a systemd-nspawn container booted from the host's own /usr
# (-D / --volatile=yes: tmpfs root, host /usr read-only, empty /etc, nothing downloaded).
# The `meson install` tree is overlaid on the container's /usr, then installed the way a package's
# post-install would (sysusers, tmpfiles, daemon-reload), and driven with nsenter:
#   verify + security score of every unit -> start zkpipe.target (2 synthd) -> submit a batch ->
#   kill -9 gpud mid-batch (it stopped itself at a test point) -> systemd restarts it alone ->
#   slab reclaimed, every proof valid, journal fields -> SIGSTOP gpud -> the watchdog restarts it ->
#   a slow key load under a short TimeoutStartSec= (EXTEND_TIMEOUT_USEC=) -> synth count 3 +
#   daemon-reload + start -> 3 synthd -> count 2 -> synthd@3 stops alone -> broken ini + start ->
#   nothing stops -> stop the target mid-job -> every stage drains, no slab owned -> start again,
#   the job completes -> stop idle -> every slab FREE -> slabs 4 -> 5: the set-up unit refuses the
#   kept segment, no stage starts -> bad ini -> the generator logs file:line, the target wants no
#   stage. Teardown (trap) leaves no process, cgroup or mount behind; logs stay only on failure.
# Exit 77 only when a container cannot be booted here at all (not root, no systemd-nspawn, no
# writable cgroup hierarchy, nspawn refused by the kernel), with the reason.
set -euo pipefail

B=${ZKPIPE_BUILD_ROOT:?run through meson test}
S=${ZKPIPE_SOURCE_ROOT:?run through meson test}
BASE=${TMPDIR:-/tmp}/zkpipe-nspawn
NAME=zkpipe-e2e-$$
WORK=$BASE/$NAME
CG=zkpipe-e2e-$$
DATA=$S/tests/data/bn128/mulchain
SNARKJS=$S/node_modules/.bin/snarkjs   # also checks every proof when `npm ci` has run
BATCH=6       # partitions in the batch
KILL_PART=2   # gpud stops itself at this partition; killed there
T_START=$(date +%s.%N)
NSP= ; L= ; KEEP_LOGS=${ZKPIPE_E2E_KEEP:-}

el()   { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
log()  { printf '[%6ss] %s\n' "$(el "$T_START")" "$*"; }
skip() { echo "SKIP: $*"; exit 77; }
die()  { log "FAIL: $*" >&2; dump_diag; exit 1; }
C()    { nsenter -t "$L" -a -- "$@"; }                       # run inside the container
CZ()   { nsenter -t "$L" -a -- setpriv --reuid=zkpipe --regid=zkpipe --init-groups -- "$@"; }  # as zkpipe
prop() { C systemctl show -p "$2" --value "$1"; }
active() { [ "$(C systemctl is-active "$1" 2>/dev/null || true)" = active ]; }
# wait_for SECONDS DESCRIPTION COMMAND...: poll every 0.1 s
wait_for() {
  local secs=$1 what=$2; shift 2
  local end=$(( $(date +%s) + secs ))
  while [ "$(date +%s)" -le "$end" ]; do "$@" && return 0; sleep 0.1; done
  die "timed out after ${secs}s waiting for: $what"
}

host_pid() {   # host PID of the container process with container PID $1
  local want=$1 p ns
  ns=$(readlink "/proc/$L/ns/pid")
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$ns" ] || continue
    awk -v w="$want" '/^NSpid:/ { if ($NF == w) f = 1 } END { exit !f }' "$p/status" 2>/dev/null \
      && { echo "${p#/proc/}"; return 0; }
  done
  return 1
}

dump_diag() {
  [ -n "$L" ] && [ -d "/proc/$L/root/run/systemd" ] || return 0
  set +e
  echo "---- systemctl status (container) ----" >&2
  C systemctl --no-pager --full status 'zkpipe*' 2>&1 | tail -80 >&2
  echo "---- journal (last 80 lines) ----" >&2
  journalctl --root="/proc/$L/root" --no-pager -o short-monotonic 2>/dev/null | tail -80 >&2
  KEEP_LOGS=1
}

teardown() {
  local rc=$?
  set +e
  if [ -n "$L" ] && [ -d "/proc/$L/root/run/systemd" ]; then
    mkdir -p "$WORK/logs"
    journalctl --root="/proc/$L/root" --no-pager -o short-monotonic > "$WORK/logs/journal.txt" 2>&1
  fi
  if [ -n "$NSP" ] && kill -0 "$NSP" 2>/dev/null; then
    kill -TERM "$NSP"      # the container halts cleanly
    for _ in $(seq 200); do kill -0 "$NSP" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$NSP" 2>/dev/null && { log "teardown: nspawn still up after 20 s, SIGKILL"; kill -KILL "$NSP"; sleep 1; }
  fi
  # A SIGKILLed nspawn orphans the container's init; SIGKILL to a PID-namespace init ends it all.
  if [ -n "$L" ] && kill -0 "$L" 2>/dev/null; then
    kill -KILL "$L"
    for _ in $(seq 50); do kill -0 "$L" 2>/dev/null || break; sleep 0.1; done
  fi
  for h in systemd unified; do
    [ -d "/sys/fs/cgroup/$h/$CG" ] && find "/sys/fs/cgroup/$h/$CG" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  [ -d "/sys/fs/cgroup/$CG" ] && [ ! -d /sys/fs/cgroup/unified ] && \
    find "/sys/fs/cgroup/$CG" -depth -type d -exec rmdir {} \; 2>/dev/null
  rm -rf "/run/systemd/nspawn/propagate/$NAME"
  if { [ "$rc" = 0 ] && [ -z "$KEEP_LOGS" ]; } || [ "$rc" = 77 ]; then rm -rf "$WORK"
  else rm -rf "$WORK/dest"; log "logs kept in $WORK/logs"; fi
  exit "$rc"
}

# ------------------------------------------------------------------ can a container run here?
[ "$(id -u)" = 0 ] || skip "booting a systemd-nspawn container needs root"
command -v systemd-nspawn >/dev/null || skip "systemd-nspawn is not installed (apt-get install systemd-container)"
command -v nsenter >/dev/null || skip "nsenter (util-linux) is not installed"
[ -x /usr/lib/systemd/systemd ] || [ -x /lib/systemd/systemd ] || skip "no systemd binary on this host's /usr to boot"
if [ -d /sys/fs/cgroup/unified ]; then CGH=(systemd unified)   # hybrid hierarchy
elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then CGH=(.)      # unified
else skip "no usable cgroup hierarchy at /sys/fs/cgroup"; fi
trap teardown EXIT
trap 'exit 130' INT TERM
for h in "${CGH[@]}"; do
  mkdir -p "/sys/fs/cgroup/$h/$CG" 2>/dev/null || skip "cannot create a cgroup under /sys/fs/cgroup/$h (read-only cgroupfs?)"
done
mkdir -p "$WORK/logs"

# ------------------------------------------------------------------ install tree
meson install -C "$B" --destdir "$WORK/dest" --no-rebuild --quiet > "$WORK/logs/install.log" 2>&1 \
  || die "meson install: $(tail -20 "$WORK/logs/install.log")"
. "$B/systemd/install-paths.sh"
for b in zkpipe zkpipe-synthd zkpipe-gpud zkpipe-finalizerd; do
  [ -x "$WORK/dest$ZKPIPE_BINDIR/$b" ] || die "$b not installed into $ZKPIPE_BINDIR"
done
log "meson install -> $WORK/dest (prefix $ZKPIPE_PREFIX)"

# ------------------------------------------------------------------ boot
NSPAWN_ROOT=(--directory=/ --volatile=yes --bind-ro=/etc/alternatives)
[ -f /etc/ld.so.cache ] && NSPAWN_ROOT+=(--bind-ro=/etc/ld.so.cache)
T_BOOT=$(date +%s.%N)
CGS=""; for h in "${CGH[@]}"; do CGS+="echo \$\$ > /sys/fs/cgroup/$h/$CG/cgroup.procs; "; done
setsid bash -c "$CGS"'exec "$@"' nspawn \
  systemd-nspawn --quiet --boot "${NSPAWN_ROOT[@]}" --machine="$NAME" \
    --register=no --keep-unit --console=pipe --link-journal=no \
    --private-network --resolv-conf=off --timezone=off \
    --bind-ro="$WORK/dest:/opt/zkpipe-dest" --bind-ro="$S/tests/data:/opt/zkpipe-data" \
    systemd.mask=systemd-firstboot.service \
  > "$WORK/logs/nspawn.log" 2>&1 < /dev/null &
NSP=$!
for _ in $(seq 300); do
  L=$(ps -o pid= --ppid "$NSP" | tr -d ' ' || true)
  [ -n "$L" ] && [ -S "/proc/$L/root/run/systemd/private" ] && break
  if ! kill -0 "$NSP" 2>/dev/null; then
    L=
    if grep -qiE 'operation not permitted|permission denied|not supported|read-only file system' "$WORK/logs/nspawn.log"; then
      skip "systemd-nspawn cannot boot a container here: $(grep -iE 'operation not permitted|permission denied|not supported|read-only' "$WORK/logs/nspawn.log" | head -1)"
    fi
    die "systemd-nspawn exited: $(tail -5 "$WORK/logs/nspawn.log")"
  fi
  sleep 0.1
done
[ -n "$L" ] && [ -S "/proc/$L/root/run/systemd/private" ] || die "the container's systemd did not come up"
state=$(timeout 60 nsenter -t "$L" -a -- systemctl is-system-running --wait || true)
# degraded = some unit of the host's own /usr failed to start in a container; none of ours yet.
case "$state" in
  running|degraded) ;;
  *) C systemctl --failed --no-pager >&2; die "container state '$state'" ;;
esac
CR=/proc/$L/root
log "container up: nspawn=$NSP init=$L ($(el "$T_BOOT") s, $state$([ "$state" = degraded ] && echo ": $(C systemctl --failed --plain --no-legend | awk '{print $1}' | tr '
' ' ')"))"

# ------------------------------------------------------------------ install (as a package would)
# Overlay each top-level folder of the install tree on the container's own (its /usr is the host's, ro).
# Shallower first: with prefix /usr the tree has usr/ and lib/ (= /usr/lib), and an overlay on /usr
# mounted last would hide the one on /usr/lib.
for d in "$WORK/dest"/*; do
  top=$(basename "$d")
  echo "$(C realpath "/$top") $top"
done | awk '{ print length($1), $0 }' | sort -n | while read -r _ real top; do
  C mount -t overlay overlay -o "lowerdir=/opt/zkpipe-dest/$top:$real" "$real" || die "overlay /$top on $real"
done
C systemd-sysusers
C systemd-tmpfiles --create "$ZKPIPE_TMPFILESDIR/zkpipe.conf"
C getent passwd zkpipe >/dev/null || die "sysusers.d did not create user zkpipe"

write_ini() {   # write_ini SYNTH_INSTANCES [SLABS]
  cat > "$CR/etc/zkpipe/zkpipe.ini" <<INI
# zkpipe e2e (tests/systemd/e2e.sh)
[pipeline]
name = e2e
slabs = ${2:-4}
[synth]
instances = $1
[gpu]
devices = 1
backend = cpu
threads = 1
[finalizer]
instances = 1
[circuit mulchain]
zkey = /opt/zkpipe-data/bn128/mulchain/mulchain.zkey
r1cs = /opt/zkpipe-data/bn128/mulchain/mulchain.r1cs
INI
}
write_ini 2
# Test-only drop-ins: a short watchdog for gpud so the hang check takes seconds, and a test point
# where gpud stops itself (SIGSTOP) mid-batch so the kill -9 lands while a partition is in hand.
mkdir -p "$CR/etc/systemd/system/zkpipe-gpud@.service.d"
cat > "$CR/etc/systemd/system/zkpipe-gpud@.service.d/90-e2e.conf" <<EOF
[Service]
WatchdogSec=4s
RestartSec=300ms
EOF
cat > "$CR/etc/systemd/system/zkpipe-gpud@.service.d/91-e2e-pause.conf" <<EOF
[Service]
Environment=ZKPIPE_TEST_PAUSE=gpu.mid_prove:$KILL_PART
EOF
C systemctl daemon-reload
log "installed: units in $ZKPIPE_UNITDIR, generator, user zkpipe ($(C id -u zkpipe)), ini with 2 synthd"

# Every unit, with the generator's drop-ins and the test drop-ins, as the container's systemd sees them.
UNITS=(zkpipe.target zkpipe-segment.service zkpipe-reconcile.service zkpipe-synthd@1.service zkpipe-synthd@2.service
       zkpipe-gpud@0.service zkpipe-finalizerd@1.service)
EXP_WANT=""
if [ -f "$WORK/dest$ZKPIPE_UNITDIR/zkpipe-exporter.service" ]; then UNITS+=(zkpipe-exporter.service); EXP_WANT="zkpipe-exporter.service "; fi
out=$(C systemd-analyze verify --man=no "${UNITS[@]}" 2>&1) || die "verify: $out"
[ -z "$out" ] || die "systemd-analyze verify printed: $out"
wants=$(prop zkpipe.target Wants | tr ' ' '\n' | sort | tr '\n' ' ')
[ "$wants" = "${EXP_WANT}zkpipe-finalizerd@1.service zkpipe-gpud@0.service zkpipe-reconcile.service zkpipe-segment.service zkpipe-synthd@1.service zkpipe-synthd@2.service " ] \
  || die "zkpipe.target wants '$wants'"
log "systemd-analyze verify clean; zkpipe.target wants: $wants"

# ------------------------------------------------------------------ start
STAGES=(zkpipe-synthd@1 zkpipe-synthd@2 zkpipe-gpud@0 zkpipe-finalizerd@1)
T0=$(date +%s.%N)
C systemctl start zkpipe.target || die "systemctl start zkpipe.target"
declare -A PID0
for u in "${STAGES[@]}"; do
  active "$u" || die "$u is not active"
  PID0[$u]=$(prop "$u" MainPID)
  [ "$(prop "$u" User)" = zkpipe ] || die "$u does not run as zkpipe"
  st=$(prop "$u" StatusText)
  [ -n "$st" ] || die "$u sent no STATUS="
done
log "zkpipe.target active in $(el "$T0") s: $(for u in "${STAGES[@]}"; do printf '%s=%s ' "$u" "${PID0[$u]}"; done)"
log "  gpud STATUS: $(prop zkpipe-gpud@0 StatusText)"
# Hardening does not regress: systemd's own exposure score (0 = locked down, 10 = wide open).
exposure() { C systemd-analyze security --no-pager "$1" 2>/dev/null | awk '/Overall exposure level/ { print $(NF-2) }'; }
sec=""
for u in zkpipe-synthd@1 zkpipe-gpud@0 zkpipe-finalizerd@1 zkpipe-segment zkpipe-reconcile ${EXP_WANT:+zkpipe-exporter}; do
  x=$(exposure "$u.service")
  [ -n "$x" ] || die "systemd-analyze security gave no score for $u"
  awk -v x="$x" 'BEGIN { exit !(x <= 2.0) }' || die "$u exposure $x > 2.0: $(C systemd-analyze security --no-pager "$u.service" | grep '✗' | head -20)"
  sec+="$u $x, "
done
log "  systemd-analyze security exposure: ${sec%, }"
# The segment came from the set-up unit (zkpipe setup, as user zkpipe), not from a stage.
active zkpipe-segment.service || die "zkpipe-segment.service is not active"
seg=$(C journalctl --no-pager -o cat -u zkpipe-segment.service | grep '^segment /dev/shm/zkpipe-e2e created') \
  || die "zkpipe-segment.service did not create the segment: $(C journalctl --no-pager -o cat -u zkpipe-segment.service | tail -5)"
[ "$(C stat -c %U /dev/shm/zkpipe-e2e)" = zkpipe ] || die "segment not owned by zkpipe"
log "  $seg"

# ------------------------------------------------------------------ submit a batch
SPOOL=/var/spool/zkpipe/e2e
C mkdir -p /opt/in && C chmod 755 /opt/in
ARGS=()
for i in $(seq 1 $BATCH); do
  w=$(( (i - 1) % 2 + 1 ))
  C cp "/opt/zkpipe-data/bn128/mulchain/witness-$w.wtns" "/opt/in/w$i.wtns"
  ARGS+=("/opt/in/w$i.wtns")
done
JOB=$(CZ "$ZKPIPE_BINDIR/zkpipe" submit --config /etc/zkpipe/zkpipe.ini --circuit mulchain "${ARGS[@]}") \
  || die "zkpipe submit"
JOB=$(echo "$JOB" | tail -1 | awk '{print $NF}')
[ -n "$JOB" ] || die "zkpipe submit printed no job id"
log "submitted job $JOB: $BATCH partitions"

# ------------------------------------------------------------------ kill -9 gpud mid-batch
GP=${PID0[zkpipe-gpud@0]}
HP=$(host_pid "$GP") || die "no host pid for gpud ($GP)"
stopped() { grep -q '^State:[[:space:]]*T' "/proc/$HP/status" 2>/dev/null; }
wait_for 60 "gpud to stop itself at gpu.mid_prove of partition $KILL_PART" stopped
# The pause is for this incarnation only: drop it before the restart.
rm "$CR/etc/systemd/system/zkpipe-gpud@.service.d/91-e2e-pause.conf"
C systemctl daemon-reload
[ ! -e "$CR$SPOOL/done/$JOB" ] || die "job $JOB already done before the kill: not mid-batch"
C "$ZKPIPE_BINDIR/zkpipe" status --config /etc/zkpipe/zkpipe.ini > "$WORK/logs/status-before-kill.txt" 2>&1 || true
log "  before the kill: $(grep '^slabs:' "$WORK/logs/status-before-kill.txt" || true)"
log "gpud stopped itself mid-batch; kill -9 (container pid $GP, host pid $HP)"
kill -9 "$HP"; T_KILL=$(date +%s.%N)
restarted() { [ "$(prop zkpipe-gpud@0 NRestarts)" = 1 ] && active zkpipe-gpud@0; }
wait_for 30 "systemd to restart gpud@0" restarted
NEW=$(prop zkpipe-gpud@0 MainPID)
[ "$NEW" != "$GP" ] && [ "$NEW" != 0 ] || die "gpud MainPID unchanged ($GP)"
log "gpud@0 restarted in $(el "$T_KILL") s: NRestarts=1, MainPID $GP -> $NEW"
for u in "${STAGES[@]}"; do
  [ "$u" = zkpipe-gpud@0 ] && continue
  p=$(prop "$u" MainPID); n=$(prop "$u" NRestarts)
  [ "$p" = "${PID0[$u]}" ] && [ "$n" = 0 ] || die "$u disturbed by the gpud crash (MainPID ${PID0[$u]} -> $p, NRestarts $n)"
done
log "other stages kept their PIDs"

# ------------------------------------------------------------------ the batch completes, every proof valid
CZ timeout 120 "$ZKPIPE_BINDIR/zkpipe" wait --config /etc/zkpipe/zkpipe.ini "$JOB" > "$WORK/logs/wait.txt" 2>&1 \
  || die "zkpipe wait $JOB: $(cat "$WORK/logs/wait.txt")"
DONE=$CR$SPOOL/done/$JOB
[ -d "$DONE" ] || die "no $SPOOL/done/$JOB"
n=0
for i in $(seq 0 $((BATCH - 1))); do
  pj=$DONE/proof-$i.json; pub=$DONE/public-$i.json
  [ -f "$pj" ] && [ -f "$pub" ] || die "no proof-$i.json/public-$i.json in $SPOOL/done/$JOB: $(ls "$DONE")"
  w=$(( i % 2 + 1 ))
  "$B/cli/zkpipe" verify "$DATA/vk.json" "$pub" "$pj" > /dev/null 2>&1 || die "proof $i does not verify (zkpipe verify)"
  if [ -x "$SNARKJS" ]; then
    "$SNARKJS" groth16 verify "$DATA/vk.json" "$pub" "$pj" 2>&1 | grep -q 'OK!' || die "proof $i does not verify (snarkjs)"
  fi
  cmp -s <(tr -d ' \n' < "$pub") <(tr -d ' \n' < "$DATA/public-$w.json") || die "public $i differs from public-$w.json"
  n=$((n + 1))
done
log "job $JOB done in $(el "$T_KILL") s after the crash: $n/$BATCH proofs verify (zkpipe verify$([ -x "$SNARKJS" ] && echo ' and snarkjs'))"
# The partition gpud held when it died was reclaimed (PROVING -> READY), not synthesized again.
C "$ZKPIPE_BINDIR/zkpipe" status --config /etc/zkpipe/zkpipe.ini > "$WORK/logs/status-after-job.txt" 2>&1 \
  || die "zkpipe status: $(cat "$WORK/logs/status-after-job.txt")"
cnt() { awk -v k="$1" '/^counters:/ { for (i = 2; i < NF; i++) if ($i == k) print $(i + 1) }' "$WORK/logs/status-after-job.txt"; }
[ "$(cnt synthesized)" = "$BATCH" ] || die "synthesized $(cnt synthesized) partitions for a batch of $BATCH (the crash cost a re-synthesis)"
[ "$(cnt reclaimed)" -ge 1 ] || die "no slab reclaimed after the gpud crash: $(grep '^counters:' "$WORK/logs/status-after-job.txt")"
log "  counters: synthesized $(cnt synthesized) (= batch), reclaimed $(cnt reclaimed), proved $(cnt proved)"
# the exporter (where built) runs as a hardened unit, reads the segment and serves what status says
if [ -n "$EXP_WANT" ]; then
  active zkpipe-exporter || die "zkpipe-exporter.service is not active"
  m=$(C curl -sf http://127.0.0.1:9821/metrics) || die "the exporter does not serve /metrics"
  grep -qx "zkpipe_partitions_finalized_total $(cnt finalized)" <<<"$m" \
    || die "the exporter's finalized count differs from status ($(cnt finalized)): $(echo "$m" | grep finalized_total)"
  log "  zkpipe-exporter.service: /metrics says $(cnt finalized) partitions finalized, as status does"
fi

# structured journal fields
jf=$(journalctl --root="$CR" --no-pager -o json ZKPIPE_JOB="$JOB" 2>/dev/null | wc -l)
[ "$jf" -gt 0 ] || die "no journal entries with ZKPIPE_JOB=$JOB"
stages=$(journalctl --root="$CR" --no-pager -F ZKPIPE_STAGE 2>/dev/null | sort | tr '\n' ' ')
journalctl --root="$CR" --no-pager -o json ZKPIPE_JOB="$JOB" > "$WORK/logs/job-journal.json" 2>/dev/null
for f in ZKPIPE_PARTITION ZKPIPE_SLAB ZKPIPE_READ_NS ZKPIPE_EVAL_NS ZKPIPE_PROVE_NS ZKPIPE_VERIFY_NS ZKPIPE_WRITE_NS; do
  grep -q "\"$f\"" "$WORK/logs/job-journal.json" || die "no journal entry of job $JOB carries $f"
done
for stg in synthd gpud finalizerd; do
  grep -q "\"ZKPIPE_STAGE\":\"$stg\"" "$WORK/logs/job-journal.json" || die "no entry of job $JOB with ZKPIPE_STAGE=$stg"
done
for u in 'zkpipe-synthd@[12]' 'zkpipe-gpud@0' 'zkpipe-finalizerd@1'; do   # either synthd may have done it all
  grep -q "\"_SYSTEMD_UNIT\":\"$u\.service\"" "$WORK/logs/job-journal.json" || die "no ZKPIPE_JOB entry from $u"
done
log "journal: $jf entries with ZKPIPE_JOB=$JOB; ZKPIPE_STAGE values: $stages"

# ------------------------------------------------------------------ watchdog: SIGSTOP gpud
GP=$(prop zkpipe-gpud@0 MainPID)
HP=$(host_pid "$GP") || die "no host pid for gpud ($GP)"
kill -STOP "$HP"; T_STOP=$(date +%s.%N)
restarted2() { [ "$(prop zkpipe-gpud@0 NRestarts)" = 2 ] && active zkpipe-gpud@0; }
wait_for 30 "the watchdog to restart a stopped gpud@0" restarted2
C journalctl --no-pager -o cat -u zkpipe-gpud@0 | grep -q 'Watchdog timeout' || die "no 'Watchdog timeout' in gpud's journal"
NEW=$(prop zkpipe-gpud@0 MainPID)
[ "$NEW" != "$GP" ] || die "gpud MainPID unchanged after the watchdog"
log "watchdog: SIGSTOPped gpud@0 -> 'Watchdog timeout' -> restarted in $(el "$T_STOP") s, MainPID $GP -> $NEW"
for u in zkpipe-synthd@1 zkpipe-synthd@2 zkpipe-finalizerd@1; do
  [ "$(prop "$u" MainPID)" = "${PID0[$u]}" ] || die "$u disturbed by the watchdog restart"
done

# ------------------------------------------------------------------ a slow key load extends the start timeout
# gpud takes 3.5 s to "load" its key under TimeoutStartSec=2s: only EXTEND_TIMEOUT_USEC= gets it to READY.
cat > "$CR/etc/systemd/system/zkpipe-gpud@.service.d/92-e2e-slowkey.conf" <<EOF
[Service]
TimeoutStartSec=2s
Environment=ZKPIPE_TEST_DELAY=gpu.load_key:3500
EOF
C systemctl daemon-reload
T_R=$(date +%s.%N)
C systemctl restart zkpipe-gpud@0 || die "gpud did not start with a 3.5 s key load under TimeoutStartSec=2s: $(prop zkpipe-gpud@0 Result)"
took=$(el "$T_R")
active zkpipe-gpud@0 || die "gpud not active after the slow start"
awk -v t="$took" 'BEGIN { exit !(t >= 3.5) }' || die "the slow key load took only $took s: the test point did not fire"
rm "$CR/etc/systemd/system/zkpipe-gpud@.service.d/92-e2e-slowkey.conf"
C systemctl daemon-reload
for u in zkpipe-synthd@1 zkpipe-synthd@2 zkpipe-finalizerd@1; do
  [ "$(prop "$u" MainPID)" = "${PID0[$u]}" ] || die "$u disturbed by restarting gpud"
done
log "systemctl restart zkpipe-gpud@0 with a 3.5 s key load, TimeoutStartSec=2s: READY after $took s (EXTEND_TIMEOUT_USEC); siblings untouched"

# ------------------------------------------------------------------ 3 synthd from the ini
write_ini 3
C systemctl daemon-reload
C systemctl start zkpipe.target
active zkpipe-synthd@3 || die "zkpipe-synthd@3 not active after instances = 3 + daemon-reload + start"
n=$(C systemctl list-units --no-legend --state=active 'zkpipe-synthd@*' | wc -l)
[ "$n" = 3 ] || die "$n synthd active, expected 3"
for u in zkpipe-synthd@1 zkpipe-synthd@2; do
  [ "$(prop "$u" MainPID)" = "${PID0[$u]}" ] || die "$u restarted by the count change"
done
log "instances = 3 + daemon-reload + start zkpipe.target: 3 synthd active (1 and 2 untouched)"
# the new set proves too
# submitted by root this time: the stages (user zkpipe) must still be able to take the job over
JOB2=$(C "$ZKPIPE_BINDIR/zkpipe" submit --config /etc/zkpipe/zkpipe.ini --circuit mulchain /opt/in/w1.wtns /opt/in/w2.wtns /opt/in/w3.wtns) \
  || die "second submit"
JOB2=$(echo "$JOB2" | tail -1 | awk '{print $NF}')
C timeout 60 "$ZKPIPE_BINDIR/zkpipe" wait --config /etc/zkpipe/zkpipe.ini "$JOB2" > "$WORK/logs/wait2.txt" 2>&1 \
  || die "zkpipe wait $JOB2: $(cat "$WORK/logs/wait2.txt")"
log "second job $JOB2 (3 partitions, submitted by root) done with 3 synthd"

# A job directory the stages cannot move (made by hand, root-owned 0755) is reported, not ignored.
C mkdir -m 0755 "$SPOOL/incoming/20261130T000000.000000-badc0d"
claimerr() { C journalctl --no-pager -o cat -u 'zkpipe-synthd@*' | grep -q 'Failed to claim job 20261130T000000.000000-badc0d'; }
wait_for 20 "synthd to report the job it cannot claim" claimerr
C rmdir "$SPOOL/incoming/20261130T000000.000000-badc0d"
log "a job directory synthd cannot move is reported in the journal"

# ... and back to 2: the same daemon-reload + start stops synthd@3 (zkpipe-reconcile.service) alone.
write_ini 2
C systemctl daemon-reload
C systemctl start zkpipe.target
gone3() { [ "$(C systemctl is-active zkpipe-synthd@3 || true)" = inactive ]; }
wait_for 30 "zkpipe-synthd@3 to stop after instances = 2" gone3
[ "$(prop zkpipe-synthd@3 Result)" = success ] || die "synthd@3 stopped with Result=$(prop zkpipe-synthd@3 Result)"
for u in zkpipe-synthd@1 zkpipe-synthd@2 zkpipe-finalizerd@1; do
  [ "$(prop "$u" MainPID)" = "${PID0[$u]}" ] || die "$u restarted by lowering the count"
done
active zkpipe-gpud@0 || die "gpud stopped by lowering the synth count"
C journalctl --no-pager -o cat -u zkpipe-reconcile.service | grep -q 'Stopping zkpipe-synthd@3.service' \
  || die "zkpipe-reconcile did not say why synthd@3 stopped"
log "instances = 2 + daemon-reload + start zkpipe.target: synthd@3 stopped (Result=success), the rest untouched"

# A typo in the ini while the pipeline runs: the generator makes nothing, and a start must then stop
# nothing either (zkpipe-reconcile reads "no stage wanted" as "ini broken", not "stop everything").
GPID=$(prop zkpipe-gpud@0 MainPID)
printf '[pipeline]\nname = e2e\n[synth]\ninstances = 2\nthreds = 4\n' > "$CR/etc/zkpipe/zkpipe.ini"
C systemctl daemon-reload
C systemctl start zkpipe.target   # returns after zkpipe-reconcile.service ran (the target is ordered after it)
jobs=$(C systemctl list-jobs --no-legend 'zkpipe-*' || true)
[ -z "$jobs" ] || die "jobs queued by a start with a broken ini: $jobs"
for u in zkpipe-synthd@1 zkpipe-synthd@2 zkpipe-finalizerd@1; do
  active "$u" && [ "$(prop "$u" MainPID)" = "${PID0[$u]}" ] || die "$u stopped or restarted by a start with a broken ini"
done
[ "$(prop zkpipe-gpud@0 MainPID)" = "$GPID" ] || die "gpud stopped or restarted by a start with a broken ini"
C journalctl --no-pager -o cat -u zkpipe-reconcile.service | grep -q 'wants no stage.*stopping nothing' \
  || die "zkpipe-reconcile did not hold back on a broken ini"
write_ini 2
C systemctl daemon-reload
log "broken ini + daemon-reload + start while running: nothing stopped"

# ------------------------------------------------------------------ stop: every stage stops, no slab owned
# stop_target: stops zkpipe.target and checks that every stage drained (inactive, Result=success, no
# SIGKILL), and that `zkpipe status` shows no slab owned (FILLING, PROVING, FINALIZING) and no
# stage registered alive. Leaves the slab line in $slabs.
stop_target() {
  local since=@$(date +%s) u s r n state st
  C systemctl stop zkpipe.target
  # The target goes down first (it is ordered after its stages), then each stage drains: wait for them.
  all_down() {
    local u
    for u in zkpipe-synthd@1 zkpipe-synthd@2 zkpipe-synthd@3 zkpipe-gpud@0 zkpipe-finalizerd@1 zkpipe-segment; do
      [ "$(C systemctl is-active "$u" || true)" = inactive ] || return 1
    done
  }
  wait_for 60 "every stage to drain and stop" all_down
  for u in zkpipe-synthd@1 zkpipe-synthd@2 zkpipe-synthd@3 zkpipe-gpud@0 zkpipe-finalizerd@1 zkpipe-segment; do
    s=$(C systemctl is-active "$u" || true)
    [ "$s" = inactive ] || die "$u is '$s' after stopping zkpipe.target"
    r=$(prop "$u" Result)
    [ "$r" = success ] || die "$u stopped with Result=$r (not a clean drain)"
  done
  C journalctl --no-pager -o cat --since "$since" -u 'zkpipe-synthd@*' -u 'zkpipe-gpud@*' -u 'zkpipe-finalizerd@*' \
    | grep -q 'SIGKILL' && die "a stage had to be SIGKILLed at stop"
  st=$(C "$ZKPIPE_BINDIR/zkpipe" status --config /etc/zkpipe/zkpipe.ini 2>&1) || die "zkpipe status after stop: $st"
  echo "$st" >> "$WORK/logs/status-after-stop.txt"
  slabs=$(echo "$st" | grep '^slabs:') || die "zkpipe status printed no slab line: $st"
  for state in filling proving finalizing; do
    n=$(slab_count "$slabs" $state)
    [ "$n" = 0 ] || die "after stop, $n slab(s) $state (owned): $st"
  done
  echo "$st" | grep -q '^process .* alive' && die "a stage is still registered alive after stop: $st"
  return 0
}
slab_count() { echo "$1" | tr 'A-Z' 'a-z' | awk -v s="$2" '{ for (i = 2; i < NF; i++) if ($i == s) print $(i + 1) }'; }

# Mid-job: gpud takes 700 ms per partition, the target stops while a partition is being proven.
cat > "$CR/etc/systemd/system/zkpipe-gpud@.service.d/93-e2e-slowprove.conf" <<EOF
[Service]
Environment=ZKPIPE_TEST_DELAY=gpu.mid_prove:700
EOF
C systemctl daemon-reload
C systemctl restart zkpipe-gpud@0
JOB3=$(CZ "$ZKPIPE_BINDIR/zkpipe" submit --config /etc/zkpipe/zkpipe.ini --circuit mulchain "${ARGS[@]}") || die "third submit"
JOB3=$(echo "$JOB3" | tail -1 | awk '{print $NF}')
proving() { [ "$(slab_count "$(C "$ZKPIPE_BINDIR/zkpipe" status --config /etc/zkpipe/zkpipe.ini | grep '^slabs:')" proving)" = 1 ]; }
wait_for 30 "a partition of job $JOB3 being proven" proving
T_STOPT=$(date +%s.%N)
stop_target
[ ! -e "$CR$SPOOL/done/$JOB3" ] || die "job $JOB3 finished before the stop: not mid-job"
log "stop zkpipe.target mid-job in $(el "$T_STOPT") s: every stage drained (Result=success, no SIGKILL); $slabs"
rm "$CR/etc/systemd/system/zkpipe-gpud@.service.d/93-e2e-slowprove.conf"
C systemctl daemon-reload
C systemctl start zkpipe.target
CZ timeout 120 "$ZKPIPE_BINDIR/zkpipe" wait --config /etc/zkpipe/zkpipe.ini "$JOB3" > "$WORK/logs/wait3.txt" 2>&1 \
  || die "zkpipe wait $JOB3 after the restart: $(cat "$WORK/logs/wait3.txt")"
for i in $(seq 0 $((BATCH - 1))); do
  "$B/cli/zkpipe" verify "$DATA/vk.json" "$CR$SPOOL/done/$JOB3/public-$i.json" "$CR$SPOOL/done/$JOB3/proof-$i.json" \
    > /dev/null 2>&1 || die "job $JOB3: proof $i does not verify"
done
log "start zkpipe.target again: job $JOB3 completed from the kept segment, $BATCH/$BATCH proofs verify"

T_STOPT=$(date +%s.%N)
stop_target
[ "$(slab_count "$slabs" free)" = 4 ] || die "idle pipeline stopped with slabs not all FREE: $slabs"
log "stop zkpipe.target idle in $(el "$T_STOPT") s: every stage inactive (Result=success); $slabs"

# ------------------------------------------------------------------ geometry change: the set-up unit refuses
# The segment kept from before has 4 slabs; an ini asking for 5 must stop at zkpipe-segment.service
# with the difference spelled out, and no stage may start against it.
write_ini 3 5
C systemctl daemon-reload
C systemctl start zkpipe.target 2>/dev/null || true
[ "$(C systemctl is-active zkpipe-segment.service || true)" = failed ] || die "zkpipe-segment.service accepted a segment of another geometry"
for u in zkpipe-synthd@1 zkpipe-gpud@0 zkpipe-finalizerd@1; do
  active "$u" && die "$u started although the segment set-up failed"
done
why=$(C journalctl --no-pager -o cat -u zkpipe-segment.service | grep 'geometry differs' | tail -1) \
  || die "no 'geometry differs' from zkpipe-segment.service: $(C journalctl --no-pager -o cat -u zkpipe-segment.service | tail -3)"
C systemctl reset-failed zkpipe-segment.service
log "slabs 4 -> 5 with the segment kept: zkpipe-segment.service failed, no stage started: '$why'"

# ------------------------------------------------------------------ bad ini: generator logs, generates nothing
printf '[pipeline]\nname = e2e\n[synth]\ninstances = 3\nthreds = 4\n' > "$CR/etc/zkpipe/zkpipe.ini"
C systemctl daemon-reload
wants=$(prop zkpipe.target Wants | tr ' ' '\n' | sort | tr '\n' ' ')
[ "$wants" = "zkpipe-reconcile.service zkpipe-segment.service " ] || die "bad ini: zkpipe.target still wants '$wants'"
wait_for 10 "the generator's error in the journal" \
  sh -c "journalctl --root='$CR' --no-pager -o cat -t zkpipe-generator 2>/dev/null | grep -q 'zkpipe.ini:5: .*threds'"
log "bad ini: generator logged '$(journalctl --root="$CR" --no-pager -o cat -t zkpipe-generator | grep threds | tail -1)', target wants no stage"
log "PASS"
