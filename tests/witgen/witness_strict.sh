#!/bin/sh
# input.json as strictly as snarkjs reads it (JSON.parse; issue 25, point 12): zkpipe witness
# refuses comments, single quotes, control characters in strings and trailing data (in the same
# read or after a 64 KiB read boundary), and integers beyond 2^53 written as JSON numbers (docs/
# witgen.md), each with one line and exit 1; 2^53 itself and trailing white space are taken.
set -u
zkpipe=${ZKPIPE_BUILD_ROOT:?}/cli/zkpipe
data=${ZKPIPE_SOURCE_ROOT:?}/tests/data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
cache=$tmp/cache
guard=$data/witgen/guard.wasm
expect() { # NAME WANT_STATUS WANT_TEXT INPUT
    rm -f "$tmp/out.wtns"
    timeout 60 "$zkpipe" witness --cache "$cache" "$guard" "$4" "$tmp/out.wtns" 2>"$tmp/err" >/dev/null
    st=$?
    if [ "$2" -eq 0 ]; then
        ok=$([ $st -eq 0 ] && [ ! -s "$tmp/err" ] && [ -s "$tmp/out.wtns" ] && echo yes)
    else
        ok=$([ $st -eq "$2" ] && grep -q -- "$3" "$tmp/err" && [ "$(wc -l <"$tmp/err")" -eq 1 ] && [ ! -e "$tmp/out.wtns" ] && echo yes)
    fi
    if [ -z "$ok" ]; then
        echo "FAIL $1: status $st, wanted $2 and '$3'; got: $(cat "$tmp/err")"; fail=$((fail + 1))
    else
        echo "ok   $1: $(cat "$tmp/err")"
    fi
}
j() { printf '%s\n' "$2" >"$tmp/$1.json"; echo "$tmp/$1.json"; }
m='"m": [[1, 2, 3], [4, 5, 6]]'
expect "a comment" 1 "comment.json: not valid JSON" "$(j comment "{\"x\": 1, /* seven */ $m}")"
expect "a line comment" 1 "linecomment.json: not valid JSON" "$(j linecomment "{\"x\": 1, // seven
$m}")"
expect "single quotes" 1 "single.json: not valid JSON: a single-quoted string" "$(j single "{'x': 1, $m}")"
expect "a trailing comma" 1 "comma.json: not valid JSON" "$(j comma "{\"x\": 1, $m,}")"
expect "trailing data" 1 "trailing.json: not valid JSON" "$(j trailing "{\"x\": 1, $m} {\"x\": 4}")"
python3 -c "
import sys
head = '{\"x\": 1, ' + '\"m\": [[1, 2, 3], [4, 5, 6]]'
body = head + ' ' * (65536 - len(head) - 1) + '}'
assert len(body) == 65536
open(sys.argv[1], 'w').write(body + ' {\"x\": 4}\n')
" "$tmp/late.json"
expect "trailing data after a read boundary" 1 "late.json: not valid JSON: data after the top-level value" "$tmp/late.json"
expect "a control character in a string" 1 "tab.json: not valid JSON: a control character in a string" "$(j tab "{\"x\": \"1	\", $m}")"
expect "2^53 + 1" 1 "big.json: signal m: a JSON number too large to be exact" "$(j big '{"x": 1, "m": [[9007199254740993, 2, 3], [4, 5, 6]]}')"
expect "-(2^53 + 1)" 1 "neg.json: signal m: a JSON number too large to be exact" "$(j neg '{"x": 1, "m": [[-9007199254740993, 2, 3], [4, 5, 6]]}')"
expect "beyond 2^64" 1 "huge.json: signal m: a JSON number too large to be exact" "$(j huge '{"x": 1, "m": [[99999999999999999999, 2, 3], [4, 5, 6]]}')"
expect "2^53 + 1 with a fraction" 1 "frac.json: signal m: a JSON number too large to be exact" "$(j frac '{"x": 1, "m": [[9007199254740993.0, 2, 3], [4, 5, 6]]}')"
expect "2^53" 0 "" "$(j exact '{"x": 1, "m": [[9007199254740992, 2, 3], [4, 5, 6]]}')"
expect "trailing white space" 0 "" "$(j space "{\"x\": 1, $m}
  	 ")"
[ $fail -eq 0 ] && echo PASS || { echo "$fail failed"; exit 1; }
