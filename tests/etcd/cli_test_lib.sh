# Sourced by the bash tests of keyplace-cli's etcd commands: a work directory removed at exit,
# background processes (their pids in `pids`) killed at exit, fail, and until_true.
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do
        kill -KILL "$pid" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# fail WORDS...: says FAIL with the words, shows every *.out and *.err of the work directory, exits 1.
fail() {
    echo "FAIL: $*" >&2
    for f in "$work"/*.out "$work"/*.err; do
        [[ -e "$f" ]] && { echo "--- $f" >&2; cat "$f" >&2; }
    done
    exit 1
}

# until_true DEADLINE_SECONDS COMMAND...: polls COMMAND every 0.1 s; returns 1 on timeout.
until_true() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        ((SECONDS < deadline)) || return 1
        sleep 0.1
    done
}

# fixture_endpoint FIXTURE_DIR: prints the single-member fixture's client URL (tests/etcd/etcd_server.sh);
# exits 77 (skipped) when etcd is not installed, 1 when the fixture is not up.
fixture_endpoint() {
    if ! command -v etcd >/dev/null 2>&1; then
        echo "etcd is not installed: skipped" >&2
        exit 77
    fi
    [[ -s "$1/endpoint" ]] || { echo "FAIL: no endpoint in $1/endpoint (is the etcd fixture up?)" >&2; exit 1; }
    cat "$1/endpoint"
}
