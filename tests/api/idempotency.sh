#!/bin/bash
# Idempotency-Key (docs/api.md): the key is kept in the spool, so a repeat finds the same single job,
#  (a) twice in a row (202 both times, Idempotent-Replayed on the repeat), 12 at once (the
#      submission threads run side by side), and per token (another token's same key is another job);
#  (b) zkpipe-api killed -9 after the job is in the spool and before its answer (test point
#      api.submitted): after a restart the same key gives the same job, and it completes;
#  (c) killed -9 after the key is kept and before the job is written (api.key_kept): the repeat submits the job under the kept id, once.
# Every proof is checked by snarkjs; the spool holds exactly one job per key.
. "$(dirname "$0")/api_lib.sh"
need_snarkjs
M=$DATA/bn128/mulchain
write_tokens "alice $ALICE" "bob $BOB"
api_config
A=(-H "Authorization: Bearer $ALICE")
in1=$(cat "$M/input-1.json")
BODY="{\"circuit\":\"mulchain\",\"inputs\":[$in1]}"
jobs_of_key() { grep -l "^submitter = $1" "$SPOOL"/{incoming,active,done,failed}/*/job.ini 2>/dev/null | wc -l; }
start_pipeline

# (a)
start_api
curl -s -D "$T/h1" -o "$T/b1" "${A[@]}" -H 'Idempotency-Key: order-1' -d "$BODY" "$URL/v1/jobs"
curl -s -D "$T/h2" -o "$T/b2" "${A[@]}" -H 'Idempotency-Key: order-1' -d "$BODY" "$URL/v1/jobs"
ID1=$(jget "$T/b1" 'r["id"]')
[ "$(jget "$T/b2" 'r["id"]')" = "$ID1" ] || fail "the same key gave two jobs: $(cat "$T/b1") $(cat "$T/b2")"
grep -q '^HTTP/1.1 202' "$T/h2" && grep -qi '^Idempotent-Replayed: true' "$T/h2" || fail "the repeat: $(cat "$T/h2")"
grep -qi 'Idempotent-Replayed' "$T/h1" && fail "the first answer says replayed"
expect 202 "bob's order-1" -H "Authorization: Bearer $BOB" -H 'Idempotency-Key: order-1' -d "$BODY" "$URL/v1/jobs"
[ "$(jget "$T/body" 'r["id"]')" != "$ID1" ] || fail "two tokens' keys met"
expect 400 "a key with a space" "${A[@]}" -H 'Idempotency-Key: a b' -d "$BODY" "$URL/v1/jobs"
[ "$(jobs_of_key alice)" = 1 ] || fail "alice has $(jobs_of_key alice) jobs after two submissions with one key"
# 12 at once with one key (the submission threads run side by side): one job, one id
CURLS=()
for i in $(seq 12); do
    curl -s -o "$T/par$i" "${A[@]}" -H 'Idempotency-Key: order-par' -d "$BODY" "$URL/v1/jobs" &
    CURLS+=($!)
done
wait "${CURLS[@]}"
ids=$(for i in $(seq 12); do jget "$T/par$i" 'r["id"]'; done | sort -u)
[ "$(echo "$ids" | wc -l)" = 1 ] || fail "12 concurrent submissions of one key gave ids: $ids"
IDP=$ids
[ "$(jobs_of_key alice)" = 2 ] || fail "alice has $(jobs_of_key alice) jobs after the concurrent ones, expected 2"
stop api

# (b) killed between the job and the answer
start_api ZKPIPE_TEST_PAUSE=api.submitted
curl -s -o "$T/lost" --max-time 60 "${A[@]}" -H 'Idempotency-Key: order-2' -d "$BODY" "$URL/v1/jobs" &
CURL=$!
wait_for 20 "zkpipe-api to stop at api.submitted" is_stopped api
kill9 api
wait "$CURL" 2>/dev/null
[ -s "$T/lost" ] && fail "an answer came from the killed zkpipe-api: $(cat "$T/lost")"
start_api
expect 202 "order-2 again" "${A[@]}" -H 'Idempotency-Key: order-2' -d "$BODY" "$URL/v1/jobs"
ID2=$(jget "$T/body" 'r["id"]')
[ "$(jobs_of_key alice)" = 3 ] || fail "alice has $(jobs_of_key alice) jobs, expected 3 (order-1, order-par, order-2)"
stop api

# (c) killed between keeping the key and writing the job
start_api ZKPIPE_TEST_PAUSE=api.key_kept
curl -s -o "$T/lost" --max-time 60 "${A[@]}" -H 'Idempotency-Key: order-3' -d "$BODY" "$URL/v1/jobs" &
CURL=$!
wait_for 20 "zkpipe-api to stop at api.key_kept" is_stopped api
kill9 api
wait "$CURL" 2>/dev/null
[ "$(jobs_of_key alice)" = 3 ] || fail "a job appeared although zkpipe-api died before writing it"
start_api
expect 202 "order-3 again" "${A[@]}" -H 'Idempotency-Key: order-3' -d "$BODY" "$URL/v1/jobs"
ID3=$(jget "$T/body" 'r["id"]')
expect 202 "order-3 once more" "${A[@]}" -H 'Idempotency-Key: order-3' -d "$BODY" "$URL/v1/jobs"
[ "$(jget "$T/body" 'r["id"]')" = "$ID3" ] || fail "order-3 gave two ids"
[ "$(jobs_of_key alice)" = 4 ] || fail "alice has $(jobs_of_key alice) jobs, expected 4"

for id in "$ID1" "$IDP" "$ID2" "$ID3"; do
    expect 200 "job $id" "${A[@]}" "$URL/v1/jobs/$id?wait=60"
    [ "$(jget "$T/body" 'r["state"]')" = done ] || fail "job $id: $(head -c 500 "$T/body")"
    verify_proofs "$T/body" mulchain
done
[ -z "$(ls -A "$SPOOL/tmp")" ] || fail "tmp/ is not empty: $(ls "$SPOOL/tmp")"
stop_all
echo PASS
