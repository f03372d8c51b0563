# Shared helpers of the fleet tests (docs/fleet.md): a private PostgreSQL server (initdb in the test's
# temporary folder, a Unix socket there, run as an unprivileged user when we are root) and boxes,
# each a whole pipeline (its own segment, spool and ini) plus its zkpipe-feeder. Sources
# tests/pipeline/lib.sh for the daemons and the checks. Exit codes: 0 pass, 1 fail, 77 skip.
. "$(dirname "${BASH_SOURCE[0]}")/../pipeline/lib.sh"
FEEDER=$BUILD/feeder/zkpipe-feeder
[ -x "$FEEDER" ] || { echo "SKIP: $FEEDER not built (libpq-dev missing?)"; exit 77; }
PGBIN=
for d in /usr/lib/postgresql/*/bin /usr/local/bin; do
    [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && { PGBIN=$d; break; }
done
[ -n "$PGBIN" ] || { echo "SKIP: PostgreSQL (initdb, pg_ctl) is not installed"; exit 77; }
PSQL=$PGBIN/psql
[ -x "$PSQL" ] || PSQL=$(command -v psql) || { echo "SKIP: psql is not installed"; exit 77; }
LEASE=${LEASE:-4}
PGDATA_DIR=$T/pg
PGSOCK=$T/pgsock
PGPORT=$((20000 + $$ % 20000))
DSN="host=$PGSOCK port=$PGPORT user=zkpipe dbname=postgres"
BOXES=()

# as_pg CMD...: run a PostgreSQL binary as the unprivileged owner of the cluster
as_pg() {
    if [ "$(id -u)" = 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi
}

pg_start() {
    chmod 755 "$T"
    mkdir -p "$PGDATA_DIR" "$PGSOCK"
    [ "$(id -u)" = 0 ] && chown nobody "$PGDATA_DIR" "$PGSOCK"
    as_pg "$PGBIN/initdb" -D "$PGDATA_DIR" -U zkpipe --auth=trust -E UTF8 >"$T/logs/initdb.log" 2>&1 ||
        { echo "SKIP: initdb failed: $(tail -n 2 "$T/logs/initdb.log")"; exit 77; }
    pg_ctl_do start
}
pg_ctl_do() { # pg_ctl_do start|stop|restart
    local o="-c listen_addresses='' -c port=$PGPORT -c unix_socket_directories=$PGSOCK -c fsync=off"
    touch "$T/logs/postgres.log"
    [ "$(id -u)" = 0 ] && chown nobody "$T/logs/postgres.log"
    as_pg "$PGBIN/pg_ctl" -D "$PGDATA_DIR" -l "$T/logs/postgres.log" -o "$o" -w -m fast "$1" >/dev/null ||
        fail "pg_ctl $1 failed"
}
# pg_signal STOP|CONT: the server and every backend of it (a stopped database: queries hang)
pg_signal() {
    local pm c
    pm=$(head -n 1 "$PGDATA_DIR/postmaster.pid")
    kill -"$1" "$pm"
    for c in $(pgrep -P "$pm"); do kill -"$1" "$c" 2>/dev/null || true; done
}
psql_q() { # psql_q SQL: one value per line, no headers
    "$PSQL" -X -q -A -t -v ON_ERROR_STOP=1 "$DSN" -c "$1"
}

# box_config NAME [extra ini lines...]: box NAME's ini (its own segment and spool) in $T/NAME/
box_config() {
    local b=$1
    shift
    mkdir -p "$T/$b"
    local conf=$T/$b/zkpipe.ini
    cat >"$conf" <<INI
[pipeline]
name = $PIPE_NAME-$b
spool = $T/$b/spool
slabs = ${SLABS:-2}
jobs = 16
events = 4096
[synth]
threads = 1
[gpu]
backend = cpu
threads = 1
[finalizer]
verify = yes
[source postgres]
dsn = $DSN
box = $b
lease = $LEASE
batch = 2
poll_ms = 300
$(fixture_circuits_ini "$DATA" mulchain poseidon mulchain381)
INI
    for l in "$@"; do echo "$l" >>"$conf"; done
    BOXES+=("$b")
}

# box_start NAME [all|feeder|stages] [VAR=value...]: the box's synthd, gpud, finalizerd and feeder as
# background processes (the variables go to gpud: test hooks)
box_start() {
    local b=$1 what=${2:-all}
    shift 2 || shift $#
    local conf=$T/$b/zkpipe.ini
    if [ "$what" != feeder ]; then
        "$SYNTHD" --config "$conf" --instance 1 >>"$T/logs/$b-synthd.log" 2>&1 &
        PIDS[$b-synthd]=$!
        env "$@" "$GPUD" --config "$conf" >>"$T/logs/$b-gpud.log" 2>&1 &
        PIDS[$b-gpud]=$!
        "$FINALIZERD" --config "$conf" >>"$T/logs/$b-finalizerd.log" 2>&1 &
        PIDS[$b-finalizerd]=$!
    fi
    if [ "$what" != stages ]; then
        "$FEEDER" --config "$conf" >>"$T/logs/$b-feeder.log" 2>&1 &
        PIDS[$b-feeder]=$!
    fi
}
box_kill9() { # every process of the box
    local n
    for n in synthd gpud finalizerd feeder; do kill9 "$1-$n"; done
}
box_stop() {
    local n
    for n in feeder synthd gpud finalizerd; do stop "$1-$n" || true; done
}

fleet_cleanup() {
    local b
    for n in "${!PIDS[@]}"; do kill -9 "${PIDS[$n]}" 2>/dev/null || true; done
    [ -d "$PGDATA_DIR" ] && as_pg "$PGBIN/pg_ctl" -D "$PGDATA_DIR" -m immediate stop >/dev/null 2>&1
    for b in "${BOXES[@]}"; do rm -f "/dev/shm/zkpipe-$PIPE_NAME-$b" 2>/dev/null; done
    cleanup
}
trap fleet_cleanup EXIT

db_submit() { # db_submit CIRCUIT PRIORITY FILE...: the job id
    local c=$1 p=$2 out
    shift 2
    out=$("$ZKPIPE" submit --dsn "$DSN" --circuit "$c" --priority "$p" "$@" 2>&1) || fail "submit --dsn: $out"
    echo "$out" | tail -n 1
}
jobs_in() { psql_q "SELECT count(*) FROM zkpipe_jobs WHERE state = '$1'"; }
all_final() { [ "$(psql_q "SELECT count(*) FROM zkpipe_jobs WHERE state NOT IN ('done', 'failed', 'cancelled')")" = 0 ]; }

# db_verify JOB CIRCUIT: zkpipe wait --out writes every proof, and each verifies (native verifier)
db_verify() {
    local job=$1 circuit=$2 out=$T/out/$1 k n
    mkdir -p "$out"
    "$ZKPIPE" wait --dsn "$DSN" --out "$out" --timeout 60 "$job" >"$T/wait-$job.out" 2>&1 ||
        fail "job $job: zkpipe wait --dsn: $(cat "$T/wait-$job.out")"
    n=$(psql_q "SELECT n_parts FROM zkpipe_jobs WHERE id = '$job'")
    for ((k = 0; k < n; k++)); do
        "$ZKPIPE" verify "$(vk_of "$circuit")" "$out/public-$k.json" "$out/proof-$k.json" >/dev/null 2>&1 ||
            fail "job $job partition $k: the proof from the database does not verify"
    done
}
