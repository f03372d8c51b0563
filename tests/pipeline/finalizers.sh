#!/bin/bash
# Several finalizerd on one segment ([finalizer] instances, issue 26): they share the PROVED slabs,
# each partition is finalized once (one proof, verified), each job is ended once, and when one of
# them is killed holding a partition (its proof written under the temporary name, not renamed),
# another finalizes that partition and the job completes. gpud on the replay backend with a fast
# model, so that the finalizers are what the pipeline waits for.
. "$(dirname "$0")/lib.sh"
M=$DATA/bn128/mulchain
cat >"$T/model.ini" <<'INI'
[device]
name = fast
h2d = 10G
fixed = 0.5ms
[bn128]
msm_g1 = 2^10 0.1ms
msm_g2 = 2^10 0.2ms
ntt = 2^10 0.01ms
INI
write_config 6 0 "[finalizer]" "instances = 3"
use_replay "$T/model.ini" 2
"$ZKPIPE" replay prepare --config "$CONF" --circuit mulchain --threads 1 "$M/witness-1.wtns" "$M/witness-2.wtns" \
    >"$T/prep.out" 2>&1 || fail "replay prepare failed: $(cat "$T/prep.out")"
ws() { local i; for ((i = 0; i < $1; i++)); do echo "$M/witness-$((i % 2 + 1)).wtns"; done; }
finalized() { "$ZKPIPE" status --config "$CONF" | awk '/^counters/{for (i = 1; i < NF; i++) if ($i == "finalized") print $(i + 1)}'; }

log "three finalizerd share 2 jobs of 24 partitions"
start synthd1
start synthd2
start gpud
for i in 1 2 3; do start "finalizerd$i"; done
J1=$(submit mulchain NORMAL $(ws 24))
J2=$(submit mulchain NORMAL $(ws 24))
for j in "$J1" "$J2"; do wait_job "$j" 120 || fail "job $j failed: $(cat "$T/wait-$j.err")"; done
for j in "$J1" "$J2"; do verify_job "$j" mulchain 24; done
[ "$(finalized)" = 48 ] || fail "48 partitions, finalized $(finalized) times"
for j in "$J1" "$J2"; do
    n=$(cat "$T"/logs/finalizerd*.log | grep -c "Job $j done")
    [ "$n" = 1 ] || fail "job $j was ended $n times"
    python3 -c "import json, sys; r = json.load(open(sys.argv[1])); assert all(p['prove_count'] == 1 for p in r['partitions'])" \
        "$(result_json "$j")" || fail "job $j: a partition was proved twice"
done
shares=$("$ZKPIPE" metrics --config "$CONF" | grep '^zkpipe_stage_busy_ratio{stage="finalizerd"' | awk '$2 > 0' | wc -l)
log "finalizerd instances that worked: $shares of 3"
[ "$shares" -ge 2 ] || fail "only $shares finalizerd worked: $("$ZKPIPE" metrics --config "$CONF" | grep finalizerd)"

log "one finalizerd killed holding a partition: another finalizes it"
stop finalizerd1
stop finalizerd3
stop finalizerd2
start finalizerd2 ZKPIPE_TEST_PAUSE=finalize.before_rename:3
J3=$(submit mulchain NORMAL $(ws 8))
wait_for 60 "finalizerd2 to stop before its rename" is_stopped finalizerd2
start finalizerd1
start finalizerd3
kill9 finalizerd2
wait_job "$J3" 60 || fail "job $J3 failed after finalizerd2 was killed: $(cat "$T/wait-$J3.err")"
verify_job "$J3" mulchain 8
[ "$(finalized)" = 56 ] || fail "56 partitions, finalized $(finalized) times"
stop_all
log "PASS"
