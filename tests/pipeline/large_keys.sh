#!/bin/bash
# Large circuits in the pipeline (issue 19), with keys made in a moment as sparse files
# (tests/cli/large_zkey.py): a circuit that needs larger slabs than slab_size is refused by zkpipe
# setup (and by every stage) with one line naming the ini, the circuit and both sizes; a key file
# whose parts a stage holds are larger than the memory available fails its circuit's jobs with one line naming the file and the
# memory, while the other circuits' jobs flow and no stage stops; with hugepages = yes every stage
# says what huge pages it got, and the slab data is in huge pages.
. "$(dirname "$0")/lib.sh"
M=$DATA/bn128/mulchain
GEN=$ROOT/tests/cli/large_zkey.py

# slab too small: a domain of 2^16 needs 4 KiB + 2 wires' witness page + 3 x 2 MiB = 8 MiB slabs
python3 "$GEN" domain 16 "$M/mulchain.zkey" "$T/d16.zkey" "$T/d16.wtns" || fail "making the 2^16 key"
write_config 2 0 "[circuit d16]" "zkey = $T/d16.zkey"
sed -i 's/^slabs = 2$/slabs = 2\nslab_size = 2M/' "$CONF"
rc=0
"$ZKPIPE" setup --config "$CONF" >"$T/setup.out" 2>&1 || rc=$?
[ $rc = 1 ] || fail "setup with slabs too small for d16: exit $rc: $(cat "$T/setup.out")"
[ "$(wc -l <"$T/setup.out")" = 1 ] && grep -q "zkpipe.ini:[0-9]*: \[circuit d16\] needs slabs of 8 MiB, slab_size is 2 MiB" "$T/setup.out" ||
    fail "setup with slabs too small: not one line naming the circuit and the sizes: $(cat "$T/setup.out")"
rc=0
"$GPUD" --config "$CONF" >"$T/gpud.out" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "needs slabs of 8 MiB, slab_size is 2 MiB" "$T/gpud.out" || fail "gpud with slabs too small: exit $rc: $(cat "$T/gpud.out")"
[ ! -e "$SEGMENT" ] || fail "a segment was created for a refused configuration"

# a key file larger than the memory available (a hole beside the mulchain key), huge pages on
mem=$(awk '/^MemTotal:/ {printf "%d", $2 * 1024}' /proc/meminfo)
pad=$((64 << 30))
[ $((2 * mem)) -gt $pad ] && pad=$((2 * mem))
python3 "$GEN" pad $pad "$M/mulchain.zkey" "$T/padded.zkey" || fail "making the padded key"
write_config 2 0 "[circuit padded]" "zkey = $T/padded.zkey"
sed -i 's/^slabs = 2$/slabs = 2\nhugepages = yes/' "$CONF"
start synthd1
start gpud
start finalizerd
BIG=$(submit padded NORMAL "$M/witness-1.wtns")
GOOD=$(submit mulchain NORMAL "$M/witness-1.wtns" "$M/witness-2.wtns")
wait_job "$GOOD" 120 || fail "the mulchain job failed: $(cat "$T/wait-$GOOD.err")"
verify_job "$GOOD" mulchain 2
rc=0
wait_job "$BIG" 120 || rc=$?
[ $rc = 1 ] || fail "the job of the oversized key: wait exit $rc, expected 1"
grep -q "padded.zkey: the parts of the file this stage holds are [0-9]* MiB, more than the [0-9]* MiB of memory available (MemAvailable)" "$T/wait-$BIG.err" ||
    fail "the oversized key's job: no line naming the file and the memory: $(cat "$T/wait-$BIG.err")"
for d in synthd1 gpud finalizerd; do alive $d || fail "$d stopped"; done
grep -q "Failed to preload circuit padded: .*padded.zkey: the parts of the file this stage holds are" "$T/logs/gpud.log" ||
    fail "gpud did not say why the padded key was not loaded"
# huge pages: every stage says what it got; on a kernel with MADV_COLLAPSE the slab data is huge
for d in synthd1 gpud finalizerd; do
    grep -q "Huge pages for the segment: " "$T/logs/$d.log" || fail "$d: no huge-pages line"
    grep -q "Memory [a-z ]*: circuit files held" "$T/logs/$d.log" || fail "$d: no memory line"
done
if grep -q "Huge pages for the segment: .*(the rest: Invalid argument)" "$T/logs/gpud.log"; then
    log "this kernel has no MADV_COLLAPSE: the segment stays in small pages"
else
    grep -q "Huge pages for the segment: tmpfs, collapsed into huge pages (MADV_COLLAPSE): \([0-9]*\) of \1 MiB" \
        "$T/logs/gpud.log" || fail "gpud: the slab data is not all in huge pages: $(grep 'Huge pages' "$T/logs/gpud.log")"
fi
stop_all
grep -q "Memory at stop: " "$T/logs/gpud.log" || fail "gpud: no memory line at stop"
log "large_keys: ok"
