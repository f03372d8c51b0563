#!/bin/bash
# A large circuit through the pipeline (issue 19): the chain circuit of bench/scale/gen-circuit.py
# at 2^LOG (made by `bench/scale/run --logs LOG` first, in DATA), slabs sized from it (slab_size =
# auto), 2 slabs, 2 synthd, gpud (CPU backend, all CPUs), finalizerd; one job of 2 partitions (the
# witness twice). Prints each stage's memory line at start, its RSS when the key is loaded, after
# partition 1 and after partition 2 (gpud and finalizerd must stay flat), each stage's peak
# (VmHWM), the time per stage and partition from the logs' duration fields, and checks both proofs
# with zkpipe verify. HUGEPAGES=yes runs it with [pipeline] hugepages = yes.
#   bench/scale/pipeline.sh [LOG=22] [DATA=bench/data/scale]
TEST_NAME=bench-scale-pipeline
. "$(dirname "$0")/../../tests/pipeline/lib.sh"
LOG2=${1:-22}
D=${2:-$ROOT/bench/data/scale}
HP=${HUGEPAGES:-no}
Z=$D/c$LOG2.zkey W=$D/c$LOG2.wtns VK=$D/c$LOG2.vk.json
[ -s "$Z" ] && [ -s "$W" ] && [ -s "$VK" ] || { echo "no $Z: run bench/scale/run --logs $LOG2 --data $D first"; exit 1; }
rss() { awk '/^VmRSS/{print int($2 / 1024)}' "/proc/${PIDS[$1]}/status"; }
hwm() { awk '/^VmHWM/{print int($2 / 1024)}' "/proc/${PIDS[$1]}/status"; }
finalized() { "$ZKPIPE" status --config "$CONF" | awk '/^counters/{for (i = 1; i < NF; i++) if ($i == "finalized") print $(i + 1)}'; }
cat >"$CONF" <<INI
[pipeline]
name = $PIPE_NAME
spool = $SPOOL
slabs = 2
hugepages = $HP
jobs = 32
events = 65536
[synth]
threads = 1
[gpu]
backend = cpu
threads = 0
[finalizer]
verify = yes
[circuit c$LOG2]
zkey = $Z
INI
echo "bench/scale/pipeline.sh 2^$LOG2 hugepages=$HP  $(date -u '+%F %T UTC'); $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
t0=$(date +%s.%N)
for d in synthd1 synthd2 gpud finalizerd; do start $d; done
wait_for 3600 "gpud to load the key" grep -q "Memory after loading the keys" "$T/logs/gpud.log"
wait_for 3600 "finalizerd to load the key" grep -q "Memory after loading the keys" "$T/logs/finalizerd.log"
tload=$(echo "$(date +%s.%N) - $t0" | bc)
declare -A R0 R1 R2
for d in synthd1 synthd2 gpud finalizerd; do R0[$d]=$(rss $d); done
J=$(submit c$LOG2 NORMAL "$W" "$W")
t1=$(date +%s.%N)
wait_for 7200 "partition 1" bash -c "[ \"\$(\"$ZKPIPE\" status --config \"$CONF\" | awk '/^counters/{for (i = 1; i < NF; i++) if (\$i == \"finalized\") print \$(i + 1)}')\" -ge 1 ]"
for d in synthd1 synthd2 gpud finalizerd; do R1[$d]=$(rss $d); done
wait_job "$J" 7200 || fail "job failed: $(cat "$T/wait-$J.err")"
t2=$(date +%s.%N)
for d in synthd1 synthd2 gpud finalizerd; do R2[$d]=$(rss $d); done
ok=0
for k in 0 1; do
    "$ZKPIPE" verify "$VK" "$SPOOL/done/$J/public-$k.json" "$SPOOL/done/$J/proof-$k.json" >/dev/null && ok=$((ok + 1))
done
echo "keys loaded in $tload s; job of 2 partitions in $(echo "$t2 - $t1" | bc) s; proofs verified by zkpipe verify: $ok of 2"
echo "memory lines at start:"
for d in synthd1 synthd2 gpud finalizerd; do grep -h "Memory \|Huge pages\|Loaded the key" "$T/logs/$d.log" | sed "s/^/  $d: /" | head -4; done
echo "| stage | RSS keys loaded | after partition 1 | after partition 2 | peak (VmHWM) |"
echo "|---|---|---|---|---|"
for d in synthd1 synthd2 gpud finalizerd; do
    echo "| $d | ${R0[$d]} MiB | ${R1[$d]} MiB | ${R2[$d]} MiB | $(hwm $d) MiB |"
done
echo "time per stage and partition (ms, from the logs' duration fields):"
for f in READ_NS CHECK_NS EVAL_NS PROVE_NS NTT_NS MSM_NS RANDOMIZE_NS VERIFY_NS WRITE_NS; do
    v=$(cat "$T"/logs/*.log | grep -o "ZKPIPE_$f=[0-9]*" | awk -F= '{printf "%s%.0f", n++ ? ", " : "", $2 / 1e6}')
    [ -n "$v" ] && echo "  $f: $v"
done
stop_all
