#!/bin/bash
# Every documentation citation in the tree resolves inside the repository (suite docs):
#   NAME.md §N, §N.M, ranges "§A-B" and lists "§A, §B"  -> docs/NAME.md has a heading "N." / "N.M"
#   NAME.md "Title"                                       -> docs/NAME.md has a heading containing Title
#   docs/NAME.md (also ../docs/NAME.md)                   -> the file exists
#   formats.md, architecture.md without a folder          -> docs/formats.md, docs/architecture.md exist
#   any other bare NAME.md                                -> some file of the tree is called NAME.md
#   a path into ../shared/docs                            -> always wrong: the specs live in docs/
#   inside docs/formats.md, a bare §N                     -> a heading of formats.md itself
# Prints FILE:LINE: what does not resolve, for each one, and exits 1 if any; 0 when all resolve.
# ZKPIPE_CITATIONS_ROOT=DIR checks another tree (the test's own self-check uses it).
set -euo pipefail
root=${ZKPIPE_CITATIONS_ROOT:-${ZKPIPE_SOURCE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}}
cd "$root"
self=tests/check_citations.sh

# Text files of the tree: git's list where there is one (tracked and untracked, not ignored), else
# every file outside build and node_modules (the GPU machine gets a plain copy of the tree).
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    list=$(git ls-files -co --exclude-standard)
else
    list=$(find . \( -name node_modules -o -name 'build*' -o -name .git \) -prune -o -type f -print | sed 's|^\./||')
fi
files=()
while IFS= read -r f; do
    [ -f "$f" ] && [ ! -L "$f" ] && [ "$f" != "$self" ] || continue
    case $f in node_modules/* | build*/* | *.zkey | *.wtns | *.r1cs | *.ptau | *.json | *.wasm) continue ;; esac
    files+=("$f")
done <<<"$list"
basenames=$(printf '%s\n' "${files[@]}" | sed 's|.*/||' | sort -u)

fail=0
checked=0
bad() {
    echo "$1: $2"
    fail=1
}

# Section numbers of a doc: "## 5. Title" -> 5, "### 5.3 Title" -> 5.3
sections() { grep -oP '^#{1,6} \K[0-9]+(\.[0-9]+)*' "$1" || true; }
has_section() { sections "$1" | grep -qxF "$2"; }

# doc_of TOKEN: the docs file a citation token names (docs/X.md, ../docs/X.md or a bare X.md)
doc_of() { echo "docs/${1##*/}"; }

check_sections() { # WHERE DOC "§A-B, §C" TOKEN
    local where=$1 doc=$2 secs=$3 tok=$4 part a b
    secs=${secs//§/}
    secs=${secs//–/-}
    IFS=',' read -ra parts <<<"$secs"
    for part in "${parts[@]}"; do
        part=${part// /}
        part=${part%.}
        a=${part%%-*}
        b=${part##*-}
        [ "$a" != "$b" ] || b=
        for n in "$a" "$b"; do
            n=${n%.}
            [ -n "$n" ] || continue
            checked=$((checked + 1))
            has_section "$doc" "$n" || bad "$where" "$tok: $doc has no section $n"
        done
    done
}

num='[0-9]+(?:\.[0-9]+)*\.?'
secpat="§$num(?:(?:-|–)$num)?(?:, §$num(?:(?:-|–)$num)?)*"
for f in "${files[@]}"; do
    grep -qI . "$f" 2>/dev/null || continue # binary or empty
    # X.md followed by section numbers or a quoted heading; the token keeps its folder, if any
    while IFS= read -r hit; do
        line=${hit%%:*}
        m=${hit#*:}
        tok=${m%% *}
        rest=${m#"$tok"}
        rest=${rest# }
        case $tok in
        */*) case $tok in docs/* | ../docs/* | */docs/*) ;; *) continue ;; esac ;;
        esac
        doc=$(doc_of "$tok")
        if [ ! -f "$doc" ]; then
            bad "$f:$line" "$tok: $doc does not exist"
            continue
        fi
        if [[ $rest == \"* ]]; then
            title=${rest#\"}
            title=${title%\"}
            checked=$((checked + 1))
            grep -qP "^#{1,6} .*\Q$title\E" "$doc" || bad "$f:$line" "$tok \"$title\": no such heading in $doc"
        else
            check_sections "$f:$line" "$doc" "$rest" "$tok"
        fi
    done < <(grep -noP "(?:[A-Za-z0-9_.-]*/)*[A-Za-z0-9_-]+\.md (?:$secpat|\"[A-Za-z][^\"]{0,60}\")" "$f" || true)

    # docs/X.md without sections: the file exists
    while IFS= read -r hit; do
        line=${hit%%:*}
        tok=${hit#*:}
        checked=$((checked + 1))
        [ -f "docs/${tok##*/}" ] || bad "$f:$line" "$tok does not exist"
    done < <(grep -noP '(?<![A-Za-z0-9_@$/-])(?:\.\./)?docs/[A-Za-z0-9_-]+\.md(?! §[0-9]| "[A-Za-z])' "$f" || true)

    # bare X.md (no folder): formats/architecture must be in docs/, anything else somewhere in the tree
    while IFS= read -r hit; do
        line=${hit%%:*}
        tok=${hit#*:}
        checked=$((checked + 1))
        case $tok in
        formats.md | architecture.md) [ -f "docs/$tok" ] || bad "$f:$line" "$tok: docs/$tok does not exist" ;;
        *) grep -qxF "$tok" <<<"$basenames" || bad "$f:$line" "$tok: no file of that name in the repository" ;;
        esac
    done < <(grep -noP '(?<![A-Za-z0-9_@$/.-])[A-Za-z0-9_-]+\.md\b(?! §[0-9]| "[A-Za-z])' "$f" || true)

    # the original design's folder: never cited
    while IFS= read -r hit; do
        bad "$f:${hit%%:*}" "cites ../shared/docs, outside the repository (the specs are in docs/)"
    done < <(grep -noF 'shared/docs' "$f" || true)
done

# bare § inside formats.md: its own sections
if [ -f docs/formats.md ]; then
    while IFS= read -r hit; do
        line=${hit%%:*}
        m=${hit#*:}
        check_sections "docs/formats.md:$line" docs/formats.md "$m" "$m"
    done < <(grep -noP "(?<!\.md )$secpat" docs/formats.md || true)
fi

# A check that finds nothing to check is broken, not passing.
if [ "$checked" -lt 20 ]; then
    echo "check_citations: only $checked citations found in $root: the patterns no longer match the tree"
    exit 1
fi
[ "$fail" = 0 ] && echo "check_citations: $checked citations resolve"
exit "$fail"
