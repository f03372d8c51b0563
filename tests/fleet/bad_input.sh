#!/bin/bash
# Bad input through the database fails that job with its reason in zkpipe_jobs.error, and the rest
# flow: a witness of another circuit, a corrupt witness, an input larger than the circuit's witness
# can be (refused by the feeder before the spool), an id that is no spool id (a plain INSERT), a job
# whose partitions do not match n_parts. zkpipe wait --dsn exits 1 with the reason.
. "$(dirname "$0")/lib.sh"
pg_start
"$ZKPIPE" db init --dsn "$DSN" >/dev/null || fail "db init"
box_config A
box_start A
M=$DATA/bn128/mulchain
P=$DATA/bn128/poseidon
head -c 3000 /dev/urandom >"$T/corrupt.wtns"
head -c $((8 << 20)) /dev/zero >"$T/huge.wtns"
G1=$(db_submit mulchain NORMAL "$M/witness-1.wtns")
OTHER=$(db_submit mulchain NORMAL "$P/witness-1.wtns")
CORRUPT=$(db_submit mulchain381 NORMAL "$T/corrupt.wtns")
HUGE=$(db_submit mulchain NORMAL "$T/huge.wtns")
psql_q "INSERT INTO zkpipe_jobs (id, circuit, n_parts) VALUES ('bad id!', 'mulchain', 1);
        INSERT INTO zkpipe_partitions (job, idx, input) VALUES ('bad id!', 0, '\x00');
        INSERT INTO zkpipe_jobs (id, circuit, n_parts) VALUES ('short-parts', 'mulchain', 2);
        INSERT INTO zkpipe_partitions (job, idx, input) VALUES ('short-parts', 0, '\x00')" >/dev/null ||
    fail "plain INSERTs failed"
G2=$(db_submit mulchain381 NORMAL "$DATA/bls12381/mulchain/witness-2.wtns")
wait_for 120 "every job to end" all_final
err_of() { psql_q "SELECT state || ': ' || coalesce(error, '') FROM zkpipe_jobs WHERE id = '$1'"; }
for j in "$G1" "$G2"; do [ "$(err_of "$j")" = "done: " ] || fail "good job $j: $(err_of "$j")"; done
expect() { # JOB PATTERN
    err_of "$1" | grep -q "^failed: .*$2" || fail "job $1: '$(err_of "$1")', expected failed with '$2'"
}
expect "$OTHER" "witness is for another circuit"
expect "$CORRUPT" "not a wtns file"
expect "$HUGE" "more than the .* an input of this circuit can be"
expect "bad id!" "not a spool id"
expect "short-parts" "partitions are not exactly 0..1"
"$ZKPIPE" wait --dsn "$DSN" "$HUGE" >"$T/w.out" 2>"$T/w.err" && fail "wait on a failed job exited 0"
grep -q "job $HUGE failed: .*more than" "$T/w.err" || fail "wait did not print the reason: $(cat "$T/w.err")"
db_verify "$G1" mulchain
db_verify "$G2" mulchain381
[ -z "$(find "$T/A/spool/done" "$T/A/spool/failed" "$T/A/spool/fleet" "$T/A/spool/tmp" -mindepth 1)" ] ||
    fail "local copies left: $(find "$T/A/spool" -mindepth 2)"
log "PASS: five bad jobs failed with their reasons, the good ones done"
