#!/bin/bash
# Finding 6 of issue 25: a FIFO (or any non-regular file) planted in SPOOL/fleet/ does not hang the
# feeder at start: one line names it, the feeder gets ready and feeds.
. "$(dirname "$0")/lib.sh"
pg_start
"$ZKPIPE" db init --dsn "$DSN" >/dev/null || fail "db init"
box_config A
mkdir -p "$T/A/spool/fleet"
mkfifo "$T/A/spool/fleet/20261201T000000.000000-f1f0f1"
G=$(db_submit mulchain NORMAL "$DATA/bn128/mulchain/witness-1.wtns")
box_start A
wait_for 60 "the job to end" all_final
db_verify "$G" mulchain
[ "$(grep -c "20261201T000000.000000-f1f0f1.*not a regular file" "$T/logs/A-feeder.log")" = 1 ] ||
    fail "no one line naming the FIFO: $(cat "$T/logs/A-feeder.log")"
log "PASS: the FIFO named once, the job proved"
