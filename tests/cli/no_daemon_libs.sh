#!/bin/bash
# The one-shot CLI (prove, verify, witness, keygen, submit, wait, status, ...) is no daemon: it
# links neither libsystemd (the journal, sd_notify) nor liburing (the stages' reads), which belong to
# the daemon runtime of common/ (issue 20). A dependency that brings either back fails here, by the
# NEEDED entries of build/cli/zkpipe; the daemons are checked to have them, so that the check
# cannot pass for want of reading the file. Nor does it link libcurl or libpq: the --url and --dsn
# commands load them on first use (cli/curl_lazy.c, fleet/pq_lazy.c), so a one-shot start maps
# none of their dozens of libraries.
set -u
build=${ZKPIPE_BUILD_ROOT:?}
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
fail=0
cli=$(needed "$build/cli/zkpipe") || { echo "FAIL: cannot read $build/cli/zkpipe"; exit 1; }
for lib in libsystemd liburing libcurl libpq; do
    if echo "$cli" | grep -q "^$lib\.so"; then
        echo "FAIL: cli/zkpipe links $lib: $(echo "$cli" | grep "^$lib\.so")"
        fail=1
    fi
done
# the daemons do link both: the check reads the real NEEDED list
synthd=$(needed "$build/synthd/zkpipe-synthd")
for lib in libsystemd liburing; do
    echo "$synthd" | grep -q "^$lib\.so" || { echo "FAIL: zkpipe-synthd does not link $lib: is readelf reading the files?"; fail=1; }
done
[ $fail = 0 ] && echo "PASS: cli/zkpipe links $(echo $cli | tr ' ' ','); neither libsystemd, liburing, libcurl nor libpq"
exit $fail
