#!/usr/bin/env bash
# Cost of including keyplace: -fsyntax-only time of a TU with <keyplace/keyplace.hpp> against
# one with only the standard headers a typical user already has, as a ratio (issue 11).
#
#   bench/compile_time.sh [--runs N] [--headers] [--o2] [compiler...]   (default: g++ clang++)
#
# Each TU is compiled N times (default 5) and the fastest run is kept. Times are the
# compiler's CPU time (user + system) in milliseconds: on a shared machine wall-clock time
# mostly measures the other jobs. --headers adds one row per public header (a TU that
# includes just that header). --o2 adds full -O2 compiles (-c, CPU ms and peak memory) of
# bench/compile/service.cpp (load a snapshot document, publish it, look up a key) header-only
# and with KEYPLACE_COMPILED (keyplace::compiled), of its nlohmann_json-only twin, and of
# keyplace-fleet's translation units both ways (issue 28, item 5).
set -euo pipefail

runs=5
per_header=0
o2=0
compilers=()
while (($#)); do
    case "$1" in
        --runs) runs="$2"; shift 2 ;;
        --headers) per_header=1; shift ;;
        --o2) o2=1; shift ;;
        -h | --help) sed -n '2,14s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) compilers+=("$1"); shift ;;
    esac
done
((${#compilers[@]})) || compilers=(g++ clang++)

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

baseline_headers=(algorithm map string vector span optional memory)
for h in "${baseline_headers[@]}"; do echo "#include <$h>"; done >"$work/baseline.cpp"
echo '#include <keyplace/keyplace.hpp>' >"$work/keyplace.cpp"

# Best CPU time in ms of `$compiler -fsyntax-only` on file $2.
best_ms() {
    local compiler="$1" file="$2" best="" cpu ms TIMEFORMAT='%3U %3S'
    for ((r = 0; r < runs; ++r)); do
        cpu=$({ time "$compiler" -std=c++20 -fsyntax-only -I "$root/include" "$file" >&2; } 2>&1)
        ms=$(awk -v u="${cpu% *}" -v s="${cpu#* }" 'BEGIN { printf "%d", (u + s) * 1000 + 0.5 }')
        if [[ -z "$best" ]] || ((ms < best)); then best=$ms; fi
    done
    echo "$best"
}

# Best of $runs full compiles: "CPU-ms peak-MB" of `$compiler -O2 -c` with the given arguments.
best_o2() {
    local compiler="$1" best="" best_mb="" out ms mb
    shift
    for ((r = 0; r < runs; ++r)); do
        out=$(/usr/bin/time -f '%U %S %M' "$compiler" -std=c++20 -O2 -c -o "$work/o2.o" "$@" 2>&1 >/dev/null | tail -n 1)
        read -r ms mb < <(awk '{ printf "%d %d\n", ($1 + $2) * 1000 + 0.5, $3 / 1024 + 0.5 }' <<<"$out")
        if [[ -z "$best" ]] || ((ms < best)); then best=$ms; best_mb=$mb; fi
    done
    echo "$best $best_mb"
}

# keyplace-fleet's translation units (fleet/*.cpp): their CPU times summed, the largest peak.
fleet_o2() {
    local total=0 peak=0 ms mb f
    for f in "$root"/fleet/*.cpp; do
        read -r ms mb < <(best_o2 "$@" "$f")
        total=$((total + ms))
        if ((mb > peak)); then peak=$mb; fi
    done
    echo "$total $peak"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

for cxx in "${compilers[@]}"; do
    echo "== $("$cxx" --version | head -n 1) (best of $runs, CPU ms of -std=c++20 -fsyntax-only)"
    base=$(best_ms "$cxx" "$work/baseline.cpp")
    all=$(best_ms "$cxx" "$work/keyplace.cpp")
    printf '%-36s %7s ms\n' "standard headers only" "$base"
    printf '%-36s %7s ms\n' "<keyplace/keyplace.hpp>" "$all"
    printf '%-36s %7sx\n' "ratio" "$(ratio "$all" "$base")"
    if ((per_header)); then
        printf '\n%-36s %7s %9s\n' "header (alone in a TU)" "ms" "x stdlib"
        while IFS= read -r header; do
            tu="$work/one.cpp"
            echo "#include <$header>" >"$tu"
            ms=$(best_ms "$cxx" "$tu")
            printf '%-36s %7s %9s\n' "$header" "$ms" "$(ratio "$ms" "$base")"
        done < <(cd "$root/include" && find keyplace -name '*.hpp' | LC_ALL=C sort)
    fi
    if ((o2)); then
        inc=(-I "$root/include")
        svc="$root/bench/compile/service.cpp"
        fleet=(-I "$root/cli" -I "$root/etcd/include" -DKEYPLACE_FLEET_ETCD)
        read -r twin twin_mb < <(best_o2 "$cxx" "$root/bench/compile/service_nlohmann.cpp")
        read -r ho ho_mb < <(best_o2 "$cxx" "${inc[@]}" "$svc")
        read -r co co_mb < <(best_o2 "$cxx" "${inc[@]}" -DKEYPLACE_COMPILED "$svc")
        read -r fho fho_mb < <(fleet_o2 "$cxx" "${inc[@]}" "${fleet[@]}")
        read -r fco fco_mb < <(fleet_o2 "$cxx" "${inc[@]}" -DKEYPLACE_COMPILED "${fleet[@]}")
        printf '\n%-44s %8s %8s\n' "-O2 -c (best of $runs)" "CPU ms" "peak MB"
        printf '%-44s %8s %8s\n' "service, nlohmann_json only (the twin)" "$twin" "$twin_mb"
        printf '%-44s %8s %8s\n' "service, header-only" "$ho" "$ho_mb"
        printf '%-44s %8s %8s\n' "service, KEYPLACE_COMPILED" "$co" "$co_mb"
        printf '%-44s %8s %8s\n' "keyplace-fleet (sum of its TUs), header-only" "$fho" "$fho_mb"
        printf '%-44s %8s %8s\n' "keyplace-fleet (sum of its TUs), COMPILED" "$fco" "$fco_mb"
        printf '%-44s %8sx\n' "service header-only / twin" "$(ratio "$ho" "$twin")"
        printf '%-44s %8sx\n' "service compiled / twin" "$(ratio "$co" "$twin")"
        printf '%-44s %8sx\n' "service compiled / header-only" "$(ratio "$co" "$ho")"
    fi
    echo
done
