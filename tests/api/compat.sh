#!/bin/bash
# rapidsnark proverServer's routes (docs/api.md, [api] rapidsnark_compat):
#  (a) = yes on loopback, no token: a proverServer client's calls as it makes them (POST /input/CIRCUIT
#      with the input.json, poll GET /status until success; proof and pubData are JSON text that
#      snarkjs accepts); /start and /stop answer 200; an unknown circuit or one without a generator
#      is refused and the status stays; a new /input does not cancel the running job (two clients:
#      both jobs complete); /cancel of a queued job reads "aborted".
#  (b) = token: the routes need a Bearer token, and each token has its own latest job.
#  (c) = yes with a listen that is not loopback: the ini is refused.
. "$(dirname "$0")/api_lib.sh"
need_snarkjs
M=$DATA/bn128/mulchain
write_tokens "alice $ALICE" "bob $BOB"
api_config "rapidsnark_compat = yes"
start_api
poll_status() { # poll_status WANT [curl args]: GET /status until its status is WANT
    local want=$1 i
    shift
    for ((i = 0; i < 600; i++)); do
        curl -s -o "$T/st" "$@" "$URL/status"
        [ "$(jget "$T/st" 'r["status"]')" = "$want" ] && return 0
        sleep 0.1
    done
    fail "status never became $want: $(cat "$T/st")"
}
check_status_proof() { # the proof in $T/st verifies
    jget "$T/st" 'r["proof"]' >"$T/cp.json"
    jget "$T/st" 'r["pubData"]' >"$T/cpub.json"
    "$SNARKJS" groth16 verify "$(vk_of mulchain)" "$T/cpub.json" "$T/cp.json" 2>&1 | grep -q 'OK!' ||
        fail "snarkjs does not accept the proof of /status: $(head -c 300 "$T/st")"
}

# (a) before the stages run: queued work reads busy, a cancel aborts it
expect 200 "status before any job" "$URL/status"
[ "$(jget "$T/body" 'r["status"]')" = ready ] || fail "status: $(cat "$T/body")"
expect 200 "/start" -X POST "$URL/start"
expect 200 "/stop" -X POST "$URL/stop"
expect 200 "input (queued)" --data-binary @"$M/input-1.json" "$URL/input/mulchain"
[ "$(jget "$T/body" 'r["status"]')" = busy ] || fail "after /input: $(cat "$T/body")"
QID=$(jget "$T/body" 'r["id"]')
expect 200 "/cancel" -X POST "$URL/cancel"
[ "$(jget "$T/body" 'r["status"]')" = aborted ] || fail "after /cancel: $(cat "$T/body")"
expect 404 "an unknown circuit" --data-binary @"$M/input-1.json" "$URL/input/nosuch"
expect 422 "a circuit without a generator" --data-binary @"$M/input-1.json" "$URL/input/poseidon"
expect 400 "input that is not JSON" --data-binary 'a=1' "$URL/input/mulchain"
expect 400 "a path as the circuit" --path-as-is --data-binary @"$M/input-1.json" "$URL/input/../../etc/passwd"
expect 200 "status after the refusals" "$URL/status"
[ "$(jget "$T/body" 'r["id"]')" = "$QID" ] || fail "a refused /input changed the status: $(cat "$T/body")"
expect 405 "GET /input" "$URL/input/mulchain"

# the pipeline: two clients one after the other, both jobs complete
start_pipeline
expect 200 "client 1" --data-binary @"$M/input-1.json" "$URL/input/mulchain"
C1=$(jget "$T/body" 'r["id"]')
expect 200 "client 2" --data-binary @"$M/input-2.json" "$URL/input/mulchain"
C2=$(jget "$T/body" 'r["id"]')
poll_status success
[ "$(jget "$T/st" 'r["id"]')" = "$C2" ] || fail "status follows $(jget "$T/st" 'r["id"]'), not the latest $C2"
check_status_proof
wait_for 60 "client 1's job" test -f "$SPOOL/done/$C1/result.json"
verify_job "$C1" mulchain 1 snarkjs
stop api

# (b) tokens
sed -i 's/^rapidsnark_compat = yes/rapidsnark_compat = token/' "$CONF"
start_api
expect 401 "status without a token" "$URL/status"
expect 401 "input without a token" --data-binary @"$M/input-1.json" "$URL/input/mulchain"
expect 200 "alice's status" -H "Authorization: Bearer $ALICE" "$URL/status"
[ "$(jget "$T/body" 'r["status"]')" = ready ] || fail "alice sees the tokenless job: $(cat "$T/body")"
expect 200 "alice's input" -H "Authorization: Bearer $ALICE" --data-binary @"$M/input-1.json" "$URL/input/mulchain"
expect 200 "bob's input" -H "Authorization: Bearer $BOB" --data-binary @"$M/input-2.json" "$URL/input/mulchain"
BID=$(jget "$T/body" 'r["id"]')
poll_status success -H "Authorization: Bearer $ALICE"
check_status_proof
[ "$(jget "$T/st" 'r["id"]')" != "$BID" ] || fail "alice's status shows bob's job"
poll_status success -H "Authorization: Bearer $BOB"
[ "$(jget "$T/st" 'r["id"]')" = "$BID" ] || fail "bob's status shows $(cat "$T/st")"
check_status_proof
stop api

# (c)
sed -e 's/^rapidsnark_compat = token/rapidsnark_compat = yes/' -e "s/^listen = 127.0.0.1:/listen = 0.0.0.0:/" "$CONF" >"$T/open.ini"
"$API" --config "$T/open.ini" >"$T/open.log" 2>&1 && fail "rapidsnark_compat = yes started on 0.0.0.0"
grep -q 'loopback' "$T/open.log" || fail "refused without the reason: $(cat "$T/open.log")"
stop_all
echo PASS
