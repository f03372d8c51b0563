#!/bin/bash
# The main job's demo (scripts/run-demo.sh, what scripts/main-job.sh runs) with only the commands a
# fresh Debian 12 machine has after `scripts/install-deps.sh --main`: the Priority: required
# packages, the main list and what it depends on, and Node.js. A command the demo calls that none of
# them installs (bc did, once: the fresh machine's main job ended with exit 127) fails here.
. "$(dirname "$0")/lib.sh"
command -v apt-cache >/dev/null && command -v dpkg-query >/dev/null || { echo "SKIP: not a Debian system"; exit 77; }
[ -x "$SNARKJS" ] || { echo "SKIP: snarkjs not installed (npm ci)"; exit 77; }

# shellcheck disable=SC2046
pkgs=$( (dpkg-query -W -f='${Package} ${Priority}\n' | awk '$2 == "required" { print $1 }'
    apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
        --no-enhances $("$ROOT/scripts/install-deps.sh" --list --main) | grep -v '^ \|^<'
    echo nodejs) | sort -u)
bin=$T/bin
mkdir -p "$bin"
n=0
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || continue
    for f in $(dpkg -L "$p" | grep -E '^(/usr)?/s?bin/[^/]+$'); do
        [ -x "$f" ] && [ ! -e "$bin/${f##*/}" ] && ln -s "$f" "$bin/${f##*/}" && n=$((n + 1))
    done
done
# commands the alternatives system names (awk is mawk, cc is gcc): linked when their target is one of the above
for l in /usr/bin/* /usr/sbin/*; do
    [ -L "$l" ] && [ ! -e "$bin/${l##*/}" ] && case $(readlink "$l") in /etc/alternatives/*) ;; *) continue ;; esac || continue
    t=$(readlink -f "$l")
    [ -e "$bin/${t##*/}" ] && ln -s "$t" "$bin/${l##*/}" && n=$((n + 1))
done
# npm's own launcher (nodesource's nodejs package ships it; Debian's in its npm package, a dependency)
[ -e "$bin/npm" ] || { command -v npm >/dev/null && ln -s "$(command -v npm)" "$bin/npm"; }
log "$n commands from the packages of a fresh machine with the main job's dependencies"
for c in bash awk sed ninja cc wasm2c python3 node; do
    [ -e "$bin/$c" ] || fail "the package list lacks $c, which the demo needs: the list is wrong"
done

env -i PATH="$bin" HOME="$T" ZKPIPE_BUILD_ROOT="$BUILD" "$ROOT/scripts/run-demo.sh" --build "$BUILD" --snarkjs \
    >"$T/demo.log" 2>&1
rc=$?
grep -E 'not found|proofs verify|proofs/min' "$T/demo.log"
[ $rc = 0 ] || { tail -n 20 "$T/demo.log" >&2; fail "run-demo.sh exited $rc with the fresh machine's commands"; }
grep -q 'command not found' "$T/demo.log" && fail "run-demo.sh called a command a fresh machine does not have"
grep -q 'proofs/min' "$T/demo.log" || fail "run-demo.sh printed no throughput line"
rm -rf "$T"
echo "PASS"
