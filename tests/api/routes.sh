#!/bin/bash
# zkpipe-api's routes and errors against a real pipeline (2 synthd, gpud cpu, finalizerd), with curl;
# snarkjs checks every returned proof (docs/api.md).
#  (a) before the stages run: 421 for a foreign Host, 401 without or with a wrong token, 400 for what is not a job id, a
#      job cancelled while queued (DELETE) reads "cancelled"; /healthz, /v1/circuits per token.
#  (b) bad requests: malformed JSON (the reason), unknown field, unknown circuit 404, a circuit
#      outside the token's list 403, a body over max_body 413 (Content-Length, and chunked),
#      too many partitions 413, a witness of the other curve or not base64, inputs for a circuit
#      without a generator 422; none of them leaves anything in the spool.
#  (c) the pipeline: an inputs job (2 partitions, bn128) and a witnesses job (bls12381) long-polled
#      to done, every proof verified by snarkjs; an input the circuit rejects fails the job with its
#      message; another token's job is 404 (GET and DELETE); DELETE of a finished job 409.
#  (d) the tokens file: re-read on SIGHUP (a new token works, a removed one gets 401), a bad one
#      keeps the old set; refused at start unless mode 0600 and not a symlink.
#  (e) a full spool: 503 with Retry-After.
#  (f) node's fetch: submit -> wait -> verify (snarkjs's JS API).
. "$(dirname "$0")/api_lib.sh"
need_snarkjs
M=$DATA/bn128/mulchain
M381=$DATA/bls12381/mulchain
write_tokens "# name token circuits" "alice $ALICE" "bob $BOB mulchain"
api_config "max_body = 64K" "max_partitions = 4" "max_wait = 60"
start_api
A=(-H "Authorization: Bearer $ALICE")
B=(-H "Authorization: Bearer $BOB")
jobs_in_spool() { find "$SPOOL"/{tmp,incoming,active,done,failed} -mindepth 1 -maxdepth 1 | wc -l; }

# (a)
expect 200 healthz "$URL/healthz"
expect 421 "a foreign Host (DNS rebinding)" -H 'Host: evil.example.com' "$URL/healthz"
expect 200 "Host localhost" -H "Host: localhost:$API_PORT" "$URL/healthz"
expect 401 "no token" "$URL/v1/circuits"
grep -q 'Bearer' "$T/body" || fail "401 without a reason: $(cat "$T/body")"
expect 401 "a wrong token" -H "Authorization: Bearer ${ALICE}x" "$URL/v1/circuits"
expect 401 "a token's prefix" -H "Authorization: Bearer ${ALICE:0:20}" "$URL/v1/circuits"
expect 200 "circuits (alice)" "${A[@]}" "$URL/v1/circuits"
[ "$(jget "$T/body" '",".join("%s:%s:%s:%s" % (c["name"], c["curve"], c["nPublic"], c["inputs"]) for c in r["circuits"])')" = \
    "mulchain:bn128:2:True,mulchain381:bls12381:2:True,poseidon:bn128:3:False" ] || fail "circuits: $(cat "$T/body")"
[ "$(jget "$T/body" 'len(r["circuits"])')" = 3 ] || fail "alice sees $(cat "$T/body")"
expect 200 "circuits (bob)" "${B[@]}" "$URL/v1/circuits"
[ "$(jget "$T/body" '[c["name"] for c in r["circuits"]]')" = "['mulchain']" ] || fail "bob sees $(cat "$T/body")"
for bad in '..' '.hidden' 'a%20b' '..%2F..%2Fetc%2Fpasswd' 'x%00y' "$(printf 'a%.0s' {1..40})"; do
    expect 400 "job id $bad" --path-as-is "${A[@]}" "$URL/v1/jobs/$bad"
done
expect 404 "unknown route" "${A[@]}" "$URL/v2/jobs"
expect 405 "PUT /v1/jobs" -X PUT "${A[@]}" "$URL/v1/jobs"
in1=$(cat "$M/input-1.json")
expect 202 "submit (queued)" "${A[@]}" -d "{\"circuit\":\"mulchain\",\"inputs\":[$in1]}" "$URL/v1/jobs"
QID=$(jget "$T/body" 'r["id"]')
[ "$(jget "$T/body" 'r["state"]')" = queued ] || fail "a new job is $(cat "$T/body")"
expect 404 "bob deletes alice's job" -X DELETE "${B[@]}" "$URL/v1/jobs/$QID"
expect 202 "cancel a queued job" -X DELETE "${A[@]}" "$URL/v1/jobs/$QID"
expect 200 "the cancelled job" "${A[@]}" "$URL/v1/jobs/$QID"
[ "$(jget "$T/body" 'r["state"]')" = cancelled ] || fail "a cancelled job reads $(cat "$T/body")"
expect 409 "cancel it again" -X DELETE "${A[@]}" "$URL/v1/jobs/$QID"

# (b) nothing below reaches the spool
before=$(jobs_in_spool)
expect 400 "malformed JSON" "${A[@]}" -d '{"circuit": "mulchain", "inputs": [' "$URL/v1/jobs"
grep -q 'malformed JSON' "$T/body" || fail "no reason: $(cat "$T/body")"
expect 400 "trailing text" "${A[@]}" -d '{"circuit":"mulchain","inputs":[{}]} x' "$URL/v1/jobs"
expect 400 "not an object" "${A[@]}" -d '[1,2]' "$URL/v1/jobs"
expect 400 "unknown field" "${A[@]}" -d "{\"circuit\":\"mulchain\",\"inputs\":[$in1],\"colour\":1}" "$URL/v1/jobs"
grep -q colour "$T/body" || fail "the unknown field is not named: $(cat "$T/body")"
expect 400 "both inputs and witnesses" "${A[@]}" -d "{\"circuit\":\"mulchain\",\"inputs\":[$in1],\"witnesses\":[]}" "$URL/v1/jobs"
expect 400 "no partitions" "${A[@]}" -d '{"circuit":"mulchain","inputs":[]}' "$URL/v1/jobs"
expect 400 "bad priority" "${A[@]}" -d "{\"circuit\":\"mulchain\",\"inputs\":[$in1],\"priority\":\"URGENT\"}" "$URL/v1/jobs"
expect 404 "unknown circuit" "${A[@]}" -d "{\"circuit\":\"nosuch\",\"inputs\":[$in1]}" "$URL/v1/jobs"
expect 403 "bob's circuit list" "${B[@]}" -d "{\"circuit\":\"mulchain381\",\"inputs\":[$in1]}" "$URL/v1/jobs"
expect 413 "too many partitions" "${A[@]}" -d "{\"circuit\":\"mulchain\",\"inputs\":[$in1,$in1,$in1,$in1,$in1]}" "$URL/v1/jobs"
head -c 70000 /dev/zero | tr '\0' ' ' >"$T/big.json"
expect 413 "body over max_body" "${A[@]}" --data-binary @"$T/big.json" "$URL/v1/jobs"
expect 413 "chunked body over max_body" "${A[@]}" -H 'Transfer-Encoding: chunked' --data-binary @"$T/big.json" "$URL/v1/jobs"
expect 401 "a big body without a token is not read" --data-binary @"$T/big.json" "$URL/v1/jobs"
w381=$(base64 -w0 "$M381/witness-1.wtns")
expect 422 "a bls12381 witness for a bn128 circuit" "${A[@]}" -d "{\"circuit\":\"mulchain\",\"witnesses\":[\"$w381\"]}" "$URL/v1/jobs"
grep -q 'another curve' "$T/body" || fail "no reason: $(cat "$T/body")"
expect 400 "not base64" "${A[@]}" -d '{"circuit":"mulchain","witnesses":["!!!"]}' "$URL/v1/jobs"
expect 422 "not a witness" "${A[@]}" -d '{"circuit":"mulchain","witnesses":["aGVsbG8="]}' "$URL/v1/jobs"
expect 422 "inputs without a generator" "${A[@]}" -d "{\"circuit\":\"poseidon\",\"inputs\":[$in1]}" "$URL/v1/jobs"
[ "$(jobs_in_spool)" = "$before" ] || fail "a refused request left something in the spool"

# (c)
start_pipeline
in2=$(cat "$M/input-2.json")
expect 202 "submit inputs" "${A[@]}" -d "{\"circuit\":\"mulchain\",\"inputs\":[$in1,$in2],\"priority\":\"HIGH\"}" "$URL/v1/jobs"
J1=$(jget "$T/body" 'r["id"]')
expect 202 "submit a witness" "${A[@]}" -d "{\"circuit\":\"mulchain381\",\"witnesses\":[\"$w381\"]}" "$URL/v1/jobs"
J2=$(jget "$T/body" 'r["id"]')
expect 202 "an input the circuit rejects" "${A[@]}" -d '{"circuit":"mulchain","inputs":[{"nosuchsignal":1}]}' "$URL/v1/jobs"
J3=$(jget "$T/body" 'r["id"]')
expect 404 "bob reads alice's job" "${B[@]}" "$URL/v1/jobs/$J1"
t0=$SECONDS
expect 200 "long-poll J1" "${A[@]}" "$URL/v1/jobs/$J1?wait=60"
[ "$(jget "$T/body" 'r["state"]')" = done ] || fail "J1 after the long-poll: $(head -c 600 "$T/body")"
[ "$(jget "$T/body" 'r["finished"]')" = 2 ] || fail "J1 finished: $(head -c 300 "$T/body")"
[ "$(jget "$T/body" 'r["priority"]')" = HIGH ] || fail "J1's priority: $(head -c 300 "$T/body")"
verify_proofs "$T/body" mulchain
expect 200 "long-poll J2" "${A[@]}" "$URL/v1/jobs/$J2?wait=60"
[ "$(jget "$T/body" 'r["state"]')" = done ] || fail "J2: $(head -c 600 "$T/body")"
verify_proofs "$T/body" mulchain381
cp "$T/body" "$T/j2.json"
expect 200 "long-poll J3" "${A[@]}" "$URL/v1/jobs/$J3?wait=60"
[ "$(jget "$T/body" 'r["state"]')" = failed ] || fail "J3: $(head -c 600 "$T/body")"
grep -q nosuchsignal "$T/body" || fail "J3's error does not name the signal: $(cat "$T/body")"
log "three jobs done in $((SECONDS - t0)) s"
expect 409 "cancel a finished job" -X DELETE "${A[@]}" "$URL/v1/jobs/$J1"
# a long-poll of a finished job answers at once; ?wait beyond max_wait is cut to it
expect 200 "wait on a done job" "${A[@]}" "$URL/v1/jobs/$J1?wait=3600"
expect 400 "wait=soon" "${A[@]}" "$URL/v1/jobs/$J1?wait=soon"

# (d)
write_tokens "alice $ALICE" "carol carol-token-0123456789abcd mulchain"
kill -HUP "${PIDS[api]}"
wait_for 10 "the new tokens" sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer carol-token-0123456789abcd' $URL/v1/circuits)\" = 200 ]"
expect 401 "bob's removed token" "${B[@]}" "$URL/v1/circuits"
printf 'alice short\n' >"$TOKENS"
kill -HUP "${PIDS[api]}"
wait_for 10 "the bad file logged" grep -q 'stay in use' "$T/logs/api.log"
grep -q 'the token of alice has 5 characters: expected 16 to 256' "$T/logs/api.log" ||
    fail "a short token not named: $(grep 'stay in use' "$T/logs/api.log")"
expect 200 "alice after a bad reload" "${A[@]}" "$URL/v1/circuits"
write_tokens "alice $ALICE"
chmod 644 "$TOKENS"
"$API" --config "$CONF" >"$T/mode.log" 2>&1 && fail "zkpipe-api started with a tokens file of mode 0644"
grep -q 'chmod 0600' "$T/mode.log" || fail "mode 0644: $(cat "$T/mode.log")"
chmod 600 "$TOKENS"
# a token with a control character (api_token_form, the rule the CLI's --token-file shares)
printf 'alice alice-token-0123\00789abcdef\n' >"$TOKENS"
"$API" --config "$CONF" >"$T/ctl.log" 2>&1 && fail "zkpipe-api started with a control character in a token"
grep -q 'the token of alice: printable ASCII only' "$T/ctl.log" || fail "control character: $(cat "$T/ctl.log")"
write_tokens "alice $ALICE"
ln -s "$TOKENS" "$T/tokens-link"
sed -i "s|^tokens = .*|tokens = $T/tokens-link|" "$CONF"
"$API" --config "$CONF" >"$T/link.log" 2>&1 && fail "zkpipe-api started with a tokens file that is a symlink"
grep -q 'symbolic link' "$T/link.log" || fail "symlink: $(cat "$T/link.log")"
sed -i "s|^tokens = .*|tokens = $TOKENS|" "$CONF"

# (e) a second instance that sees the spool as full
P2=$(free_port)
sed -e "s|^listen = .*|listen = 127.0.0.1:$P2|" -e "s|^\[pipeline\]|[pipeline]\nmin_free = 1T|" "$CONF" >"$T/full.ini"
"$API" --config "$T/full.ini" >>"$T/logs/api-full.log" 2>&1 &
PIDS[apifull]=$!
wait_for 20 "the second zkpipe-api" curl -sf -o /dev/null "http://127.0.0.1:$P2/healthz"
curl -s -D "$T/h503" -o "$T/body" -w '%{http_code}' "${A[@]}" -d "{\"circuit\":\"mulchain\",\"inputs\":[$in1]}" \
    "http://127.0.0.1:$P2/v1/jobs" >"$T/code"
[ "$(cat "$T/code")" = 503 ] || fail "a full spool: HTTP $(cat "$T/code"): $(cat "$T/body")"
grep -qi '^Retry-After:' "$T/h503" || fail "503 without Retry-After"
stop apifull

# (f) node's fetch
node - "$URL" "$ALICE" "$M/input-1.json" "$(vk_of mulchain)" "$ROOT/node_modules/snarkjs" <<'JS' >"$T/node.log" 2>&1 || fail "node client: $(tail -5 "$T/node.log")"
const [url, token, inputPath, vkPath, snarkjsPath] = process.argv.slice(2);
const fs = require("fs");
const snarkjs = require(snarkjsPath);
(async () => {
    const h = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
    const input = JSON.parse(fs.readFileSync(inputPath, "utf8"));
    let r = await fetch(`${url}/v1/jobs`, { method: "POST", headers: h, body: JSON.stringify({ circuit: "mulchain", inputs: [input] }) });
    if (r.status !== 202) throw new Error(`submit: ${r.status} ${await r.text()}`);
    const { id } = await r.json();
    let job;
    for (let i = 0; i < 10; i++) {
        r = await fetch(`${url}/v1/jobs/${id}?wait=30`, { headers: h });
        job = await r.json();
        if (job.state === "done" || job.state === "failed") break;
    }
    if (job.state !== "done") throw new Error(`job ${id}: ${JSON.stringify(job)}`);
    const vk = JSON.parse(fs.readFileSync(vkPath, "utf8"));
    const ok = await snarkjs.groth16.verify(vk, job.proofs[0].public, job.proofs[0].proof);
    if (!ok) throw new Error("snarkjs rejects the proof");
    console.log(`node: job ${id} verified`);
    process.exit(0);
})().catch((e) => { console.error(e.message); process.exit(1); });
JS
log "$(tail -1 "$T/node.log")"
alive api || fail "zkpipe-api died"
stop_all
echo PASS
