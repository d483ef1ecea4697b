#!/bin/sh
# Fuzzes each target for a bounded time, one after another (one core at a time).
#   cmake --preset fuzz && cmake --build --preset fuzz
#   tests/fuzz/run.sh SECONDS [TARGET...]      (default: every target)
# Environment: BUILD (default build/fuzz), OUT (default $BUILD/fuzz-out): per target a working
# corpus seeded from tests/fuzz/corpus/TARGET (which is only read), crash artifacts and the log.
# Prints each run's last status line (executions, coverage). Exits 1 if any run found a crash.
set -u
here=$(cd "$(dirname "$0")" && pwd)
seconds=${1:?usage: run.sh SECONDS [TARGET...]}
shift
[ $# -gt 0 ] || set -- spec cli strategies ring_lookup snapshot_json compat snapshot_next strategy_table etcd_options fleet_options
build=${BUILD:-build/fuzz}
out=${OUT:-$build/fuzz-out}
mkdir -p "$out" && out=$(cd "$out" && pwd)
status=0
for target in "$@"; do
    bin="$build/tests/fuzz/keyplace_fuzz_$target"
    if [ ! -x "$bin" ]; then
        echo "run.sh: $bin is not built (cmake --build --preset fuzz)" >&2
        status=1
        continue
    fi
    # Inputs longer than this explore nothing new and slow every execution.
    case $target in
        cli) max_len=1024 ;;
        snapshot_json) max_len=4096 ;;
        *) max_len=2048 ;;
    esac
    mkdir -p "$out/$target/corpus" "$out/$target/artifacts"
    log="$out/$target/fuzz.log"
    # -len_control=0: inputs up to max_len from the start (the seeds are short; a membership
    # with a few derivations needs a hundred bytes or more).
    "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len="$max_len" -len_control=0 -timeout=30 \
        -print_final_stats=1 -artifact_prefix="$out/$target/artifacts/" \
        "$out/$target/corpus" "$here/corpus/$target" >"$log" 2>&1
    rc=$?
    last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
    done_line=$(grep -E '^Done [0-9]+ runs' "$log" | tail -n 1)
    echo "$target: exit $rc; $done_line; $last"
    [ $rc -eq 0 ] || status=1
done
exit $status
