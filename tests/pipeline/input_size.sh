#!/bin/bash
# An oversized input.json (issue 25, point 11): synthd refuses it by its size before reading or
# parsing it (a circuit of n input values takes at most 1 MiB + (256 + 12 x field words) bytes per
# value, docs/witgen.md), quickly and without growing: a 12 MB input for the 7 values of guard
# fails with the sizes in the reason, synthd's peak RSS stays small and it proves the next job; an
# input padded with 600 KB of white space is still taken.
. "$(dirname "$0")/lib.sh"
W=$DATA/witgen
"$ZKPIPE" keygen --insecure-dev "$W/guard.r1cs" "$T/guard.zkey" >/dev/null 2>&1 || fail "keygen guard"
write_witgen_config "[circuit guard]" \
    "zkey = $T/guard.zkey" \
    "wasm = $W/guard.wasm"
hwm_kb() { awk '/^VmHWM:/ {print $2}' "/proc/${PIDS[$1]}/status"; }
G=$T/g.json
echo '{"x": 7, "m": [[1, 2, 3], [4, 5, 6]]}' >"$G"
python3 -c "
import sys
open(sys.argv[1], 'w').write('{\"x\": 7, \"m\": [[1, 2, 3], [4, 5, 6]], \"pad\": [' + ','.join(['1'] * 6000000) + ']}\n')
open(sys.argv[2], 'w').write('{\"x\": 7, ' + ' ' * 600000 + '\"m\": [[1, 2, 3], [4, 5, 6]]}\n')
" "$T/big.json" "$T/padded.json"
start synthd1
start gpud
start finalizerd
J=$(submit_inputs guard "$G")
wait_job "$J" 60 || fail "the first guard job failed: $(cat "$T/wait-$J.err")"
before=$(hwm_kb synthd1)
t0=$SECONDS
J=$(submit_inputs guard "$T/big.json")
rc=0
wait_job "$J" 60 || rc=$?
[ $rc = 1 ] || fail "job $J with a 12 MB input: wait exit $rc, expected 1: $(cat "$T/wait-$J.err")"
grep -q "input-0.json: $(stat -c %s "$T/big.json") bytes, more than an input of this circuit can be (at most [0-9]*)" "$T/wait-$J.err" ||
    fail "job $J: not refused by its size: $(cat "$T/wait-$J.err")"
[ $((SECONDS - t0)) -le 10 ] || fail "refusing the 12 MB input took $((SECONDS - t0)) s"
after=$(hwm_kb synthd1)
log "synthd peak RSS: $before kB before the big input, $after kB after"
[ $((after - before)) -lt 20000 ] || fail "synthd's peak RSS grew from $before to $after kB on a refused input"
J=$(submit_inputs guard "$T/padded.json" "$G")
wait_job "$J" 60 || fail "a padded input within the limit failed: $(cat "$T/wait-$J.err")"
alive synthd1 || fail "synthd1 died"
stop_all
log "PASS"
