#!/bin/bash
# Every ini key docs/config.md documents is one the parser reads, and every key the parser reads is
# documented (issue 20): for each (section, key) row of its "Keys" table, an ini holding that key
# alone (with a value the key may refuse, but by its own name) must not get "unknown key" from
# cfg_load (through zkpipe advise, which loads the ini and then finds no segment); and each row of
# config/config.c's key table must be a row of the docs' table, in the same section.
set -u
zkpipe=${ZKPIPE_BUILD_ROOT:?}/cli/zkpipe
src=${ZKPIPE_SOURCE_ROOT:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0
rows=$(awk -F'|' '/^## Keys/ {on = 1; next} /^## / {on = 0} on && /^\| / {
        gsub(/^ +| +$/, "", $2); gsub(/^ +| +$/, "", $3)
        if ($3 == "key" || $3 ~ /^-+$/) next
        if ($2 != "") sec = $2
        print sec "|" $3 }' "$src/docs/config.md")
[ -n "$rows" ] || { echo "FAIL: no rows read from docs/config.md's Keys table"; exit 1; }
while IFS='|' read -r sec key; do
    n=$((n + 1))
    case $sec in
    "circuit NAME") head="[circuit c]"$'\n'"zkey = c.zkey" ;;
    *) head="[$sec]" ;;
    esac
    printf '[pipeline]\nname = keys\nsegment = %s/segment\nspool = %s/spool\n%s\n%s = 1\n' "$tmp" "$tmp" "$head" "$key" >"$tmp/k.ini"
    out=$("$zkpipe" advise --config "$tmp/k.ini" 2>&1)
    if echo "$out" | grep -q "unknown key"; then
        echo "FAIL: [$sec] $key is documented but the parser does not read it: $out"
        fail=$((fail + 1))
    fi
done <<<"$rows"
# the other way: each row of config.c's key table ({"SECTION", "KEY", KEY_TYPE, ...}) is a row of
# the docs' table, in the same section
table=$(grep -o '{"[a-z ]*", "[a-z0-9_]*", KEY_' "$src/config/config.c" | sed 's/{"\([a-z ]*\)", "\([a-z0-9_]*\)".*/\1|\2/; s/^circuit|/circuit NAME|/')
[ -n "$table" ] || { echo "FAIL: no rows read from config/config.c's key table"; exit 1; }
while IFS= read -r row; do
    echo "$rows" | grep -qxF "$row" || { echo "FAIL: config.c reads [${row%%|*}] ${row#*|}, docs/config.md does not list it there"; fail=$((fail + 1)); }
done <<<"$table"
[ $fail -eq 0 ] && echo "PASS: $n documented keys, each read by the parser; every key the parser reads is documented" || exit 1
