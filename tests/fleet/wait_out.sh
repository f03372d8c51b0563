#!/bin/bash
# Finding 15 of issue 25: zkpipe wait --dsn --out DIR with DIR missing (or not a directory) exits 2,
# the code of bad usage, not 1 (a failed job), with one line naming DIR; before it waits, whatever
# the job's state.
. "$(dirname "$0")/lib.sh"
pg_start
"$ZKPIPE" db init --dsn "$DSN" >/dev/null || fail "db init"
psql_q "INSERT INTO zkpipe_jobs (id, circuit, n_parts, state) VALUES ('done-1', 'mulchain', 1, 'done'), ('queued-1', 'mulchain', 1, 'queued');
        INSERT INTO zkpipe_partitions (job, idx, input, proof, public, box)
        VALUES ('done-1', 0, '\x00', '{\"pi_a\": []}', '[\"1\"]', 'A'), ('queued-1', 0, '\x00', NULL, NULL, NULL)" >/dev/null ||
    fail "INSERT failed"
touch "$T/file"
for d in "$T/missing" "$T/file"; do
    for j in done-1 queued-1; do
        rc=0
        timeout 20 "$ZKPIPE" wait --dsn "$DSN" --out "$d" --timeout 3 "$j" >"$T/w.out" 2>"$T/w.err" || rc=$?
        [ "$rc" = 2 ] || fail "wait --out $d on $j: exit $rc, expected 2: $(cat "$T/w.err")"
        [ "$(wc -l <"$T/w.err")" = 1 ] && grep -q -- "--out $d: " "$T/w.err" ||
            fail "wait --out $d on $j: not one line naming it: $(cat "$T/w.err")"
    done
done
mkdir "$T/out"
"$ZKPIPE" wait --dsn "$DSN" --out "$T/out" --timeout 3 done-1 >"$T/w.out" 2>"$T/w.err" || fail "wait --out: $(cat "$T/w.err")"
[ "$(cat "$T/out/public-0.json")" = '["1"]' ] || fail "public-0.json not written"
log "PASS: a missing --out DIR is exit 2 with one line"
