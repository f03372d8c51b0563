#!/bin/sh
# zkpipe-reconcile (run by zkpipe-reconcile.service at every `systemctl start zkpipe.target`): stops
# the stage instances that zkpipe.target no longer wants, so that lowering a count in the ini and
# running daemon-reload + start shrinks the running set the way raising it grows it. systemd never
# stops a unit only because a dependency went away.
set -eu
wants=" $(systemctl show -p Wants --value zkpipe.target) "
# A bad or missing ini makes zkpipe-generator generate nothing; never read that as "stop everything".
case "$wants" in
  *" zkpipe-synthd@"*) ;;
  *) echo "zkpipe.target wants no stage (see zkpipe-generator in the journal); stopping nothing"; exit 0 ;;
esac
systemctl list-units --plain --no-legend --state=active,activating,reloading \
    'zkpipe-synthd@*.service' 'zkpipe-gpud@*.service' 'zkpipe-finalizerd@*.service' |
while read -r unit _; do
  case "$wants" in
    *" $unit "*) ;;
    *) echo "Stopping $unit: zkpipe.target no longer wants it (/etc/zkpipe/zkpipe.ini)"
       systemctl stop --no-block "$unit" ;;
  esac
done
