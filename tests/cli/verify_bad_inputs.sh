#!/bin/bash
# `zkpipe verify` on special files where a key, public or proof file belongs (/dev/zero, a FIFO with no
# writer, a directory, a symlink to a device): exit 2 at once with one line naming the file, never an
# endless read or a wait.
set -u
root=${ZKPIPE_SOURCE_ROOT:?}
zkpipe=${ZKPIPE_BUILD_ROOT:?}/cli/zkpipe
d=$root/tests/data/bn128/mulchain
vk=$d/vk.json pub=$d/public-1.json proof=$d/proof-1.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkfifo "$tmp/fifo"
ln -s /dev/zero "$tmp/zero-link"
fail=0
"$zkpipe" verify "$vk" "$pub" "$proof" >/dev/null || { echo "FAIL: the fixture proof does not verify"; fail=1; }
for bad in /dev/zero "$tmp/fifo" "$tmp" "$tmp/zero-link"; do
    case $bad in
    /dev/zero | *zero-link) want="not a regular file (a character device)" ;;
    *fifo) want="not a regular file (a FIFO)" ;;
    *) want="not a regular file (a directory)" ;;
    esac
    for pos in 0 1 2; do
        args=("$vk" "$pub" "$proof")
        args[pos]=$bad
        timeout 10 "$zkpipe" verify "${args[@]}" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        what="$bad as argument $((pos + 1))"
        if [ $rc -eq 124 ]; then
            echo "FAIL $what: still running after 10 s"; fail=1
        elif [ $rc -ne 2 ]; then
            echo "FAIL $what: exit $rc: $(cat "$tmp/out" "$tmp/err")"; fail=1
        elif ! grep -qF -- "$bad: $want" "$tmp/err" || [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
            echo "FAIL $what: want one line '$bad: $want': $(cat "$tmp/err")"; fail=1
        else
            echo "ok   $what: $(cat "$tmp/err")"
        fi
    done
done
# a key whose delta2 is not below q: the file, the section and the point are named
cp "$d/mulchain.zkey" "$tmp/bad_d.zkey"
python3 -c 'import sys; f=open(sys.argv[1],"r+b"); f.seek(572); f.write(b"\xff"*32)' "$tmp/bad_d.zkey"
"$zkpipe" verify "$tmp/bad_d.zkey" "$pub" "$proof" >/dev/null 2>"$tmp/err"
rc=$?
if [ $rc -ne 2 ] || ! grep -qF "$tmp/bad_d.zkey: section 2 (groth16 header): point delta2: coordinate not below q" "$tmp/err"; then
    echo "FAIL zkey with delta2 >= q: exit $rc: $(cat "$tmp/err")"; fail=1
else
    echo "ok   zkey with delta2 >= q: $(cat "$tmp/err")"
fi
exit $fail
