#!/bin/bash
# The spool trusts nothing (issue "Nothing accepted is ever lost or proven wrong", points 3, 4, 6,
# 10): a job directory that arrives with a forged proof, an empty proof without a public file, or
# planted temporary symlinks gets proofs of its own witness and writes nothing through a link; a
# forged proof found in active/ after a restart is proved again; a FIFO witness fails its
# partition within seconds while another job completes; a file, a symlink and a duplicate id in
# incoming/ go to failed/ once with a reason; abandoned tmp/ folders are removed; total_ms counts
# from submission; result.json names no proof for a partition that failed.
. "$(dirname "$0")/lib.sh"
M=$DATA/bn128/mulchain
P=$DATA/bn128/poseidon
write_config 4 0
handmade() { # ID WITNESS...: a job directory dropped straight into incoming/ (prints nothing)
    local id=$1 k=0
    shift
    mkdir -p "$SPOOL/tmp/$id"
    for w in "$@"; do cp "$w" "$SPOOL/tmp/$id/witness-$k.wtns"; k=$((k + 1)); done
    printf '[job]\nid = %s\ncircuit = mulchain\npartitions = %d\nsubmitted_ns = %s\n' "$id" $k \
        "${SUBMITTED_NS:-$(date +%s%N)}" >"$SPOOL/tmp/$id/job.ini"
}
mkdir -p "$SPOOL"/{tmp,incoming,active,done,failed}
echo "precious" >"$T/victim"
# (3) a forged proof: a valid proof of another witness, with that witness's public file
F=20200101T000000.000001-f0f0f0
handmade $F "$M/witness-1.wtns"
cp "$M/proof-2.json" "$SPOOL/tmp/$F/proof-0.json"
cp "$M/public-2.json" "$SPOOL/tmp/$F/public-0.json"
# (3) an empty proof file and no public file
E=20200101T000000.000002-e0e0e0
handmade $E "$M/witness-2.wtns"
: >"$SPOOL/tmp/$E/proof-0.json"
# (4) planted temporaries: the names the writers used to take (pids up to the first daemons') and a
# result.json one, all symlinks to a file outside the spool
L=20200101T000000.000003-abcdef
handmade $L "$M/witness-1.wtns"
for pid in $(seq $$ $(($$ + 60))); do
    ln -s "$T/victim" "$SPOOL/tmp/$L/.proof-0.json.tmp.$pid"
    ln -s "$T/victim" "$SPOOL/tmp/$L/.public-0.json.tmp.$pid"
    ln -s "$T/victim" "$SPOOL/tmp/$L/result.json.tmp.$pid"
done
# (6) a FIFO witness
Q=20200101T000000.000004-0f1f0f
handmade $Q "$M/witness-1.wtns"
rm "$SPOOL/tmp/$Q/witness-0.wtns"
mkfifo "$SPOOL/tmp/$Q/witness-0.wtns"
# (10) total_ms counts from submission: submitted 30 s ago
SUBMITTED_NS=$(($(date +%s%N) - 30000000000)) handmade 20200101T000000.000005-0a0a0a "$M/witness-2.wtns"
OLD=20200101T000000.000005-0a0a0a
# (10) a regular file, a symlink to a directory outside the spool
echo junk >"$SPOOL/incoming/not-a-dir"
mkdir "$T/outside"
ln -s "$T/outside" "$SPOOL/incoming/20200101T000000.000006-511111"
# (10) an abandoned submission (no live submitter holds its lock), old enough to be collected
mkdir "$SPOOL/tmp/20190101T000000.000000-dead00"
touch -d '10 minutes ago' "$SPOOL/tmp/20190101T000000.000000-dead00"
for id in $F $E $L $Q $OLD; do mv "$SPOOL/tmp/$id" "$SPOOL/incoming/$id"; done
start synthd1
start gpud
start finalizerd
GOOD=$(submit mulchain NORMAL "$M/witness-2.wtns")
for id in $F $E $L $OLD "$GOOD"; do wait_job "$id" 120 || fail "job $id: $(cat "$T/wait-$id.err")"; done
cmp -s <(tr -d ' \n' <"$SPOOL/done/$F/public-0.json") <(tr -d ' \n' <"$M/public-1.json") ||
    fail "the forged public file was delivered"
"$ZKPIPE" verify "$(vk_of mulchain)" "$M/public-1.json" "$SPOOL/done/$F/proof-0.json" >/dev/null ||
    fail "the delivered proof is not a proof of the job's witness"
cmp -s "$SPOOL/done/$F/proof-0.json" "$M/proof-2.json" && fail "the forged proof was delivered"
[ -s "$SPOOL/done/$E/proof-0.json" ] && [ -f "$SPOOL/done/$E/public-0.json" ] || fail "empty proof delivered as done"
for id in $F $E $L; do verify_job "$id" mulchain 1; done
[ "$(cat "$T/victim")" = precious ] || fail "a planted symlink was written through: $(head -c 80 "$T/victim")"
[ -z "$(ls -A "$T/outside")" ] || fail "outputs were written outside the spool: $(ls "$T/outside")"
[ -z "$(find "$SPOOL/done" -type l)" ] || fail "symlinks carried into done/: $(find "$SPOOL/done" -type l)"
# the FIFO fails its partition within seconds, naming the file
rc=0
wait_job $Q 20 || rc=$?
[ $rc = 1 ] || fail "FIFO job: wait exit $rc"
grep -q "witness-0.wtns: not a regular file (a FIFO)" "$T/wait-$Q.err" || fail "FIFO reason: $(cat "$T/wait-$Q.err")"
# result.json names no proof for a partition that failed
BAD=$(submit mulchain NORMAL "$M/witness-1.wtns" "$DATA/bad/wtns_unsatisfied.wtns")
rc=0
wait_job "$BAD" 60 || rc=$?
[ $rc = 1 ] || fail "job with an unsatisfied witness: wait exit $rc"
json_get "$SPOOL/failed/$BAD/result.json" '[p["proof"] for p in r["partitions"] if p["status"] != "done"]' |
    grep -q "^\[None" || fail "result.json names a proof for a failed partition: $(cat "$SPOOL/failed/$BAD/result.json")"
# total_ms from submission
json_get "$(result_json $OLD)" 'r["total_ms"] >= 30000' | grep -q True || fail "total_ms does not count from submission"
# the file and the symlink: in failed/ once, with a reason, never followed
incoming_empty() { [ -z "$(ls -A "$SPOOL/incoming")" ]; }
wait_for 10 "incoming/ to be empty" incoming_empty
grep -l "is not a directory" "$SPOOL"/failed/*/result.json >/dev/null || fail "no failed/ entry for the regular file"
grep -l "is a symbolic link" "$SPOOL"/failed/*/result.json >/dev/null || fail "no failed/ entry for the symlink"
[ -d "$T/outside" ] && [ -z "$(ls -A "$T/outside")" ] || fail "the symlinked directory was touched"
sleep 1.5
n=$(grep -c "not a job directory" "$T/logs/synthd1.log")
[ "$n" = 2 ] || fail "expected one log line each for the file and the symlink, got $n"
# a duplicate of a done job's id is refused at intake, once
cp -r "$SPOOL/done/$F" "$T/dup" && rm -f "$T/dup"/{proof,public}-* "$T/dup/result.json"
mv "$T/dup" "$SPOOL/incoming/$F"
wait_for 10 "the duplicate id to be refused" incoming_empty
grep -l "job id $F already exists in done/" "$SPOOL"/failed/*/result.json >/dev/null || fail "duplicate id not refused"
[ "$(ls "$SPOOL/done/$F" | grep -c '^proof-')" = 1 ] || fail "the done job was touched"
# the abandoned submission is gone
[ ! -e "$SPOOL/tmp/20190101T000000.000000-dead00" ] || fail "abandoned tmp/ folder not removed"
# (3) after a restart: a forged proof in active/ is not reused
stop finalizerd
R=$(submit mulchain NORMAL "$M/witness-1.wtns" "$M/witness-2.wtns")
wait_for 30 "both partitions of $R proved" sh -c "\"$ZKPIPE\" status --config \"$CONF\" | grep -q 'PROVED 2'"
stop_all
cp "$M/proof-2.json" "$SPOOL/active/$R/proof-0.json"
cp "$M/public-2.json" "$SPOOL/active/$R/public-0.json"
rm -f "$SEGMENT" # a full restart: the segment is gone, the spool is the record
start synthd1
start gpud
start finalizerd
wait_job "$R" 120 || fail "job $R after the restart: $(cat "$T/wait-$R.err")"
verify_job "$R" mulchain 2
cmp -s <(tr -d ' \n' <"$SPOOL/done/$R/public-0.json") <(tr -d ' \n' <"$M/public-1.json") ||
    fail "a forged proof in active/ was reused after a restart"
grep -q "proof-0.json does not verify\|its public signals are not the witness" "$T/logs/synthd1.log" ||
    fail "no log line for the rejected proof"
stop_all
log "PASS"
