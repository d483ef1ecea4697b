#!/usr/bin/env bash
# keyplace-cli etcd watch --cache FILE on a real etcd, as processes: a watcher is killed, etcd is
# stopped, the watcher is started again and routes with the epoch its cache file kept; etcd
# returns and the watcher catches up, never going back.
#   cli_restart_test.sh KEYPLACE_CLI FIXTURE_DIR SERVER_SCRIPT
# FIXTURE_DIR is SERVER_SCRIPT's (tests/etcd/etcd_server.sh): this test stops and restarts that
# etcd, so it runs under the fixture's lock, and restarts it on the way out whatever happened.
# Exits 77 (skipped) when etcd is not installed. Every wait is a poll with a generous deadline.
set -euo pipefail

cli=$1
fixture=$2
server=$3
# shellcheck source=cli_test_lib.sh
source "$(dirname "$0")/cli_test_lib.sh"
endpoint=$(fixture_endpoint "$fixture") || exit $?
cluster="cli-restart-$$-$RANDOM"
etcd_stopped=0
restore_etcd() {
    if ((etcd_stopped)); then
        sh "$server" restart "$fixture" >/dev/null || true
    fi
    cleanup
}
trap restore_etcd EXIT
etcd_cli() { "$cli" etcd "$1" --endpoints "$endpoint" --cluster "$cluster" "${@:2}"; }
iso='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z'
cache="$work/router.cache"

for e in 1 2 3; do
    "$cli" snapshot create --strategy ring --nodes "a,b,c$(printf ',n%s' $(seq 1 "$e"))" --cluster "$cluster" \
        --epoch "$e" >"$work/s$e.json"
done
fingerprint_of() { "$cli" snapshot verify "$1" | awk '$1 == "fingerprint" { print $2 }'; }
f2=$(fingerprint_of "$work/s2.json")
f3=$(fingerprint_of "$work/s3.json")

start_watcher() {  # start_watcher NAME: a watcher with the cache file; its output in NAME.out/.err
    "$cli" etcd watch --endpoints "$endpoint" --cluster "$cluster" --client-id router --cache "$cache" \
        >"$work/$1.out" 2>"$work/$1.err" &
    pids+=($!)
    eval "pid_$1=$!"
}
printed() { grep -Eq "^$2\$" "$work/$1.out" 2>/dev/null; }

# (a) A watcher with a cache file follows epochs 1 and 2; the file holds epoch 2's snapshot.
etcd_cli publish "$work/s1.json" >/dev/null
start_watcher first
until_true 30 printed first "epoch 1 fingerprint [0-9a-f]{32} at $iso" || fail "the first watcher did not adopt epoch 1"
etcd_cli publish "$work/s2.json" >/dev/null
until_true 30 printed first "epoch 2 fingerprint $f2 at $iso" || fail "the first watcher did not adopt epoch 2"
head -1 "$cache" | grep -Eq "^keyplace-watcher-cache 1 stated=$f2 length=[0-9]+ xxh3-128=[0-9a-f]{32}\$" ||
    fail "the cache file's header: $(head -c 200 "$cache")"

# (b) The watcher is killed, then etcd is stopped.
kill -KILL "$pid_first"
wait "$pid_first" 2>/dev/null || true
sh "$server" stop "$fixture" >/dev/null
etcd_stopped=1
curl -s --max-time 1 "$endpoint/health" >/dev/null 2>&1 && fail "etcd still answers after stop"

# (c) Started again with etcd down, the watcher routes with epoch 2 from the file at once.
start_watcher second
until_true 30 printed second "epoch 2 fingerprint $f2 at $iso restored from '$cache'" ||
    fail "the restarted watcher did not restore epoch 2"
[[ ! -s "$work/second.err" ]] || fail "the restarted watcher complained: $(<"$work/second.err")"
# Without the file, the same start has nothing to route with while etcd is down.
"$cli" etcd watch --endpoints "$endpoint" --cluster "$cluster" --client-id nocache \
    >"$work/nocache.out" 2>"$work/nocache.err" &
nocache=$!
pids+=("$nocache")
sleep 1  # not a wait for success: a window in which nothing may be printed
kill -TERM "$nocache"
wait "$nocache" 2>/dev/null || true
[[ ! -s "$work/nocache.out" ]] || fail "a watcher without a cache printed an epoch while etcd was down"

# (d) etcd returns; epoch 3 is published: the watcher adopts it, and printed nothing older.
sh "$server" restart "$fixture" >/dev/null
etcd_stopped=0
until_true 60 etcd_cli publish "$work/s3.json" >/dev/null 2>&1 || fail "publishing epoch 3 after etcd's restart"
until_true 30 printed second "epoch 3 fingerprint $f3 at $iso" || fail "the restarted watcher did not adopt epoch 3"
mapfile -t epochs < <(awk '{ print $2 }' "$work/second.out")
[[ "${epochs[*]}" == "2 3" ]] || fail "the restarted watcher printed epochs ${epochs[*]}, not 2 3"
head -1 "$cache" | grep -q "stated=$f3 " || fail "the cache file was not rewritten with epoch 3"

# (e) A corrupt cache file is refused with its reason on stderr; the watcher then waits for etcd.
printf 'not a cache\n' >"$work/bad.cache"
"$cli" etcd watch --endpoints "$endpoint" --cluster "$cluster" --client-id bad --cache "$work/bad.cache" --count 1 \
    >"$work/bad.out" 2>"$work/bad.err"
grep -qx "keyplace-cli: refused: cache '$work/bad.cache': not a keyplace watcher cache (its first line is 'not a cache')" \
    "$work/bad.err" || fail "the refusal of a corrupt cache file"
grep -Eq "^epoch 3 fingerprint $f3 at $iso\$" "$work/bad.out" || fail "after refusing its cache the watcher did not adopt epoch 3"
echo "cli restart from cache: ok"
