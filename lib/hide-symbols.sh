#!/bin/sh
# librapidsnark.a with the symbol hygiene of librapidsnark.so: the objects of IN (an archive) linked
# into one relocatable object whose only global symbols are the names in MAP (a version script),
# archived as OUT. Usage: hide-symbols.sh IN OUT MAP
set -eu
in=$1 out=$2 map=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed -n 's/^ *\([A-Za-z_][A-Za-z_0-9]*\);$/\1/p' "$map" > "$tmp/keep"
ld -r --whole-archive "$in" -o "$tmp/rapidsnark.o"
objcopy --keep-global-symbols="$tmp/keep" "$tmp/rapidsnark.o"
rm -f "$out"
ar rcs "$out" "$tmp/rapidsnark.o"
