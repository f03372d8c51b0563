#!/bin/bash
# zkpipe top under tmux (a real terminal): it shows the slabs and the job's progress while a batch
# proves, highlights a stage that stopped heart-beating (gpud stopped with SIGSTOP), quits on `q`
# with status 0, and exits by itself when its terminal is closed (tmux kill-session: SIGHUP).
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "SKIP: tmux not installed"; exit 77; }
TMUX_SOCK=zkpipe-top-$$
tm() { tmux -L "$TMUX_SOCK" "$@"; }
trap 'tm kill-server 2>/dev/null; cleanup' EXIT
write_config 4 0
start synthd1
# gpud stops itself (SIGSTOP) after its first partition: the job stays at 1/4 while top is read,
# however slow this machine, and the stopped gpud is the stage that stops heart-beating below
start gpud ZKPIPE_TEST_PAUSE=gpu.handed_on
start finalizerd
P=$DATA/bn128/poseidon
J=$(submit poseidon NORMAL $P/witness-1.wtns $P/witness-2.wtns $P/witness-3.wtns $P/witness-4.wtns)
screen() { tm capture-pane -p -t top; }
shows() { screen | grep -q -- "$1"; }
tm new-session -d -s top -x 160 -y 50 "$ZKPIPE top --config $CONF --interval 0.2; echo \"rc=\$?\" >$T/top.rc; sleep 30"
wait_for 20 "top to show the slabs" shows "^slabs (4): FREE"
wait_for 60 "top to show the job in progress" shows "^$J .* 1/4"
screen >"$T/screen1.txt"
grep -q "^gpud  *0 " "$T/screen1.txt" || fail "top shows no gpud row: $(cat "$T/screen1.txt")"
# a stage that stops heart-beating is highlighted
grep -q '^State:.*stopped' "/proc/${PIDS[gpud]}/status" || fail "gpud did not stop itself after its first partition"
wait_for 20 "top to flag the stopped gpud" shows "^gpud .*STOPPED HEART-BEATING"
kill -CONT "${PIDS[gpud]}"
wait_for 20 "the flag to go" sh -c "! tmux -L $TMUX_SOCK capture-pane -p -t top | grep -q 'STOPPED HEART-BEATING'"
wait_job "$J" 120 || fail "job $J: wait exit $?"
tm send-keys -t top q
wait_for 30 "top to quit on q" test -s "$T/top.rc"
[ "$(cat "$T/top.rc")" = rc=0 ] || fail "top exited with $(cat "$T/top.rc") on q"
# the terminal restored: the alternate screen is left, the shell's line is back
shows "^rc=0" || true
tm kill-session -t top
# a closed terminal: top (the pane's own process) ends by itself
tm new-session -d -s top2 -x 120 -y 40 "exec $ZKPIPE top --config $CONF --interval 0.5"
wait_for 30 "the second top to draw" sh -c "tmux -L $TMUX_SOCK capture-pane -p -t top2 | grep -q '^slabs'"
TOP_PID=$(tm display-message -p -t top2 '#{pane_pid}')
tm kill-session -t top2
wait_for 30 "top to exit after its terminal closed" sh -c "! kill -0 $TOP_PID 2>/dev/null"
for n in synthd1 gpud finalizerd; do stop "$n" || fail "$n did not exit cleanly"; done
log "PASS: top showed the slabs and $J's progress, flagged a stopped gpud, quit on q, ended with its terminal"
