# zkpipe-api's part of the API tests (tests/api/*.sh), on top of the pipeline tests' helpers
# (tests/pipeline/lib.sh: the private pipeline, its daemons and cleanup).
. "$(dirname "${BASH_SOURCE[0]}")/../pipeline/lib.sh"
API=$BUILD/api/zkpipe-api
[ -x "$API" ] || { echo "SKIP: zkpipe-api not built (libmicrohttpd-dev or nettle missing)"; exit 77; }
command -v curl >/dev/null || { echo "SKIP: curl not installed"; exit 77; }
TOKENS=$T/tokens
ALICE=alice-token-0123456789abcdef
BOB=bob-token-0123456789abcdef00
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
API_PORT=$(free_port)
URL=http://127.0.0.1:$API_PORT

# write_tokens LINE...: the tokens file, mode 0600
write_tokens() {
    printf '%s\n' "$@" >"$TOKENS"
    chmod 600 "$TOKENS"
}

# api_config [ini lines...]: the fixtures (mulchain and mulchain381 with their wasm, poseidon without)
# plus [api] on API_PORT
api_config() {
    write_witgen_config "[finalizer]" "verify = yes" "$(fixture_circuits_ini_wasm "$DATA" mulchain mulchain381)" \
        "$(fixture_circuits_ini "$DATA" poseidon)" "[api]" "listen = 127.0.0.1:$API_PORT" "tokens = $TOKENS" "$@"
}

# start_api [VAR=value ...]: zkpipe-api in the background, waited for
start_api() {
    env "$@" "$API" --config "$CONF" >>"$T/logs/api.log" 2>&1 &
    PIDS[api]=$!
    wait_for 20 "zkpipe-api to listen" curl -sf -o /dev/null "$URL/healthz"
}
start_pipeline() { start synthd1; start synthd2; start gpud; start finalizerd; }

# http CODE_VAR BODY_FILE curl-args...: the status into $CODE, the body into BODY_FILE
http() {
    local out=$1
    shift
    CODE=$(curl -s -o "$out" -w '%{http_code}' --max-time 90 "$@")
}
jget() { python3 -c "import json,sys; r = json.load(open(sys.argv[1])); print($2)" "$1"; }
# expect CODE WHAT curl-args...: fails unless the answer has status CODE; the body is $T/body
expect() {
    local want=$1 what=$2
    shift 2
    http "$T/body" "$@"
    [ "$CODE" = "$want" ] || fail "$what: HTTP $CODE, expected $want: $(head -c 400 "$T/body")"
}
# verify_proofs BODY CIRCUIT: every proof of a GET /v1/jobs/ID answer is accepted by snarkjs
verify_proofs() {
    local body=$1 vk n k
    vk=$(vk_of "$2")
    n=$(jget "$body" 'len(r["proofs"])')
    [ "$n" = "$(jget "$body" 'r["partitions"]')" ] || fail "$n proofs for $(jget "$body" 'r["partitions"]') partitions"
    for ((k = 0; k < n; k++)); do
        jget "$body" "json.dumps(r['proofs'][$k]['proof'])" >"$T/p.json"
        jget "$body" "json.dumps(r['proofs'][$k]['public'])" >"$T/pub.json"
        "$SNARKJS" groth16 verify "$vk" "$T/pub.json" "$T/p.json" 2>&1 | grep -q 'OK!' ||
            fail "snarkjs does not accept proof $k of $(jget "$body" 'r["id"]')"
    done
}
