#!/bin/sh
# zkpipe witness on every kind of bad input: one line on stderr naming the file and what is wrong,
# exit 1 (2 for bad usage), no output file, never a crash or a hang.
set -u
zkpipe=${ZKPIPE_BUILD_ROOT:?}/cli/zkpipe
data=${ZKPIPE_SOURCE_ROOT:?}/tests/data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
cache=$tmp/cache
guard=$data/witgen/guard.wasm
m='"m": [[1, 2, 3], [4, 5, 6]]'
expect() { # NAME WANT_STATUS WANT_TEXT WASM INPUT
    rm -f "$tmp/out.wtns"
    timeout 60 "$zkpipe" witness --cache "$cache" "$4" "$5" "$tmp/out.wtns" 2>"$tmp/err" >/dev/null
    st=$?
    if [ $st -ne "$2" ] || ! grep -q -- "$3" "$tmp/err" || [ "$(wc -l <"$tmp/err")" -ne 1 ] || [ -e "$tmp/out.wtns" ]; then
        echo "FAIL $1: status $st, wanted $2 and one line with '$3'; got: $(cat "$tmp/err")"; fail=$((fail + 1))
    else
        echo "ok   $1: $(cat "$tmp/err")"
    fi
}
j() { printf '%s\n' "$2" >"$tmp/$1.json"; echo "$tmp/$1.json"; }
expect "assert" 1 "assert.json: the circuit rejects the input .*Assert Failed. Error in template Guard_0 line: 8" "$guard" "$(j assert "{\"x\": 4000, $m}")"
expect "unknown signal" 1 "unknown.json: signal q is not an input of the circuit" "$guard" "$(j unknown "{\"x\": 1, $m, \"q\": 3}")"
expect "missing signal" 1 "missing.json: an input signal is missing: 1 of the circuit's 7 input values are set" "$guard" "$(j missing '{"x": 1}')"
expect "too many values" 1 "many.json: signal m: 7 values given, the circuit's input has 6 (too many values)" "$guard" "$(j many '{"x": 1, "m": [[1, 2, 3], [4, 5, 6, 7]]}')"
expect "not enough values" 1 "few.json: signal m: 5 values given, the circuit's input has 6 (not enough values)" "$guard" "$(j few '{"x": 1, "m": [[1, 2, 3], [4, 5]]}')"
expect "not a number" 1 "nan.json: signal x: a string that is not a number" "$guard" "$(j nan "{\"x\": \"12a\", $m}")"
expect "not an integer" 1 "frac.json: signal x: a JSON number that is not an integer" "$guard" "$(j frac "{\"x\": 0.5, $m}")"
expect "bad JSON" 1 "badjson.json: not valid JSON" "$guard" "$(j badjson '{"x": ')"
expect "input missing" 1 "nofile.json: cannot open" "$guard" "$tmp/nofile.json"
mkfifo "$tmp/fifo.json"
expect "input is a FIFO" 1 "fifo.json: not a regular file" "$guard" "$tmp/fifo.json"
expect "input is a directory" 1 "$tmp: not a regular file" "$guard" "$tmp"
expect "out of bounds" 1 "oob.json: generator trap (setInputSignal): out-of-bounds memory access" "$data/witgen/deep.wasm" "$(j oob '{"n": 100000}')"
expect "trap: stack" 1 "stack.json: generator trap (setInputSignal): call stack exhausted" "$data/witgen/trap.wasm" "$(j stack '{"mode": 2}')"
expect "wasm missing" 1 "none.wasm: cannot open" "$tmp/none.wasm" "$(j ok "{\"x\": 1, $m}")"
printf 'not wasm' >"$tmp/text.wasm"
expect "not a wasm" 1 "text.wasm: not a wasm module" "$tmp/text.wasm" "$tmp/ok.json"
printf '\0asm\1\0\0\0' >"$tmp/empty.wasm"
expect "not a circom generator" 1 "empty.wasm: not a circom 2 witness generator: no export 'getVersion'" "$tmp/empty.wasm" "$tmp/ok.json"
head -c 20000 "$guard" >"$tmp/cut.wasm"
expect "truncated wasm" 1 "cut.wasm: wasm2c exited with status 1" "$tmp/cut.wasm" "$tmp/ok.json"
mkfifo "$tmp/fifo.wasm"
expect "wasm is a FIFO" 1 "fifo.wasm: not a regular file" "$tmp/fifo.wasm" "$tmp/ok.json"
"$zkpipe" witness a b >/dev/null 2>&1; [ $? -eq 2 ] && echo "ok   usage" || { echo "FAIL usage: not 2"; fail=$((fail + 1)); }
"$zkpipe" witness --help | grep -q "Usage: zkpipe witness" && echo "ok   --help" || { echo "FAIL --help"; fail=$((fail + 1)); }
# and a good one after all of that
"$zkpipe" witness --cache "$cache" "$guard" "$tmp/ok.json" "$tmp/ok.wtns" && echo "ok   valid input" || { echo "FAIL valid input"; fail=$((fail + 1)); }
[ $fail -eq 0 ] || { echo "$fail failed"; exit 1; }
