#!/bin/bash
# A job owns its inputs (issue: "Nothing accepted is ever lost or proven wrong", points 1, 5, 8):
# a witness rewritten in place after submit is not seen by the job; truncating the job's copy
# does not touch the user's file; a symlinked witness is stored as a regular file; a dangling
# symlink, a FIFO, a directory and /dev/zero are refused by submit at once with one line naming
# the file; a witness larger than the circuit's is refused.
. "$(dirname "$0")/lib.sh"
M=$DATA/bn128/mulchain
write_config 4 0
# no stage runs yet: the job waits in incoming/ while its user's file changes
cp "$M/witness-1.wtns" "$T/mine.wtns"
J=$(submit mulchain NORMAL "$T/mine.wtns")
JD=$SPOOL/incoming/$J
[ -f "$JD/witness-0.wtns" ] && [ ! -L "$JD/witness-0.wtns" ] || fail "the job's witness is not a regular file of its own"
[ "$(stat -c %i "$JD/witness-0.wtns")" != "$(stat -c %i "$T/mine.wtns")" ] || fail "the job's witness is the user's inode"
cat "$M/witness-2.wtns" >"$T/mine.wtns" # rewritten in place, as circom's generate_witness.js does
# a symlinked witness: stored as the file it points to
ln -s "$M/witness-2.wtns" "$T/link.wtns"
J2=$(submit mulchain NORMAL "$T/link.wtns")
[ ! -L "$SPOOL/incoming/$J2/witness-0.wtns" ] || fail "a symlinked witness was stored as a symlink"
cmp -s "$SPOOL/incoming/$J2/witness-0.wtns" "$M/witness-2.wtns" || fail "the symlinked witness was not copied"
start synthd1
start gpud
start finalizerd
wait_job "$J" 120 || fail "job $J: $(cat $T/wait-$J.err)"
wait_job "$J2" 120 || fail "job $J2: $(cat $T/wait-$J2.err)"
verify_job "$J" mulchain 1
cmp -s <(tr -d ' \n' <"$SPOOL/done/$J/public-0.json") <(tr -d ' \n' <"$M/public-1.json") ||
    fail "the job proved the rewritten file, not the witness it was submitted with"
cmp -s <(tr -d ' \n' <"$SPOOL/done/$J2/public-0.json") <(tr -d ' \n' <"$M/public-2.json") || fail "symlinked witness"
# truncating the job's copy leaves the user's file alone
: >"$SPOOL/done/$J/witness-0.wtns"
cmp -s "$T/mine.wtns" "$M/witness-2.wtns" || fail "truncating the spool's copy changed the user's file"
refused() { # WHAT FILE PATTERN: submit refuses it within 5 s, exit 1, one line naming FILE
    local rc=0
    timeout 5 "$ZKPIPE" submit --config "$CONF" --circuit mulchain "$2" >"$T/sub.out" 2>"$T/sub.err" || rc=$?
    [ $rc = 1 ] || fail "$1: submit exit $rc (124 = hung): $(cat $T/sub.err)"
    [ "$(wc -l <"$T/sub.err")" = 1 ] || fail "$1: not one line: $(cat $T/sub.err)"
    grep -q -- "$2" "$T/sub.err" && grep -q "$3" "$T/sub.err" || fail "$1: message: $(cat $T/sub.err)"
}
ln -s "$T/nowhere.wtns" "$T/dangling.wtns"
refused "dangling symlink" "$T/dangling.wtns" "cannot open: No such file"
mkfifo "$T/fifo.wtns"
refused "FIFO" "$T/fifo.wtns" "not a regular file"
refused "directory" "$T" "not a regular file"
refused "/dev/zero" /dev/zero "not a regular file"
head -c 200000 /dev/zero >"$T/huge.wtns"
refused "oversized witness" "$T/huge.wtns" "more than the"
[ -z "$(ls -A "$SPOOL/tmp")" ] || fail "refused submissions left litter in tmp/: $(ls -A "$SPOOL/tmp")"
[ -z "$(ls -A "$SPOOL/incoming")" ] || fail "a refused submission reached incoming/"
stop_all
log "PASS"
