# Sourced by scripts/run-demo.sh and tests/pipeline/lib.sh: the bundled circuits (tests/data) by the
# names the demo and the pipeline tests configure them under.
fixture_path() { # NAME: its path below tests/data, without .zkey/.r1cs
    case $1 in
    mulchain) echo bn128/mulchain/mulchain ;;
    poseidon) echo bn128/poseidon/poseidon ;;
    medium) echo bn128/medium/medium ;;
    mulchain381) echo bls12381/mulchain/mulchain ;;
    *) echo "fixture-circuits.sh: no circuit named $1" >&2; return 1 ;;
    esac
}
fixture_circuits_ini() { # DATA NAME...: their [circuit NAME] sections of the ini
    local data=$1 name path
    shift
    for name in "$@"; do
        path=$data/$(fixture_path "$name") || return 1
        printf '[circuit %s]\nzkey = %s.zkey\nr1cs = %s.r1cs\n' "$name" "$path" "$path"
    done
}
fixture_circuits_ini_wasm() { # DATA NAME...: the same sections with the circuit's wasm generator (input.json jobs)
    local data=$1 name path
    shift
    for name in "$@"; do
        path=$data/$(fixture_path "$name") || return 1
        printf '[circuit %s]\nzkey = %s.zkey\nr1cs = %s.r1cs\nwasm = %s.wasm\n' "$name" "$path" "$path" "$path"
    done
}
