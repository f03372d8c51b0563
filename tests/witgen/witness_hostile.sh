#!/bin/sh
# zkpipe witness on hostile generators (issue 25, point 13; tests/witgen/hostile.wat): a getVersion
# that never returns is stopped after 10 s (the limit of instantiation and the protocol's first
# calls), a getMessageChar that never returns 0 is read up to 4096 characters, a wasm asking for
# 4 GiB of initial memory is refused naming that; a legal circuit whose generator loops (spin.circom
# on x = -1) is stopped by --timeout; one line each, exit 1, never a hang.
set -u
zkpipe=${ZKPIPE_BUILD_ROOT:?}/cli/zkpipe
data=${ZKPIPE_SOURCE_ROOT:?}/tests/data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
echo '{"x": 1}' >"$tmp/one.json"
echo '{"x": -1}' >"$tmp/loop.json"
expect() { # NAME WANT_TEXT WASM [INPUT [OPTION...]]
    name=$1 want=$2 wasm=$3 input=${4:-one.json}
    shift 3
    [ $# -gt 0 ] && shift
    rm -f "$tmp/out.wtns"
    start=$(date +%s)
    timeout 60 "$zkpipe" witness --cache "$tmp/cache" "$@" "$wasm" "$tmp/$input" "$tmp/out.wtns" 2>"$tmp/err" >/dev/null
    st=$?
    if [ $st -ne 1 ] || ! grep -q -- "$want" "$tmp/err" || [ "$(wc -l <"$tmp/err")" -ne 1 ] || [ -e "$tmp/out.wtns" ]; then
        echo "FAIL $name: status $st after $(($(date +%s) - start)) s, wanted 1 and one line with '$want'; got: $(cat "$tmp/err")"
        fail=$((fail + 1))
    else
        echo "ok   $name: $(cut -c 1-160 "$tmp/err")"
    fi
}
expect "getVersion loops" "hostile-version.wasm: generator ran past 10 s (getVersion)" "$data/witgen/hostile-version.wasm"
expect "getMessageChar never 0" "one.json: the circuit rejects the input (setInputSignal): Assert Failed. xxxx" "$data/witgen/hostile-message.wasm"
expect "4 GiB of initial memory" "hostile-memory.wasm: the wasm asks for 4294967296 bytes of initial memory (65536 pages)" "$data/witgen/hostile-memory.wasm"
expect "a looping circuit, --timeout 2" "loop.json: generator ran past 2 s" "$data/witgen/spin.wasm" loop.json --timeout 2
[ $fail -eq 0 ] && echo PASS || { echo "$fail failed"; exit 1; }
