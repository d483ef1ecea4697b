#!/usr/bin/env bash
# keyplace-cli's bash completion, sourced: what <TAB> offers after a few command lines.
set -u
source "$1" || { echo "cannot source $1"; exit 1; }
failures=0

# complete LINE: COMPREPLY for the last word of LINE (a trailing space: an empty word).
complete_line() {
    read -r -a COMP_WORDS <<<"$1"
    [[ $1 == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _keyplace_cli
    printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}

expect() {
    local got
    got=$(complete_line "$1")
    if [[ $got != "$2" ]]; then
        echo "'$1<TAB>': expected '$2', got '$got'"
        failures=$((failures + 1))
    fi
}

expect "keyplace-cli sn" "snapshot"
expect "keyplace-cli loc" "locate"
expect "keyplace-cli locate --str" "--strategy"
expect "keyplace-cli snapshot " "create diff next ramp rollback verify"
expect "keyplace-cli snapshot cr" "create"
expect "keyplace-cli etcd st" "status"
expect "keyplace-cli locate --strategy mag" "maglev"
expect "keyplace-cli hash --function xxh" "xxh3 xxh64"
expect "keyplace-cli locate --spread z" "zone"
expect "keyplace-cli locate --on-shortfall " "fail relax"
# Strategy options where the command takes them, and not where it does not.
expect "keyplace-cli locate --vno" "--vnodes"
expect "keyplace-cli hash --vno" ""
expect "keyplace-cli snapshot create --cop" "--copies"
expect "keyplace-cli help sta" "stats"
# A value that is not a choice: nothing offered.
expect "keyplace-cli locate --copies " ""
# A file option completes file names (here: the script itself, by its directory).
dir=$(dirname "$1")
expect "keyplace-cli diff --keys $dir/keyplace-cli.ba" "$dir/keyplace-cli.bash"
expect "keyplace-cli snapshot verify $dir/keyplace-cli.ba" "$dir/keyplace-cli.bash"
((failures == 0)) || exit 1
echo "completion: every case completes as expected"
