#!/bin/bash
# The exporter against hostile HTTP clients (issue 25, finding 10; docs/observe.md): 70 clients
# that trickle their request headers (one line every 4 s) do not keep a scrape out, and a Host
# that is neither an address, localhost, this machine's name nor in [exporter] hosts gets 421
# (DNS rebinding), while the listed names, addresses and localhost are served.
. "$(dirname "$0")/lib.sh"
EXPORTER=$BUILD/exporter/zkpipe-exporter
[ -x "$EXPORTER" ] || { echo "SKIP: zkpipe-exporter not built (libmicrohttpd-dev missing)"; exit 77; }
command -v curl >/dev/null || { echo "SKIP: curl not installed"; exit 77; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
EXP_PORT=$(free_port)
write_config 4 0 "[exporter]" "listen = 127.0.0.1:$EXP_PORT" "hosts = box1.example.org, Metrics.Internal"
URL=http://127.0.0.1:$EXP_PORT
"$EXPORTER" --config "$CONF" >>"$T/logs/exporter.log" 2>&1 &
PIDS[exporter]=$!
wait_for 20 "the exporter to listen" curl -sf -o /dev/null "$URL/metrics"

code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@"; }
[ "$(code -H 'Host: evil.example.com' "$URL/metrics")" = 421 ] || fail "a foreign Host is served"
[ "$(code -H "Host: evil.example.com:$EXP_PORT" "$URL/status")" = 421 ] || fail "a foreign Host:port is served"
for h in "127.0.0.1:$EXP_PORT" "localhost:$EXP_PORT" "LOCALHOST" "box1.example.org:$EXP_PORT" \
    "metrics.internal" "$(hostname)" "10.1.2.3:9821" "[::1]:$EXP_PORT"; do
    [ "$(code -H "Host: $h" "$URL/metrics")" = 200 ] || fail "Host $h is not served"
done
[ "$(code -0 -H 'Host:' "$URL/metrics")" = 200 ] || fail "HTTP/1.0 without Host is not served"

# 70 slowloris clients, each sending one header line every 4 s for 60 s
python3 - "$EXP_PORT" >"$T/slow.log" 2>&1 <<'PY' &
import socket, sys, time
port = int(sys.argv[1])
socks = []
for i in range(70):
    s = socket.socket(); s.settimeout(2)
    try:
        s.connect(("127.0.0.1", port)); s.send(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"); socks.append(s)
    except OSError:
        pass
print("connected", len(socks), flush=True)
end = time.time() + 60
while time.time() < end and socks:
    time.sleep(4)
    alive = []
    for s in socks:
        try:
            s.send(b"X-Slow: 1\r\n"); alive.append(s)
        except OSError:
            pass
    socks = alive
print("still open after 60 s:", len(socks), flush=True)
PY
PIDS[slow]=$!
sleep 2
grep -q connected "$T/slow.log" || sleep 3
log "slow clients: $(cat "$T/slow.log")"
ok=0
for i in $(seq 10); do
    if curl -sf --max-time 3 -o /dev/null "$URL/metrics"; then ok=$((ok + 1)); fi
    sleep 1
done
[ "$ok" -eq 10 ] || fail "only $ok of 10 scrapes succeeded while 70 slow clients were connected"
log "10 of 10 scrapes served during the slow clients"
kill "${PIDS[slow]}" 2>/dev/null
echo PASS
