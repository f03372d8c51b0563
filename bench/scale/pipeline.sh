#!/bin/bash
# A large circuit through the pipeline (issue 19): the chain circuit of bench/scale/gen-circuit.py
# at 2^LOG (made by `bench/scale/run --logs LOG` first, in DATA), slabs sized from it (slab_size =
# auto), 2 slabs, 2 synthd, gpud (CPU backend, all CPUs), finalizerd; one job of 2 partitions (the
# witness twice). Prints each stage's memory line at start, its RSS when the key is loaded, after
# partition 1 and after partition 2 (gpud and finalizerd must stay flat), each stage's peak
# (VmHWM), the time per stage and partition from the logs' duration fields, and checks both proofs
# with zkpipe verify. HUGEPAGES=yes runs it with [pipeline] hugepages = yes.
# With a NAME of bench/make-circuits.sh (pchain20, pchain22) instead of LOG, the job is of circuit
# inputs: that circuit's input.json and a second input (in[1] + 1), the witnesses computed by synthd
# with the circuit's wasm generator from an empty generator cache (the first partition waits for the
# compile, which synthd logs), both proofs checked with the circuit's vk.json.
#   bench/scale/pipeline.sh [LOG=22 | NAME] [DATA=bench/data/scale]
TEST_NAME=bench-scale-pipeline
. "$(dirname "$0")/../../tests/pipeline/lib.sh"
LOG2=${1:-22}
HP=${HUGEPAGES:-no}
if [[ $LOG2 =~ ^[0-9]+$ ]]; then
    D=${2:-$ROOT/bench/data/scale}
    C=c$LOG2 Z=$D/c$LOG2.zkey W=$D/c$LOG2.wtns VK=$D/c$LOG2.vk.json GEN=
    [ -s "$Z" ] && [ -s "$W" ] && [ -s "$VK" ] || { echo "no $Z: run bench/scale/run --logs $LOG2 --data $D first"; exit 1; }
else
    # a circuit of bench/make-circuits.sh: jobs of inputs, generator compiled from an empty cache
    C=$LOG2 D=${2:-$ROOT/bench/data/$LOG2}
    Z=$(ls "$D"/*.zkey 2>/dev/null | head -n 1)
    stem=$(basename "${Z:-none}" .zkey)
    VK=$D/vk.json GEN=$D/${stem}_js/$stem.wasm
    [ -s "$Z" ] && [ -s "$VK" ] && [ -s "$GEN" ] && [ -s "$D/input.json" ] ||
        { echo "no key, vk.json, wasm or input.json in $D: run bench/make-circuits.sh $LOG2 first"; exit 1; }
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["in"][1]=str(int(d["in"][1])+1); print(json.dumps(d))' \
        "$D/input.json" >"$T/input-2.json"
fi
rss() { awk '/^VmRSS/{print int($2 / 1024)}' "/proc/${PIDS[$1]}/status"; }
# own: private memory alone (RssAnon), without the shared slab data the stage touched (RssShmem)
own() { awk '/^RssAnon/{print int($2 / 1024)}' "/proc/${PIDS[$1]}/status"; }
hwm() { awk '/^VmHWM/{print int($2 / 1024)}' "/proc/${PIDS[$1]}/status"; }
finalized() { "$ZKPIPE" status --config "$CONF" | awk '/^counters/{for (i = 1; i < NF; i++) if ($i == "finalized") print $(i + 1)}'; }
cat >"$CONF" <<INI
[pipeline]
name = $PIPE_NAME
spool = $SPOOL
slabs = 2
hugepages = $HP
cache = $T/cache
jobs = 32
events = 65536
[synth]
threads = 1
[gpu]
backend = cpu
threads = 0
[finalizer]
verify = yes
[circuit $C]
zkey = $Z
${GEN:+wasm = $GEN}
INI
echo "bench/scale/pipeline.sh $C${GEN:+ (inputs, empty generator cache)} hugepages=$HP  $(date -u '+%F %T UTC'); $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
t0=$(date +%s.%N)
for d in synthd1 synthd2 gpud finalizerd; do start $d; done
wait_for 3600 "gpud to load the key" grep -q "Memory after loading the keys" "$T/logs/gpud.log"
wait_for 3600 "finalizerd to load the key" grep -q "Memory after loading the keys" "$T/logs/finalizerd.log"
tload=$(echo "$(date +%s.%N) - $t0" | bc)
declare -A R0 R1 R2 O0 O1 O2
for d in synthd1 synthd2 gpud finalizerd; do R0[$d]=$(rss $d) O0[$d]=$(own $d); done
if [ -n "$GEN" ]; then J=$(submit_inputs "$C" "$D/input.json" "$T/input-2.json"); else J=$(submit "$C" NORMAL "$W" "$W"); fi
t1=$(date +%s.%N)
wait_for 7200 "partition 1" bash -c "[ \"\$(\"$ZKPIPE\" status --config \"$CONF\" | awk '/^counters/{for (i = 1; i < NF; i++) if (\$i == \"finalized\") print \$(i + 1)}')\" -ge 1 ]"
for d in synthd1 synthd2 gpud finalizerd; do R1[$d]=$(rss $d) O1[$d]=$(own $d); done
wait_job "$J" 7200 || fail "job failed: $(cat "$T/wait-$J.err")"
t2=$(date +%s.%N)
for d in synthd1 synthd2 gpud finalizerd; do R2[$d]=$(rss $d) O2[$d]=$(own $d); done
ok=0
for k in 0 1; do
    "$ZKPIPE" verify "$VK" "$SPOOL/done/$J/public-$k.json" "$SPOOL/done/$J/proof-$k.json" >/dev/null && ok=$((ok + 1))
done
echo "keys loaded in $tload s; job of 2 partitions in $(echo "$t2 - $t1" | bc) s; proofs verified by zkpipe verify: $ok of 2"
echo "memory lines at start:"
for d in synthd1 synthd2 gpud finalizerd; do grep -h "Memory \|Huge pages\|Loaded the key" "$T/logs/$d.log" | sed "s/^/  $d: /" | head -4; done
[ -n "$GEN" ] && grep -h "witness generator of circuit" "$T"/logs/synthd*.log | sed 's/^/  generator: /' 
echo "RSS (VmRSS: own memory + the slab data and files it touched), own = private memory alone (RssAnon):"
echo "| stage | RSS (own) keys loaded | after partition 1 | after partition 2 | peak (VmHWM) |"
echo "|---|---|---|---|---|"
for d in synthd1 synthd2 gpud finalizerd; do
    echo "| $d | ${R0[$d]} (${O0[$d]}) MiB | ${R1[$d]} (${O1[$d]}) MiB | ${R2[$d]} (${O2[$d]}) MiB | $(hwm $d) MiB |"
done
echo "time per stage and partition (ms, from the logs' duration fields):"
# every step's journal field (shm.h's SHM_STEPS), in the order the logs first name them
for f in $(cat "$T"/logs/synthd*.log "$T"/logs/gpud.log "$T"/logs/finalizerd.log | grep -o "ZKPIPE_[A-Z0-9_]*_NS=" |
    sed 's/^ZKPIPE_//; s/=$//' | awk '!seen[$0]++'); do
    v=$(cat "$T"/logs/*.log | grep -o "ZKPIPE_$f=[0-9]*" | awk -F= '{printf "%s%.0f", n++ ? ", " : "", $2 / 1e6}')
    [ -n "$v" ] && echo "  $f: $v"
done
stop_all
