#!/usr/bin/env bash
# A fleet on a real etcd, as processes: keyplace-cli etcd publish / current / watch / status.
#   cli_fleet_test.sh KEYPLACE_CLI FIXTURE_DIR
# FIXTURE_DIR is tests/etcd/etcd_server.sh's (DIR/endpoint holds the client URL). Exits 77
# (skipped) when etcd is not installed. Asserts outcomes only: every wait is a poll with a
# generous deadline, never a sleep that must be long enough.
set -euo pipefail

cli=$1
fixture=$2
# shellcheck source=cli_test_lib.sh
source "$(dirname "$0")/cli_test_lib.sh"
endpoint=$(fixture_endpoint "$fixture") || exit $?
cluster="cli-fleet-$$-$RANDOM"  # the fixture's etcd is shared: keys of our own
etcd_cli() { "$cli" etcd "$1" --endpoints "$endpoint" --cluster "$cluster" "${@:2}"; }
iso='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z'

# (a) three snapshots of the cluster, and their fingerprints as snapshot verify prints them.
"$cli" snapshot create --strategy ring --nodes a,b,c --cluster "$cluster" --epoch 1 >"$work/s1.json"
"$cli" snapshot create --strategy ring --nodes a,b,c,d --cluster "$cluster" --epoch 2 \
    --states d=joining >"$work/s2.json"
"$cli" snapshot create --strategy ring --nodes a,b,c,d --cluster "$cluster" --epoch 3 >"$work/s3.json"
# Another placement of epoch 3, for the second of two concurrent publishers (publishing the same
# snapshot twice is a retry, which succeeds).
"$cli" snapshot create --strategy ring --nodes a,b,c,d,e --cluster "$cluster" --epoch 3 >"$work/s3b.json"
"$cli" snapshot create --strategy ring --nodes a,b --cluster other --epoch 9 >"$work/other.json"
fingerprint_of() { "$cli" snapshot verify "$1" | awk '$1 == "fingerprint" { print $2 }'; }
f1=$(fingerprint_of "$work/s1.json")
f2=$(fingerprint_of "$work/s2.json")
f3=$(fingerprint_of "$work/s3.json")
[[ ${#f1} -eq 32 && ${#f2} -eq 32 && ${#f3} -eq 32 && $f1 != "$f2" && $f2 != "$f3" ]] ||
    fail "snapshot verify fingerprints: '$f1' '$f2' '$f3'"

# Nothing published yet: etcd current exits 1.
rc=0
etcd_cli current >"$work/none.out" 2>"$work/none.err" || rc=$?
[[ $rc -eq 1 && $(<"$work/none.err") == "keyplace-cli: nothing is published to cluster '$cluster'" ]] ||
    fail "etcd current before any publish: status $rc"
# A document of another cluster is refused before etcd is written.
rc=0
etcd_cli publish "$work/other.json" >/dev/null 2>"$work/other.err" || rc=$?
[[ $rc -eq 1 ]] && grep -q "cluster 'other', not of '$cluster'" "$work/other.err" ||
    fail "publishing another cluster's snapshot: status $rc"

# (b) three watchers that stop after two adoptions.
start_watcher() {  # start_watcher ID [watch options...]
    # "$cli" itself, not the etcd_cli function, so that $! is keyplace-cli's pid, not a subshell's
    "$cli" etcd watch --endpoints "$endpoint" --cluster "$cluster" --client-id "$1" "${@:2}" \
        >"$work/$1.out" 2>"$work/$1.err" &
    pids+=($!)
    eval "pid_$1=$!"
}
for w in w1 w2 w3; do
    start_watcher "$w" --count 2
done

# (c) epoch 1, then, once every watcher printed it, epoch 2.
out=$(etcd_cli publish "$work/s1.json")
[[ $out == "published epoch 1 (fingerprint $f1) to cluster $cluster" ]] || fail "publish 1 printed '$out'"
printed() { grep -Eq "^epoch $2 fingerprint $3 at $iso\$" "$work/$1.out" 2>/dev/null; }
for w in w1 w2 w3; do
    until_true 30 printed "$w" 1 "$f1" || fail "$w did not print epoch 1"
done

# (e) while they run, a fourth watcher without --count and a short lease: status lists all four.
start_watcher w4 --lease-ttl 2
until_true 30 printed w4 1 "$f1" || fail "w4 did not print epoch 1"
status_lists() {  # status_lists EPOCH FINGERPRINT ON_CURRENT TOTAL ID...
    local epoch=$1 fp=$2 summary="$3 of $4 clients on the current epoch $1"
    shift 4
    etcd_cli status >"$work/status.txt" 2>&1 || return 1
    grep -qx "$summary" "$work/status.txt" || return 1
    for id in "$@"; do
        grep -Eq "^$id +$epoch +$fp +[0-9.]+ +[0-9]+ *\$" "$work/status.txt" || return 1
    done
}
until_true 15 status_lists 1 "$f1" 4 4 w1 w2 w3 w4 || fail "status did not list w1..w4 on epoch 1: $(<"$work/status.txt")"
etcd_cli status --json | grep -q "\"on_current\":4,\"agree\":true}" || fail "status --json"

out=$(etcd_cli publish --snapshot "$work/s2.json")
[[ $out == "published epoch 2 (fingerprint $f2) to cluster $cluster" ]] || fail "publish 2 printed '$out'"

# (d) the three exit by themselves, 0, each having printed exactly epochs 1 and 2 with the
# fingerprints snapshot verify prints, and no refusal.
for w in w1 w2 w3; do
    pid_var="pid_$w"
    until_true 30 eval "! kill -0 ${!pid_var} 2>/dev/null" || fail "$w did not stop after two epochs"
    rc=0
    wait "${!pid_var}" || rc=$?
    [[ $rc -eq 0 ]] || fail "$w exited $rc"
    [[ $(wc -l <"$work/$w.out") -eq 2 ]] && printed "$w" 1 "$f1" && printed "$w" 2 "$f2" ||
        fail "$w printed: $(<"$work/$w.out")"
    [[ ! -s "$work/$w.err" ]] || fail "$w wrote on stderr"
done
until_true 30 printed w4 2 "$f2" || fail "w4 did not print epoch 2"

# Exited watchers revoked their leases: only w4 remains, on epoch 2.
until_true 15 status_lists 2 "$f2" 1 1 w4 || fail "status after w1..w3 exited: $(<"$work/status.txt")"
grep -Eq '^w[123] ' "$work/status.txt" && fail "an exited watcher is still listed"
[[ $(etcd_cli current) == "epoch 2 fingerprint $f2" ]] || fail "etcd current: $(etcd_cli current)"
etcd_cli current --json | grep -q "^{\"cluster\":\"$cluster\",\"epoch\":2,\"fingerprint\":\"$f2\"" ||
    fail "etcd current --json"

# A killed watcher (no revoke) disappears when its lease expires (TTL 2 s; poll up to 15 s).
kill -KILL "$pid_w4"
{ wait "$pid_w4"; } 2>/dev/null || true
until_true 15 eval "etcd_cli status >'$work/status.txt' && grep -qx '0 of 0 clients on the current epoch 2' '$work/status.txt'" ||
    fail "w4's report outlived its lease: $(<"$work/status.txt")"

# SIGTERM: the watcher exits 0 and its report goes at once (the lease is revoked).
start_watcher w5
until_true 30 printed w5 2 "$f2" || fail "w5 did not print epoch 2"
until_true 15 status_lists 2 "$f2" 1 1 w5 || fail "status did not list w5"
kill -TERM "$pid_w5"
rc=0
wait "$pid_w5" || rc=$?
[[ $rc -eq 0 ]] || fail "w5 exited $rc on SIGTERM"
until_true 15 eval "etcd_cli status >'$work/status.txt' && grep -qx '0 of 0 clients on the current epoch 2' '$work/status.txt'" ||
    fail "w5 is listed after SIGTERM: $(<"$work/status.txt")"

# (f) a stale publish exits 1 with one line naming both epochs, and current stays.
rc=0
etcd_cli publish "$work/s1.json" >"$work/stale.out" 2>"$work/stale.err" || rc=$?
[[ $rc -eq 1 && ! -s "$work/stale.out" && $(wc -l <"$work/stale.err") -eq 1 ]] || fail "stale publish: status $rc"
grep -q "epoch 1" "$work/stale.err" && grep -q "epoch 2" "$work/stale.err" ||
    fail "stale publish message: $(<"$work/stale.err")"
[[ $(etcd_cli current) == "epoch 2 fingerprint $f2" ]] || fail "current moved on a stale publish"

# Two publishers of two different epoch-3 snapshots at once: exactly one succeeds, the other
# exits 1 naming epoch 3.
"$cli" etcd publish --endpoints "$endpoint" --cluster "$cluster" "$work/s3.json" >"$work/p1.out" 2>"$work/p1.err" &
p1=$!
pids+=($p1)
"$cli" etcd publish --endpoints "$endpoint" --cluster "$cluster" "$work/s3b.json" >"$work/p2.out" 2>"$work/p2.err" &
p2=$!
pids+=($p2)
rc1=0
wait "$p1" || rc1=$?
rc2=0
wait "$p2" || rc2=$?
[[ $((rc1 + rc2)) -eq 1 && $((rc1 * rc2)) -eq 0 ]] || fail "concurrent publish of epoch 3: statuses $rc1 and $rc2"
winner=p1 loser=p2
[[ $rc1 -eq 0 ]] || { winner=p2; loser=p1; }
f3b=$(fingerprint_of "$work/s3b.json")
[[ $winner == p1 ]] && fw=$f3 || fw=$f3b
[[ $(<"$work/$winner.out") == "published epoch 3 (fingerprint $fw) to cluster $cluster" ]] || fail "winner printed"
[[ $(wc -l <"$work/$loser.err") -eq 1 ]] && grep -q "epoch 3" "$work/$loser.err" ||
    fail "loser's message: $(<"$work/$loser.err")"
[[ $(etcd_cli current) == "epoch 3 fingerprint $fw" ]] || fail "current after the race: $(etcd_cli current)"

# Two reports of one epoch with different fingerprints (written as the README's protocol
# says, through the gateway): etcd status prints its table, then exits 3 naming both.
b64() { printf '%s' "$1" | base64 -w0; }
put_report() {  # put_report ID FINGERPRINT
    local value="{\"epoch\":3,\"fingerprint\":\"$2\",\"library\":\"0.2.0\",\"contract\":1}"
    curl -sf -X POST "$endpoint/v3/kv/put" \
        -d "{\"key\":\"$(b64 "/keyplace/$cluster/clients/$1")\",\"value\":\"$(b64 "$value")\"}" >/dev/null
}
put_report x1 "$fw"
put_report x2 "$f1"
rc=0
etcd_cli status >"$work/split.out" 2>"$work/split.err" || rc=$?
[[ $rc -eq 3 ]] || fail "status with two fingerprints for epoch 3 exited $rc"
grep -qx "1 of 2 clients on the current epoch 3" "$work/split.out" || fail "split status table"
[[ $(<"$work/split.err") == "keyplace-cli: clients 'x1' and 'x2' report epoch 3 with different fingerprints ($fw, $f1)" ]] ||
    fail "split status message: $(<"$work/split.err")"

# A closed stdout: descriptor 1 is held from the start, so the watcher's connection cannot take it
# and swallow the adopted epoch; the first line is a failed write, status 1. A cluster of its
# own, so that its report counts in no status above.
"$cli" snapshot create --strategy ring --nodes a,b --cluster "$cluster-closed" >"$work/closed.json"
"$cli" etcd publish --endpoints "$endpoint" --cluster "$cluster-closed" "$work/closed.json" >/dev/null
rc=0
timeout 60 "$cli" etcd watch --endpoints "$endpoint" --cluster "$cluster-closed" --count 1 >&- 2>"$work/closed.err" ||
    rc=$?
[[ $rc -eq 1 && $(<"$work/closed.err") == "keyplace-cli: cannot write the output" ]] ||
    fail "etcd watch with stdout closed: status $rc, stderr '$(<"$work/closed.err")'"

# Usage: --endpoints is required; a bare "etcd" names its subcommands.
rc=0
"$cli" etcd current --cluster "$cluster" 2>"$work/usage.err" || rc=$?
[[ $rc -eq 2 && $(<"$work/usage.err") == "keyplace-cli: missing required option --endpoints" ]] || fail "no --endpoints"
rc=0
"$cli" etcd 2>"$work/usage.err" || rc=$?
[[ $rc -eq 2 ]] && grep -q "publish, current, watch or status" "$work/usage.err" || fail "bare etcd"

echo "ok: cli fleet on $endpoint"
