#!/bin/bash
# Two boxes (each a pipeline with its own segment, spool and feeder) share one queue: 40 jobs over both
# curves all finish, each partition has exactly one result, written by one box, and every proof
# verifies (the native verifier, and snarkjs for every proof); both boxes did work; the local
# copies are retired; zkpipe status --dsn shows both boxes.
. "$(dirname "$0")/lib.sh"
pg_start
"$ZKPIPE" db init --dsn "$DSN" >/dev/null || fail "db init"
box_config A
box_config B
box_start A
box_start B
M=$DATA/bn128/mulchain
M3=$DATA/bls12381/mulchain
P=$DATA/bn128/poseidon
declare -A CIRC=()
N=${JOBS:-40}
for ((i = 0; i < N; i++)); do
    case $((i % 3)) in
    0) c=mulchain files=("$M/witness-1.wtns" "$M/witness-2.wtns") ;;
    1) c=mulchain381 files=("$M3/witness-$((i % 2 + 1)).wtns") ;;
    2) c=poseidon files=("$P/witness-$((i % 4 + 1)).wtns") ;;
    esac
    j=$(db_submit $c NORMAL "${files[@]}")
    CIRC[$j]=$c
done
log "submitted $N jobs"
wait_for 240 "every job to end" all_final
[ "$(jobs_in done)" = "$N" ] || fail "not every job is done: $(psql_q "SELECT id, state, error FROM zkpipe_jobs WHERE state <> 'done'")"
parts=$(psql_q "SELECT count(*) FROM zkpipe_partitions")
[ "$(psql_q "SELECT count(*) FROM zkpipe_partitions WHERE proof IS NOT NULL AND public IS NOT NULL AND box IS NOT NULL")" = "$parts" ] ||
    fail "a partition has no proof or no box"
[ "$(psql_q "SELECT count(DISTINCT box) FROM zkpipe_partitions")" = 2 ] ||
    fail "one box did all the work: $(psql_q "SELECT box, count(*) FROM zkpipe_partitions GROUP BY box")"
[ "$(psql_q "SELECT count(*) FROM zkpipe_jobs j WHERE EXISTS (SELECT 1 FROM zkpipe_partitions p WHERE p.job = j.id AND p.box <> j.lease_owner)")" = 0 ] ||
    fail "a job's partitions were written by another box than the one that ended it"
for j in "${!CIRC[@]}"; do db_verify "$j" "${CIRC[$j]}"; done
# snarkjs accepts every proof: one "vk public proof" line per partition, two verifiers at a time
# (each costs about half a second of node start-up)
if [ -x "$SNARKJS" ]; then
    for j in "${!CIRC[@]}"; do
        n=$(psql_q "SELECT n_parts FROM zkpipe_jobs WHERE id = '$j'")
        for ((k = 0; k < n; k++)); do echo "$(vk_of "${CIRC[$j]}") $T/out/$j/public-$k.json $T/out/$j/proof-$k.json"; done
    done >"$T/snarkjs.list"
    [ "$(wc -l <"$T/snarkjs.list")" = "$parts" ] || fail "$T/snarkjs.list: $(wc -l <"$T/snarkjs.list") proofs for $parts partitions"
    SNARKJS=$SNARKJS xargs -P 2 -n 3 bash -c \
        '"$SNARKJS" groth16 verify "$0" "$1" "$2" 2>&1 | grep -q "OK!" || { echo "$2"; exit 1; }' \
        <"$T/snarkjs.list" >"$T/snarkjs.rejected" || fail "snarkjs does not accept: $(tr '\n' ' ' <"$T/snarkjs.rejected")"
    log "snarkjs accepts all $parts proofs"
else
    log "snarkjs not installed ($SNARKJS): proofs checked by the native verifier only"
fi
for b in A B; do
    left=$(find "$T/$b/spool/done" "$T/$b/spool/failed" "$T/$b/spool/fleet" -mindepth 1)
    [ -z "$left" ] || fail "box $b kept local copies: $left"
done
st=$("$ZKPIPE" status --dsn "$DSN") || fail "status --dsn"
echo "$st" | grep -q "box A" && echo "$st" | grep -q "box B" && echo "$st" | grep -q "state done jobs $N" ||
    fail "status --dsn: $st"
log "PASS: $N jobs ($parts partitions) over two boxes, $(psql_q "SELECT string_agg(box || ' ' || n, ', ') FROM (SELECT box, count(*) n FROM zkpipe_partitions GROUP BY box) x")"
