#!/bin/bash
# Test 3 (chaos): 30 SIGKILLs at random moments across all stages (2 synthd, gpud, finalizerd), each
# victim restarted at once, while jobs on both curves flow. Afterwards every job is done, every
# proof verifies, every slab is FREE and spool/active is empty. gpud keeps two partitions in flight
# (inflight = 2, as the CUDA backend does), so kills also land between a submit and its collect.
GPU_INFLIGHT=2
. "$(dirname "$0")/lib.sh"
write_config 4 0
P=$DATA/bn128/poseidon
M=$DATA/bn128/mulchain
B=$DATA/bls12381/mulchain
start synthd1
start synthd2
start gpud
start finalizerd
declare -A CIRC=()
JOBS=()
add_job() {
    local j
    case $(($1 % 3)) in
    0) j=$(submit poseidon NORMAL $P/witness-1.wtns $P/witness-2.wtns $P/witness-3.wtns $P/witness-4.wtns); CIRC[$j]=poseidon ;;
    1) j=$(submit mulchain HIGH $M/witness-1.wtns $M/witness-2.wtns $M/witness-1.wtns $M/witness-2.wtns); CIRC[$j]=mulchain ;;
    2) j=$(submit mulchain381 LOW $B/witness-1.wtns $B/witness-2.wtns $B/witness-1.wtns $B/witness-2.wtns); CIRC[$j]=mulchain381 ;;
    esac
    JOBS+=("$j")
}
add_job 0
add_job 1
RANDOM=${SEED:-$$}
victims=(synthd1 synthd2 gpud finalizerd)
declare -A KILLS=()
for i in $(seq 1 30); do
    [ $((i % 5)) = 0 ] && add_job $((i / 5 + 1))
    sleep "0.$((RANDOM % 4 + 1))"
    v=${victims[$((RANDOM % 4))]}
    kill9 "$v"
    KILLS[$v]=$((${KILLS[$v]:-0} + 1))
    start "$v"
done
log "30 kills: synthd1 ${KILLS[synthd1]:-0}, synthd2 ${KILLS[synthd2]:-0}, gpud ${KILLS[gpud]:-0}, finalizerd ${KILLS[finalizerd]:-0}; ${#JOBS[@]} jobs"
for j in "${JOBS[@]}"; do
    wait_job "$j" 240 || fail "job $j: $(cat $T/wait-$j.err)"
    verify_job "$j" "${CIRC[$j]}" 4
done
wait_for 10 "every slab FREE" all_slabs_free
[ -z "$(ls -A "$SPOOL/active")" ] || fail "spool/active not empty: $(ls -A "$SPOOL/active")"
"$ZKPIPE" status --config "$CONF" | grep -E '^(slabs|counters)'
stop_all
log "PASS: ${#JOBS[@]} jobs, $((${#JOBS[@]} * 4)) proofs verified"
