#!/bin/bash
# zkpipe submit|wait|status --url URL --token-file F (docs/api.md): the CLI through zkpipe-api.
#  (a) submit --input (2 partitions) and submit of a witness, wait --out DIR writes proof-<k>.json
#      and public-<k>.json that snarkjs accepts; wait without --out prints the job's JSON;
#      status JOB and status (the token's circuits).
#  (b) a wrong token: exit 2 and the server's reason; a token file readable by others: refused;
#      another token's job: exit 2; a failed job: wait exits 1 with the circuit's message.
. "$(dirname "$0")/api_lib.sh"
need_snarkjs
"$ZKPIPE" submit --help | grep -q -- '--url' || { echo "SKIP: zkpipe built without libcurl (--url)"; exit 77; }
M=$DATA/bn128/mulchain
write_tokens "alice $ALICE" "bob $BOB"
api_config
start_pipeline
start_api
echo "$ALICE" >"$T/alice.tok"
echo "$BOB" >"$T/bob.tok"
echo "wrong-token-0123456789abcdef" >"$T/wrong.tok"
chmod 600 "$T"/*.tok
U=(--url "$URL" --token-file "$T/alice.tok")

# (a)
out=$("$ZKPIPE" submit "${U[@]}" --circuit mulchain --input "$M/input-1.json" "$M/input-2.json") || fail "submit --url: $out"
J1=$(echo "$out" | tail -n 1)
spool_valid() { [[ $1 =~ ^[0-9]{8}T[0-9]{6}\.[0-9]{6}-[0-9a-f]{6}$ ]]; }
spool_valid "$J1" || fail "submit --url printed $out"
out=$("$ZKPIPE" submit "${U[@]}" --circuit mulchain --priority HIGH "$M/witness-1.wtns") || fail "submit --url (witness): $out"
J2=$(echo "$out" | tail -n 1)
mkdir -p "$T/out1" "$T/out2"
"$ZKPIPE" wait "${U[@]}" --timeout 60 --out "$T/out1" "$J1" >"$T/w1" 2>&1 || fail "wait --url: $(cat "$T/w1")"
for k in 0 1; do
    "$SNARKJS" groth16 verify "$(vk_of mulchain)" "$T/out1/public-$k.json" "$T/out1/proof-$k.json" 2>&1 | grep -q 'OK!' ||
        fail "snarkjs rejects $T/out1/proof-$k.json"
done
"$ZKPIPE" wait "${U[@]}" --timeout 60 "$J2" >"$T/w2.json" 2>"$T/w2.err" || fail "wait --url J2: $(cat "$T/w2.err")"
verify_proofs "$T/w2.json" mulchain
"$ZKPIPE" status "${U[@]}" "$J2" >"$T/s" || fail "status --url JOB: $(cat "$T/s")"
grep -q "^job $J2 circuit mulchain priority HIGH state done partitions 1 finished 1$" "$T/s" || fail "status: $(cat "$T/s")"
"$ZKPIPE" status "${U[@]}" >"$T/s" || fail "status --url: $(cat "$T/s")"
grep -q '^circuit mulchain381 curve bls12381 nPublic 2 inputs yes$' "$T/s" || fail "status --url: $(cat "$T/s")"

# (b)
"$ZKPIPE" status --url "$URL" --token-file "$T/wrong.tok" >"$T/s" 2>&1
[ $? = 2 ] && grep -q 'HTTP 401: the token is not valid' "$T/s" || fail "a wrong token: $(cat "$T/s")"
"$ZKPIPE" wait --url "$URL" --token-file "$T/bob.tok" "$J1" >"$T/s" 2>&1
[ $? = 2 ] && grep -q "HTTP 404: no job $J1" "$T/s" || fail "bob waits for alice's job: $(cat "$T/s")"
chmod 644 "$T/bob.tok"
"$ZKPIPE" status --url "$URL" --token-file "$T/bob.tok" >"$T/s" 2>&1 && fail "a token file of mode 0644 was used"
grep -q 'readable by others' "$T/s" || fail "mode 0644: $(cat "$T/s")"
# a token longer than the server takes is named, not sent cut short (it was cut at 511 characters)
(umask 077 && python3 -c 'print("x" * 600)' >"$T/long.tok")
"$ZKPIPE" status --url "$URL" --token-file "$T/long.tok" >"$T/s" 2>&1 && fail "a 600-character token was used"
grep -q 'long.tok: the token on the first line has 600 characters: expected 16 to 256$' "$T/s" ||
    fail "a 600-character token: $(cat "$T/s")"
"$ZKPIPE" submit --url "$URL" --circuit mulchain "$M/witness-1.wtns" >"$T/s" 2>&1 && fail "--url without --token-file"
echo '{"nosuchsignal": 1}' >"$T/bad.json"
J3=$("$ZKPIPE" submit "${U[@]}" --circuit mulchain --input "$T/bad.json" | tail -n 1)
"$ZKPIPE" wait "${U[@]}" --timeout 60 "$J3" >"$T/s" 2>&1
[ $? = 1 ] && grep -q 'nosuchsignal' "$T/s" || fail "wait of a failed job: $(cat "$T/s")"
stop_all
echo PASS
