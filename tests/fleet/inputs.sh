#!/bin/bash
# Circuit inputs through the database: `zkpipe submit --dsn --input` queues input.json partitions
# (zkpipe_jobs.inputs); a box whose circuit has a wasm generator computes each witness in synthd and
# writes back proofs whose public signals are the fixture's; a job of inputs for a circuit the box
# has no generator for fails with that reason.
. "$(dirname "$0")/lib.sh"
pg_start
"$ZKPIPE" db init --dsn "$DSN" >/dev/null || fail "db init"
L=$DATA/bls12381/mulchain
# the last section of box_config's circuits is mulchain381: the wasm line goes there
box_config A "wasm = $L/mulchain.wasm" "[pipeline]" "cache = $T/cache"
box_start A
out=$("$ZKPIPE" submit --dsn "$DSN" --circuit mulchain381 --input "$L/input-1.json" "$L/input-2.json" 2>&1) ||
    fail "submit --dsn --input: $out"
J=$(echo "$out" | tail -n 1)
[ "$(psql_q "SELECT inputs FROM zkpipe_jobs WHERE id = '$J'")" = t ] || fail "the job is not marked as inputs"
out=$("$ZKPIPE" submit --dsn "$DSN" --circuit mulchain --input "$DATA/bn128/mulchain/input-1.json" 2>&1) ||
    fail "submit --dsn --input (no generator): $out"
NOGEN=$(echo "$out" | tail -n 1)
wait_for 240 "both jobs to end" all_final
db_verify "$J" mulchain381
for k in 0 1; do
    cmp -s <(tr -d ' \n' <"$T/out/$J/public-$k.json") <(tr -d ' \n' <"$L/public-$((k + 1)).json") ||
        fail "public-$k.json is not the fixture's: the witness was not computed from input-$((k + 1)).json"
done
psql_q "SELECT state || ': ' || coalesce(error, '') FROM zkpipe_jobs WHERE id = '$NOGEN'" |
    grep -q "^failed: .*no witness generator" || fail "a job of inputs without a generator did not fail with the reason"
log "PASS"
