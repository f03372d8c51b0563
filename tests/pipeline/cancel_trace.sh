#!/bin/bash
# zkpipe cancel (a running job's partitions are dropped at their next step, its slabs return to FREE,
# wait exits 1; a job not yet started is moved to failed/) and zkpipe trace (valid Chrome trace JSON,
# one track per process, one slice per step of each partition).
. "$(dirname "$0")/lib.sh"
M=$DATA/bn128/mulchain
write_config 4 0
start synthd1
start gpud ZKPIPE_TEST_DELAY=gpu.mid_prove:300
start finalizerd
J=$(submit mulchain NORMAL $M/witness-1.wtns $M/witness-2.wtns $M/witness-1.wtns $M/witness-2.wtns $M/witness-1.wtns \
    $M/witness-2.wtns $M/witness-1.wtns $M/witness-2.wtns)
one_done() { [ "$(job_field "$J" done)" -ge 1 ] 2>/dev/null; }
wait_for 60 "one partition" one_done
"$ZKPIPE" cancel --config "$CONF" "$J" >/dev/null || fail "cancel failed"
rc=0
wait_job "$J" 60 || rc=$?
[ $rc = 1 ] || fail "wait after cancel: exit $rc, expected 1"
grep -q cancelled "$T/wait-$J.err" || fail "wait does not say cancelled: $(cat $T/wait-$J.err)"
[ "$(json_get "$SPOOL/failed/$J/result.json" 'r["status"]')" = cancelled ] || fail "result.json status"
wait_for 10 "every slab FREE after cancel" all_slabs_free
ndone=$(json_get "$SPOOL/failed/$J/result.json" 'sum(1 for p in r["partitions"] if p["status"] == "done")')
[ "$ndone" -lt 8 ] || fail "nothing was dropped"
"$ZKPIPE" cancel --config "$CONF" "$J" >/dev/null 2>&1 && fail "cancel of a finished job succeeded"
"$ZKPIPE" wait --config "$CONF" "not/a-job" >/dev/null 2>&1; [ $? = 2 ] || fail "wait with a bad id: exit code not 2"

# a job cancelled before any synthd saw it
stop synthd1
J2=$(submit mulchain NORMAL $M/witness-1.wtns)
"$ZKPIPE" cancel --config "$CONF" "$J2" >/dev/null || fail "cancel of a queued job failed"
[ -f "$SPOOL/failed/$J2/result.json" ] || fail "queued job not moved to failed/"
start synthd1

# trace of a normal job
J3=$(submit mulchain NORMAL $M/witness-1.wtns $M/witness-2.wtns)
wait_job "$J3" 60 || fail "job failed: $(cat $T/wait-$J3.err)"
"$ZKPIPE" trace --config "$CONF" --out "$T/trace.json" >/dev/null || fail "trace failed"
python3 - "$T/trace.json" "$J3" <<'PY' || fail "trace check failed"
import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
job = sys.argv[2][:31]
names = {}
for e in ev:
    if e.get("ph") == "X" and e["args"]["job"] == job:
        names.setdefault(e["name"], set()).add(e["args"]["partition"])
for step in ["synth.read", "synth.check", "synth.eval", "gpu.handoff", "gpu.prove", "gpu.ntt", "gpu.msm_a", "gpu.msm_h",
             "finalize.randomize", "finalize.verify", "finalize.write"]:
    assert names.get(step) == {0, 1}, (step, names.get(step))
procs = {e["pid"] for e in ev if e.get("ph") == "M"}
slices = {e["pid"] for e in ev if e.get("ph") == "X"}
assert slices <= procs and len(procs) >= 3, (procs, slices)
print("trace ok:", len(ev), "events,", len(procs), "process tracks")
PY

# The step table's sinks agree (issue 20, 3): each step's events in the ring (the trace) are as many
# as its histogram counts (zkpipe metrics; job.done as the job histograms); each partition's stage
# times in result.json are its steps' sums (synth: witness|read + check + eval; gpu: prove;
# finalize: randomize + verify + write); every step of a partition is a ZKPIPE_<STEP>_NS field,
# equal to the event's duration, in its stage's journal entry for that partition.
"$ZKPIPE" metrics --config "$CONF" >"$T/steps-metrics.txt" || fail "zkpipe metrics failed"
python3 - "$T/trace.json" "$T/steps-metrics.txt" "$SPOOL/done/$J3/result.json" "$J3" "$T"/logs/*.log <<'PY' ||
import json, re, sys
from collections import Counter
trace, metrics, result, job = sys.argv[1:5]
ev = [e for e in json.load(open(trace))["traceEvents"] if e.get("ph") == "X"]
hist, jobs = {}, 0
for line in open(metrics):
    m = re.match(r'zkpipe_step_duration_seconds_count\{stage="(\w+)",step="(\w+)"\} (\d+)$', line)
    if m: hist[(m[1], m[2])] = int(m[3])
    m = re.match(r'zkpipe_job_duration_seconds_count\{priority="\w+"\} (\d+)$', line)
    if m: jobs += int(m[1])
seen = Counter((e["cat"], e["name"].split(".", 1)[1]) for e in ev if e["name"] not in ("job.done", "reclaim"))
assert seen, "no step events"
for key in set(hist) | set(seen):
    assert hist.get(key) == seen.get(key, 0), f"step {key}: {seen.get(key, 0)} events, histogram count {hist.get(key)}"
assert jobs == sum(e["name"] == "job.done" for e in ev), f"{jobs} job latencies, job.done events differ"
# every step but the two of no partition is recorded with its partition (its pass)
apart = {"synth.wait_slab", "gpu.load_key", "job.done", "reclaim"}
for e in ev:
    assert e["name"] in apart or e["args"]["job"], f"{e['name']} recorded without its job: {e}"
mine = [e for e in ev if e["args"]["job"] == job[:31] and e["name"] != "job.done"]
fields = {"synth_ms": ("synth.witness", "synth.read", "synth.check", "synth.eval"), "gpu_ms": ("gpu.prove",),
          "finalize_ms": ("finalize.randomize", "finalize.verify", "finalize.write")}
logs = [l for f in sys.argv[5:] for l in open(f, errors="replace")]
for k, p in enumerate(json.load(open(result))["partitions"]):
    for field, names in fields.items():
        total = sum(e["dur"] for e in mine if e["args"]["partition"] == k and e["name"] in names) / 1e3
        assert abs(p[field] - total) < 0.001, f"partition {k}: {field} {p[field]}, its steps {total}"
    for e in (e for e in mine if e["args"]["partition"] == k):
        name = "ZKPIPE_%s_NS" % e["name"].split(".", 1)[1].upper()
        want = "%s=%d" % (name, round(e["dur"] * 1000))
        lines = [l for l in logs if f"[{e['pid']}]:" in l and f" job={job} partition={k} " in l and f" {name}=" in l]
        assert lines and all(want in l.split() for l in lines), f"partition {k}: {want} not in the journal: {lines}"
print("step sinks agree:", len(seen), "steps,", sum(seen.values()), "events")
PY
    fail "the step table's sinks disagree"
stop_all
log "PASS"
