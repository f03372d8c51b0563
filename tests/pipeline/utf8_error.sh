#!/bin/bash
# Error texts that carry bytes which are not UTF-8 (issue 25, finding 3): an input.json whose signal
# name is "q\xff\xfe" fails its job with a reason that names it, and result.json and the exporter's
# /status stay valid UTF-8 JSON (the bytes written as \xFF\xFE, base/text.h); a reason longer than
# the segment keeps (SHM_ERROR_MAX) is cut between characters, never inside one.
. "$(dirname "$0")/lib.sh"
EXPORTER=$BUILD/exporter/zkpipe-exporter
[ -x "$EXPORTER" ] || { echo "SKIP: zkpipe-exporter not built (libmicrohttpd-dev missing)"; exit 77; }
command -v curl >/dev/null || { echo "SKIP: curl not installed"; exit 77; }
W=$DATA/witgen
"$ZKPIPE" keygen --insecure-dev "$W/guard.r1cs" "$T/guard.zkey" >/dev/null 2>&1 || fail "keygen guard"
EXP_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
write_witgen_config "[exporter]" "listen = 127.0.0.1:$EXP_PORT" \
    "[circuit guard]" \
    "zkey = $T/guard.zkey" \
    "wasm = $W/guard.wasm"
printf '{"x": 7, "m": [[1, 2, 3], [4, 5, 6]], "q\xff\xfe": 1}\n' >"$T/bad.json"
# two long names of two-byte characters, one byte apart: the old cut fell inside a character in one
python3 -c "
import sys
for k, pre in ((1, ''), (2, 'a')):
    open(sys.argv[k], 'w').write('{\"x\": 7, \"m\": [[1, 2, 3], [4, 5, 6]], \"' + pre + '\u00e9' * 300 + '\": 1}\n')
" "$T/long0.json" "$T/long1.json"
start synthd1
start gpud
start finalizerd
"$EXPORTER" --config "$CONF" >>"$T/logs/exporter.log" 2>&1 &
PIDS[exporter]=$!
wait_for 20 "the exporter to listen" curl -sf -o /dev/null "http://127.0.0.1:$EXP_PORT/metrics"
for f in bad long0 long1; do
    J=$(submit_inputs guard "$T/$f.json")
    rc=0
    wait_job "$J" 60 || rc=$?
    [ $rc = 1 ] || fail "job $J ($f.json): wait exit $rc, expected 1: $(cat "$T/wait-$J.err")"
    R=$SPOOL/failed/$J/result.json
    curl -sf -o "$T/status-$f.json" "http://127.0.0.1:$EXP_PORT/status" || fail "GET /status failed"
    python3 - "$R" "$T/status-$f.json" "$J" "$f" <<'PY' || fail "job $J ($f.json): not valid UTF-8 JSON (above)"
import json, sys
r_path, s_path, job, kind = sys.argv[1:]
def load(path):
    with open(path, encoding="utf-8", errors="strict") as f:
        return json.load(f)
try:
    r, s = load(r_path), load(s_path)
except (UnicodeDecodeError, ValueError) as e:
    sys.exit(f"{kind}: {e}")
errors = {"result.json": r["error"]} | {"/status": j["error"] for j in s["jobs"] if j["id"] == job}
if len(errors) != 2:
    sys.exit(f"{kind}: job {job} is not in /status")
for where, e in errors.items():
    want = "q\\xFF\\xFE" if kind == "bad" else "\u00e9" * 20
    if want not in e:
        sys.exit(f"{kind}: the {where} error does not name the signal: {e!r}")
PY
done
alive synthd1 || fail "synthd1 died"
stop_all
log "PASS"
