#!/bin/bash
# zkpipe-api under load and hostility, bounded and on loopback (docs/api.md "Slow and hostile clients"):
#  (a) 1,000 concurrent idle connections and 200 slow clients (headers one byte every 2 s, and
#      bodies that never finish) held for 20 s: meanwhile every other client's request is answered,
#      and a job goes through the API and the pipeline to a verified proof.
#  (b) 10,000 random and truncated requests (fuzz.py: random bytes, valid requests cut anywhere,
#      mutated headers, mutated JSON bodies with a valid token): zkpipe-api neither crashes nor
#      leaves a job in the spool, and serves normally afterwards.
. "$(dirname "$0")/api_lib.sh"
need_snarkjs
M=$DATA/bn128/mulchain
write_tokens "alice $ALICE"
api_config "max_connections = 1024" "max_body = 256K"
start_pipeline
start_api
A=(-H "Authorization: Bearer $ALICE")
in1=$(cat "$M/input-1.json")

# (a)
python3 - "$API_PORT" >"$T/load.log" 2>&1 <<'PY' &
import resource, socket, sys, time
port = int(sys.argv[1])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
idle, slow = [], []
for i in range(1000):
    s = socket.socket(); s.setblocking(True); s.settimeout(2)
    try: s.connect(("127.0.0.1", port)); idle.append(s)
    except OSError: pass
req = b"POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n"
for i in range(200):
    s = socket.socket(); s.settimeout(2)
    try: s.connect(("127.0.0.1", port)); s.send(req[: 10 + i % 30]); slow.append([s, 10 + i % 30])
    except OSError: pass
print("connected", len(idle), "idle and", len(slow), "slow", flush=True)
end = time.time() + 20
while time.time() < end:
    time.sleep(2)
    for e in slow:
        try:
            if e[1] < len(req): e[0].send(req[e[1]:e[1] + 1]); e[1] += 1
            else: e[0].send(b"x")
        except OSError: pass
def closed(s):
    try:
        s.setblocking(False)
        return s.recv(1) == b""
    except BlockingIOError: return False
    except OSError: return True
di, ds = sum(map(closed, idle)), sum(closed(e[0]) for e in slow)
print("after 20 s: %d of %d idle and %d of %d slow connections closed by the server" % (di, len(idle), ds, len(slow)), flush=True)
sys.exit(0 if ds == len(slow) else 1)
PY
LOAD=$!
wait_for 30 "the load to connect" grep -q connected "$T/load.log"
log "load: $(cat "$T/load.log")"
ok=0
t0=$SECONDS
expect 202 "submit under load" "${A[@]}" -d "{\"circuit\":\"mulchain\",\"inputs\":[$in1]}" "$URL/v1/jobs"
JL=$(jget "$T/body" 'r["id"]')
for i in $(seq 10); do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 3 "${A[@]}" "$URL/v1/circuits")" = 200 ]; then ok=$((ok + 1)); fi
    sleep 1
done
[ "$ok" = 10 ] || fail "only $ok of 10 requests were answered under load"
expect 200 "the job under load" "${A[@]}" "$URL/v1/jobs/$JL?wait=60"
[ "$(jget "$T/body" 'r["state"]')" = done ] || fail "the job under load: $(head -c 400 "$T/body")"
verify_proofs "$T/body" mulchain
log "under load: 10 of 10 requests answered, job $JL done and verified in $((SECONDS - t0)) s"
wait "$LOAD" || fail "slow clients kept their connections: $(tail -1 "$T/load.log")"
log "load: $(tail -1 "$T/load.log")"
alive api || fail "zkpipe-api died under load"

# (b)
before=$(find "$SPOOL"/{incoming,active,done,failed} -mindepth 1 -maxdepth 1 | wc -l)
python3 "$(dirname "$0")/fuzz.py" "$API_PORT" "$ALICE" 10000 "$M/input-1.json" >"$T/fuzz.log" 2>&1 || fail "fuzz.py: $(tail -3 "$T/fuzz.log")"
log "fuzz: $(tail -1 "$T/fuzz.log")"
alive api || fail "zkpipe-api died under the fuzzer: $(tail -5 "$T/logs/api.log")"
after=$(find "$SPOOL"/{incoming,active,done,failed} -mindepth 1 -maxdepth 1 | wc -l)
[ "$after" = "$before" ] || fail "the fuzzer's requests made $((after - before)) jobs"
expect 202 "submit after the fuzzer" "${A[@]}" -d "{\"circuit\":\"mulchain\",\"inputs\":[$in1]}" "$URL/v1/jobs"
JF=$(jget "$T/body" 'r["id"]')
expect 200 "the job after the fuzzer" "${A[@]}" "$URL/v1/jobs/$JF?wait=60"
[ "$(jget "$T/body" 'r["state"]')" = done ] || fail "the job after the fuzzer: $(head -c 400 "$T/body")"
verify_proofs "$T/body" mulchain
stop_all
echo PASS
