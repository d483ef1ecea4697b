#!/usr/bin/env bash
# keyplace-cli's etcd commands against the secured 3-member etcd of tests/etcd/etcd_cluster.sh:
# TLS options, --user and its password sources, --endpoints with failover, and the refusals.
#   cli_secure_test.sh KEYPLACE_CLI CLUSTER_DIR
# Exits 77 (skipped) when etcd is not installed. Asserts outcomes only: waits are polls with a
# generous deadline.
set -euo pipefail

cli=$1
fixture=$2
if ! command -v etcd >/dev/null 2>&1 || ! command -v openssl >/dev/null 2>&1; then
    echo "etcd or openssl is not installed: skipped"
    exit 77
fi
[[ -s "$fixture/endpoints" ]] || { echo "FAIL: no $fixture/endpoints (is the etcd cluster fixture up?)"; exit 1; }
endpoints=$(<"$fixture/endpoints")
tls=(--cacert "$fixture/tls/ca.pem" --cert "$fixture/tls/client.pem" --key "$fixture/tls/client-key.pem")
cluster="cli-secure-$$-$RANDOM"
# shellcheck source=cli_test_lib.sh
source "$(dirname "$0")/cli_test_lib.sh"
unset KEYPLACE_ETCD_PASSWORD

# expect STATUS PATTERN COMMAND...: COMMAND exits STATUS and writes one stderr line matching PATTERN.
expect() {
    local want=$1 pattern=$2 rc=0
    shift 2
    "$@" >"$work/expect.out" 2>"$work/expect.err" || rc=$?
    [[ $rc -eq $want ]] || fail "exit $rc, not $want: $*"
    [[ $(wc -l <"$work/expect.err") -eq 1 ]] || fail "not one stderr line: $*"
    grep -Eq -- "$pattern" "$work/expect.err" || fail "stderr does not match '$pattern': $*"
}

"$cli" snapshot create --strategy ring --nodes a,b,c --cluster "$cluster" --epoch 1 >"$work/s1.json"
"$cli" snapshot create --strategy ring --nodes a,b,c,d --cluster "$cluster" --epoch 2 >"$work/s2.json"
printf 'kppw\n' >"$work/password"
ec() { "$cli" etcd "$1" --cluster "$cluster" "${@:2}"; }

# Usage errors: exit 2, naming the value.
expect 2 "^keyplace-cli: --cert needs --key$" \
    ec current --endpoints "$endpoints" --cacert "$fixture/tls/ca.pem" --cert "$fixture/tls/client.pem"
expect 2 "^keyplace-cli: --key needs --cert$" ec current --endpoints "$endpoints" --key "$fixture/tls/client-key.pem"
expect 2 "^keyplace-cli: --user ':x' has an empty user name$" ec current --endpoints "$endpoints" "${tls[@]}" --user :x
expect 2 "^keyplace-cli: --user 'kp' has no password: give --user NAME:PASSWORD, --password-file FILE or KEYPLACE_ETCD_PASSWORD$" \
    ec current --endpoints "$endpoints" "${tls[@]}" --user kp
expect 2 "^keyplace-cli: --password-file needs --user$" \
    ec current --endpoints "$endpoints" "${tls[@]}" --password-file "$work/password"
expect 2 "carries a password and --password-file gives another" \
    ec current --endpoints "$endpoints" "${tls[@]}" --user kp:kppw --password-file "$work/password"
expect 2 "^keyplace-cli: --endpoints: endpoint '' of 'https://127.0.0.1:1,,https://127.0.0.1:2' is not an http:// or https:// URL$" \
    ec current --endpoints "https://127.0.0.1:1,,https://127.0.0.1:2" "${tls[@]}" --user kp:kppw
expect 1 "^keyplace-cli: cannot read --cacert file '$work/none.pem': No such file or directory$" \
    ec current --endpoints "$endpoints" --cacert "$work/none.pem" --user kp:kppw

# Refusals by etcd: exit 1, one line saying why.
expect 1 "^keyplace-cli: etcd https://127.0.0.1:[0-9]+/v3/auth/authenticate: .*no client certificate was given.*no endpoint of 3 answered" \
    ec current --endpoints "$endpoints" --cacert "$fixture/tls/ca.pem" --user kp:kppw
expect 1 "user name is empty .*give a user and password" ec current --endpoints "$endpoints" "${tls[@]}"
expect 1 "^keyplace-cli: etcd: authentication of user 'kp' failed: .*invalid user ID or password" \
    ec current --endpoints "$endpoints" "${tls[@]}" --user kp:wrong
expect 1 "permission denied \(user 'outsider'\)" \
    ec current --endpoints "$endpoints" "${tls[@]}" --user outsider:outsiderpw
expect 1 "SSL certificate problem" \
    ec current --endpoints "$endpoints" --cacert "$fixture/tls/other-ca.pem" --cert "$fixture/tls/client.pem" \
    --key "$fixture/tls/client-key.pem" --user kp:kppw

# A watcher (password from the variable), a publisher past a dead first endpoint (password from
# a file), current and status (password on the command line).
KEYPLACE_ETCD_PASSWORD=kppw "$cli" etcd watch --cluster "$cluster" --endpoints "$endpoints" "${tls[@]}" \
    --user kp --client-id w1 --count 2 >"$work/w1.out" 2>"$work/w1.err" &
pids+=($!)
watcher=$!
ec publish "$work/s1.json" --endpoints "https://127.0.0.1:1,$endpoints" "${tls[@]}" --user kp \
    --password-file "$work/password" >"$work/p1.out" 2>"$work/p1.err" || fail "publish epoch 1"
grep -q "^published epoch 1 " "$work/p1.out" || fail "publish epoch 1 output"
until_true 30 grep -q "^epoch 1 " "$work/w1.out" || fail "the watcher did not adopt epoch 1"
reports() { ec status --endpoints "$endpoints" "${tls[@]}" --user kp:kppw --json 2>/dev/null | grep -q '"id":"w1"'; }
until_true 30 reports || fail "the watcher's report is not in etcd status"
ec publish "$work/s2.json" --endpoints "$endpoints" "${tls[@]}" --user kp:kppw >"$work/p2.out" 2>"$work/p2.err" ||
    fail "publish epoch 2"
rc=0
wait "$watcher" || rc=$?
[[ $rc -eq 0 ]] || fail "etcd watch --count 2 exited $rc"
[[ $(awk '{ print $2 }' "$work/w1.out" | tr '\n' ' ') == "1 2 " ]] || fail "the watcher's epochs"
ec current --endpoints "$endpoints" "${tls[@]}" --user kp:kppw >"$work/current.out" || fail "etcd current"
grep -q "^epoch 2 fingerprint [0-9a-f]\{32\}$" "$work/current.out" || fail "etcd current's output"
ec status --endpoints "$endpoints" "${tls[@]}" --user kp:kppw >"$work/status.out" || fail "etcd status"
grep -q "current epoch 2" "$work/status.out" || fail "etcd status's output"
echo "cli_secure_test: ok"
