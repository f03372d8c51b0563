#!/bin/bash
# Bad input at scale for `zkpipe prove` (issue 19), with keys made in a moment as sparse files
# (tests/cli/large_zkey.py): a key whose domain (2^28) needs more memory than the machine has is
# refused at once with one line naming the file and the memory, before anything large is allocated
# or read; a key file far larger than the memory (a 64 GiB hole beside the mulchain key) proves
# from its mapping, the hole never read and never resident, and the proof verifies.
set -u
root=${ZKPIPE_SOURCE_ROOT:?}
zkpipe=${ZKPIPE_BUILD_ROOT:?}/cli/zkpipe
m=$root/tests/data/bn128/mulchain
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
gen=$root/tests/cli/large_zkey.py

python3 "$gen" domain 28 "$m/mulchain.zkey" "$tmp/d28.zkey" "$tmp/d28.wtns" || exit 1
start=$SECONDS
rc=0
timeout 60 "$zkpipe" prove "$tmp/d28.zkey" "$tmp/d28.wtns" "$tmp/p.json" "$tmp/pub.json" 2>"$tmp/err" || rc=$?
if [ $rc != 1 ]; then
    echo "FAIL domain 2^28: exit $rc: $(cat "$tmp/err")"; fail=1
elif [ "$(wc -l <"$tmp/err")" != 1 ] || ! grep -q "d28.zkey: proving domain 2^28 (2 wires) needs about [0-9.]* GiB of memory, only [0-9.]* GiB is available (MemAvailable)" "$tmp/err"; then
    echo "FAIL domain 2^28: not the one line naming the key and the memory: $(cat "$tmp/err")"; fail=1
elif [ -e "$tmp/p.json" ] || [ -e "$tmp/pub.json" ]; then
    echo "FAIL domain 2^28: an output was written"; fail=1
elif [ $((SECONDS - start)) -gt 20 ]; then
    echo "FAIL domain 2^28: the refusal took $((SECONDS - start)) s"; fail=1
else
    echo "ok   domain 2^28 refused: $(cat "$tmp/err")"
fi

# 64 GiB, or twice the machine's memory where that is more
mem=$(awk '/^MemTotal:/ {printf "%d", $2 * 1024}' /proc/meminfo)
pad=$((64 << 30))
[ $((2 * mem)) -gt $pad ] && pad=$((2 * mem))
python3 "$gen" pad $pad "$m/mulchain.zkey" "$tmp/padded.zkey" || exit 1
rss=$(python3 - "$zkpipe" "$tmp/padded.zkey" "$m/witness-1.wtns" "$tmp/p.json" "$tmp/pub.json" 2>"$tmp/err" <<'PY'
import resource, subprocess, sys
r = subprocess.run([sys.argv[1], "prove"] + sys.argv[2:], stderr=subprocess.PIPE, text=True)
sys.stderr.write(r.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if r.returncode == 0 else -1)
PY
)
if [ "$rss" = -1 ] || [ -z "$rss" ]; then
    echo "FAIL a key file of $((pad >> 30)) GiB: prove failed: $(cat "$tmp/err")"; fail=1
elif [ "$rss" -gt $((128 * 1024)) ]; then
    echo "FAIL a key file of $((pad >> 30)) GiB: peak RSS $rss KiB (the file was read, not mapped)"; fail=1
elif ! "$zkpipe" verify "$m/vk.json" "$tmp/pub.json" "$tmp/p.json" >/dev/null; then
    echo "FAIL a key file of $((pad >> 30)) GiB: the proof does not verify"; fail=1
else
    echo "ok   a key file of $((pad >> 30)) GiB proves from its mapping: peak RSS $rss KiB, the proof verifies"
fi
exit $fail
