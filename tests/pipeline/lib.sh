# Shared helpers of the pipeline tests: a private pipeline (unique segment, temporary spool), the
# three daemons as real background processes, and cleanup that leaves no process or segment behind.
# Sourced by each tests/pipeline/*.sh. Exit codes: 0 pass, 1 fail, 77 skip.
set -u
ROOT=${ZKPIPE_SOURCE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${ZKPIPE_BUILD_ROOT:-$ROOT/build}
DATA=$ROOT/tests/data
. "$ROOT/scripts/fixture-circuits.sh"
ZKPIPE=$BUILD/cli/zkpipe
SYNTHD=$BUILD/synthd/zkpipe-synthd
GPUD=$BUILD/gpud/zkpipe-gpud
FINALIZERD=$BUILD/finalizerd/zkpipe-finalizerd
SNARKJS=$ROOT/node_modules/.bin/snarkjs
for b in "$ZKPIPE" "$SYNTHD" "$GPUD" "$FINALIZERD"; do
    [ -x "$b" ] || { echo "SKIP: $b not built"; exit 77; }
done

TEST_NAME=${TEST_NAME:-$(basename "$0" .sh)}
T=$(mktemp -d "/tmp/zkpipe-$TEST_NAME.XXXXXX")
PIPE_NAME="t-$TEST_NAME-$$"
SEGMENT=/dev/shm/zkpipe-$PIPE_NAME
CONF=$T/zkpipe.ini
SPOOL=$T/spool
mkdir -p "$T/pids" "$T/logs"
declare -A PIDS=()
MOUNTS=()

log() { echo "[$(date +%T.%3N)] $*"; }
fail() {
    echo "FAIL: $*" >&2
    echo "--- status" >&2
    "$ZKPIPE" status --config "$CONF" >&2 2>&1 || true
    echo "--- daemon logs (last lines)" >&2
    for f in "$T"/logs/*.log; do [ -f "$f" ] && { echo "== $f" >&2; tail -n 15 "$f" >&2; }; done
    exit 1
}

# write_config [slabs] [reserve_critical] [extra ini lines...]
write_config() {
    local slabs=${1:-4} reserve=${2:-0}
    shift 2 || shift $#
    cat >"$CONF" <<INI
[pipeline]
name = $PIPE_NAME
spool = $SPOOL
slabs = $slabs
reserve_critical = $reserve
jobs = 32
events = 8192
[synth]
threads = 1
[gpu]
backend = cpu
threads = ${GPU_THREADS:-1}
inflight = ${GPU_INFLIGHT:-0}
[finalizer]
verify = yes
$(fixture_circuits_ini "$DATA" mulchain poseidon mulchain381)
INI
    for l in "$@"; do echo "$l" >>"$CONF"; done
}

# write_witgen_config [ini lines...]: a small pipeline (2 slabs, a private generator cache) for the
# tests of witness generation; the circuits come as the ini lines
write_witgen_config() {
    cat >"$CONF" <<INI
[pipeline]
name = $PIPE_NAME
spool = $SPOOL
cache = $T/cache
slabs = 2
jobs = 16
events = 4096
[synth]
threads = 1
[gpu]
backend = cpu
threads = 1
INI
    for l in "$@"; do echo "$l" >>"$CONF"; done
}

# submit_inputs CIRCUIT FILE... -> prints the job id of a job of circuit inputs
submit_inputs() {
    local circuit=$1 out
    shift
    out=$("$ZKPIPE" submit --config "$CONF" --circuit "$circuit" --input "$@") || fail "submit --input failed: $out"
    echo "$out" | tail -n 1
}

# start NAME [VAR=value ...]: NAME is synthd1, synthd2, gpud, finalizerd (a digit suffix = instance)
start() {
    local name=$1
    shift
    local bin inst=${name//[!0-9]/}
    case $name in
    synthd*) bin=$SYNTHD ;;
    gpud*) bin=$GPUD ;;
    finalizerd*) bin=$FINALIZERD ;;
    *) fail "unknown daemon $name" ;;
    esac
    local pre=()
    # NICE_STAGES="synthd finalizerd": run those stages at a lower CPU priority than gpud
    [[ " ${NICE_STAGES:-} " == *" ${name%%[0-9]*} "* ]] && pre=(nice -n "${NICE_LEVEL:-10}")
    "${pre[@]}" env "$@" "$bin" --config "$CONF" --instance "${inst:-0}" >>"$T/logs/$name.log" 2>&1 &
    PIDS[$name]=$!
}

proc_field() { # proc_field INSTANCE FIELD: a value from gpud@INSTANCE's live process line of status
    "$ZKPIPE" status --config "$CONF" | awk -v p="gpud@$1" -v f="$2" \
        '$1 == "process" && $2 == p && $5 == "alive" {for (i = 1; i < NF; i++) if ($i == f) v = $(i + 1)} END {print v}'
}

# both_gpud_proved TOTAL BACKEND: gpud@0 and gpud@1 each proved some of the TOTAL partitions, TOTAL in
# all, and status names BACKEND as each one's device
both_gpud_proved() {
    local p0 p1
    p0=$(proc_field 0 proved) p1=$(proc_field 1 proved)
    log "proved: gpud@0 $p0, gpud@1 $p1"
    [ "${p0:-0}" -gt 0 ] && [ "${p1:-0}" -gt 0 ] || fail "not both gpud proved partitions (gpud@0 ${p0:-?}, gpud@1 ${p1:-?})"
    [ $((p0 + p1)) = "$1" ] || fail "the gpud proved $((p0 + p1)) partitions in all, the jobs have $1"
    [ "$(proc_field 0 device)" = "$2" ] && [ "$(proc_field 1 device)" = "$2" ] ||
        fail "status does not name the $2 backend for each gpud: $("$ZKPIPE" status --config "$CONF" | grep gpud)"
}

alive() { [ -n "${PIDS[$1]:-}" ] && kill -0 "${PIDS[$1]}" 2>/dev/null; }

# kill9 NAME: SIGKILL and reap
kill9() {
    local pid=${PIDS[$1]:-}
    [ -n "$pid" ] || return 0
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    unset "PIDS[$1]"
}

# stop NAME: SIGTERM, clean drain expected
stop() {
    local pid=${PIDS[$1]:-}
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null || true
    local rc=0
    wait "$pid" 2>/dev/null || rc=$?
    unset "PIDS[$1]"
    return $rc
}

stop_all() { for n in "${!PIDS[@]}"; do stop "$n" || true; done; }

cleanup() {
    for n in "${!PIDS[@]}"; do kill -9 "${PIDS[$n]}" 2>/dev/null || true; done
    for n in "${!PIDS[@]}"; do wait "${PIDS[$n]}" 2>/dev/null || true; done
    for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
    rm -f "$SEGMENT" "$SEGMENT".tmp.* 2>/dev/null
    if [ "${KEEP_TMP:-0}" = 1 ]; then echo "kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT

# mount_tmpfs DIR SIZE: a small tmpfs for the test (root only), unmounted at exit; exits 77 where
# none can be mounted
mount_tmpfs() {
    mkdir -p "$1"
    mount -t tmpfs -o "size=$2" zkpipe-test "$1" 2>/dev/null || { echo "SKIP: cannot mount a tmpfs (not root?)"; exit 77; }
    MOUNTS+=("$1")
}

# free_port: a TCP port on 127.0.0.1 that is free now
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# is_stopped NAME: the process stopped itself at a test point (SIGSTOP)
is_stopped() {
    local pid=${PIDS[$1]:-}
    [ -n "$pid" ] && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = T ]
}

# wait_for SECONDS DESCRIPTION COMMAND...
wait_for() {
    local limit=$1 what=$2
    shift 2
    local end=$((SECONDS + limit))
    until "$@"; do
        [ $SECONDS -lt $end ] || fail "timed out after ${limit}s waiting for $what"
        sleep 0.05
    done
}

# submit CIRCUIT PRIORITY WTNS... -> prints the job id
submit() {
    local circuit=$1 prio=$2
    shift 2
    local out
    out=$("$ZKPIPE" submit --config "$CONF" --circuit "$circuit" --priority "$prio" "$@") || fail "submit failed: $out"
    echo "$out" | tail -n 1
}

wait_job() { # wait_job JOB [timeout]: exit code of zkpipe wait
    "$ZKPIPE" wait --config "$CONF" --timeout "${2:-120}" "$1" >"$T/wait-$1.out" 2>"$T/wait-$1.err"
}

slab_line() { "$ZKPIPE" status --config "$CONF" | grep '^slabs:'; }
slabs_free() { slab_line | awk '{for (i = 2; i < NF; i += 2) if ($i == "FREE") print $(i + 1)}'; }
all_slabs_free() { local n; n=$(slabs_free); [ "$n" = "$(grep -m1 '^slabs' "$CONF" | awk '{print $3}')" ]; }
job_field() { # job_field JOB FIELD: a number from `zkpipe status JOB`'s job line
    "$ZKPIPE" status --config "$CONF" "$1" | awk -v f="$2" '/^job /{for (i = 1; i < NF; i++) if ($i == f) print $(i + 1)}'
}
state_of() { "$ZKPIPE" status --config "$CONF" "$1" | awk '/^job /{for (i = 1; i < NF; i++) if ($i == "state") print $(i + 1)}'; }

# vk_of CIRCUIT
vk_of() { echo "$DATA/$(dirname "$(fixture_path "$1")")/vk.json"; }

# py EXPR-SCRIPT: python3 helper for result.json checks
result_json() { echo "$SPOOL/done/$1/result.json"; }
json_get() { # json_get FILE PYEXPR (r = the parsed JSON)
    python3 -c "import json,sys; r = json.load(open(sys.argv[1])); print($2)" "$1"
}

# need_snarkjs: exit 77 (skip) with one line when snarkjs (npm ci) is not installed, as the oracle
# tests do (tests/oracle/env.sh)
need_snarkjs() {
    [ -x "$SNARKJS" ] && return 0
    echo "SKIP: snarkjs not installed ($SNARKJS missing; run npm ci in $ROOT)"
    exit 77
}

# use_replay MODEL [INFLIGHT]: the written config's gpud on the replay backend with device model
# MODEL (an ini, docs/replay.md) and its cache in $T/replay; INFLIGHT partitions in flight when given
use_replay() {
    sed -i "s|^backend = cpu|backend = replay\nreplay_model = $1\nreplay_cache = $T/replay|" "$CONF"
    [ -z "${2:-}" ] || sed -i "s|^inflight = .*|inflight = $2|" "$CONF"
}

# verify_job JOB CIRCUIT N [snarkjs]: every proof of a done job verifies (native verifier, or snarkjs)
verify_job() {
    local job=$1 circuit=$2 n=$3 tool=${4:-native} vk k dir
    [ "$tool" != snarkjs ] || need_snarkjs
    vk=$(vk_of "$circuit")
    dir=$SPOOL/done/$job
    [ -f "$dir/result.json" ] || fail "job $job: no $dir/result.json"
    for ((k = 0; k < n; k++)); do
        [ -f "$dir/proof-$k.json" ] && [ -f "$dir/public-$k.json" ] || fail "job $job: proof-$k.json or public-$k.json missing"
        if [ "$tool" = snarkjs ]; then
            "$SNARKJS" groth16 verify "$vk" "$dir/public-$k.json" "$dir/proof-$k.json" 2>&1 | grep -q 'OK!' ||
                fail "job $job partition $k: snarkjs does not accept the proof"
        else
            "$ZKPIPE" verify "$vk" "$dir/public-$k.json" "$dir/proof-$k.json" >/dev/null 2>&1 ||
                fail "job $job partition $k: the proof does not verify"
        fi
    done
    local extra
    extra=$(ls -A "$dir" | grep -v -E '^(proof|public)-[0-9]+\.json$|^result\.json$|^job\.ini$|^witness-[0-9]+\.wtns$|^input-[0-9]+\.json$' || true)
    [ -z "$extra" ] || fail "job $job: unexpected files in $dir: $extra"
    [ "$(ls "$dir" | grep -c '^proof-')" = "$n" ] || fail "job $job: expected exactly $n proofs"
}
