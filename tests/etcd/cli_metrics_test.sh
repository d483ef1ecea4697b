#!/usr/bin/env bash
# keyplace-cli etcd watch --metrics on a real etcd, scraped by a real Prometheus on loopback: the
# page passes promtool, and Prometheus's HTTP API answers the member count and the epoch the
# watcher adopted, before and after a publish.
#   cli_metrics_test.sh KEYPLACE_CLI FIXTURE_DIR
# FIXTURE_DIR is tests/etcd/etcd_server.sh's. Exits 77 (skipped) when etcd or prometheus is not
# installed. Every wait is a poll with a generous deadline; Prometheus is stopped by its pid.
set -euo pipefail

cli=$1
fixture=$2
# shellcheck source=cli_test_lib.sh
source "$(dirname "$0")/cli_test_lib.sh"
endpoint=$(fixture_endpoint "$fixture") || exit $?
for tool in prometheus promtool curl python3; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "$tool is not installed (Debian: apt-get install prometheus curl python3): skipped" >&2
        exit 77
    fi
done
cluster="cli-metrics-$$-$RANDOM"
etcd_cli() { "$cli" etcd "$1" --endpoints "$endpoint" --cluster "$cluster" "${@:2}"; }
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

"$cli" snapshot create --strategy maglev --nodes a@eu/z1,b@eu/z1,c@eu/z2 --cluster "$cluster" >"$work/s1.json"
"$cli" snapshot create --strategy maglev --nodes a@eu/z1,b@eu/z1,c@eu/z2,d@eu/z2 --cluster "$cluster" \
    --epoch 2 >"$work/s2.json"
etcd_cli publish "$work/s1.json" >/dev/null

# (a) A watcher serving /metrics on a free port it picks and names on stderr.
"$cli" etcd watch --endpoints "$endpoint" --cluster "$cluster" --client-id metrics --metrics 127.0.0.1:0 \
    >"$work/watch.out" 2>"$work/watch.err" &
pids+=($!)
serving() { grep -q "^keyplace-cli: serving metrics on http://127.0.0.1:[0-9]*/metrics\$" "$work/watch.err"; }
until_true 30 serving || fail "the watcher did not say where it serves metrics"
port=$(sed -n 's|^keyplace-cli: serving metrics on http://127.0.0.1:\([0-9]*\)/metrics$|\1|p' "$work/watch.err")
adopted() { grep -q "^epoch $1 " "$work/watch.out"; }
until_true 30 adopted 1 || fail "the watcher did not adopt epoch 1"

# (b) The page is Prometheus text that promtool accepts with nothing to say.
curl -sf "http://127.0.0.1:$port/metrics" >"$work/page.prom" || fail "GET /metrics failed"
grep -q "^keyplace_watcher_epoch{cluster=\"$cluster\"} 1\$" "$work/page.prom" || fail "no epoch 1 on the page"
promtool check metrics <"$work/page.prom" >"$work/promtool.out" 2>&1 || fail "promtool refused the page"
[[ ! -s "$work/promtool.out" ]] || fail "promtool: $(cat "$work/promtool.out")"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/other")
[[ "$code" == 404 ]] || fail "GET /other answered $code, not 404"
# A second watcher on the same port: one line naming the address, exit 1 (httplib would share the
# port through SO_REUSEPORT; timeout ends a watcher that wrongly starts).
status=0
timeout 30 "$cli" etcd watch --endpoints "$endpoint" --cluster "$cluster" --client-id second --metrics "127.0.0.1:$port" \
    >"$work/second.out" 2>"$work/second.err" || status=$?
[[ $status == 1 ]] || fail "a watcher on a port in use exited $status, not 1"
[[ "$(cat "$work/second.err")" == "keyplace-cli: --metrics: cannot listen on '127.0.0.1:$port' (in use, or not an address of this machine)" ]] ||
    fail "a watcher on a port in use said: $(cat "$work/second.err")"

# (c) Prometheus on a free port, scraping the watcher every second, its data in the work directory.
prom_port=$(free_port)
cat >"$work/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: keyplace
    static_configs:
      - targets: ['127.0.0.1:$port']
YAML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
    --web.listen-address="127.0.0.1:$prom_port" >"$work/prometheus.out" 2>"$work/prometheus.err" &
prom_pid=$!
pids+=("$prom_pid")
ready() { curl -sf "http://127.0.0.1:$prom_port/-/ready" >/dev/null 2>&1; }
until_true 60 ready || fail "prometheus did not become ready on 127.0.0.1:$prom_port"
# query EXPR: the value of the instant query's first sample, or nothing.
query() {
    curl -sf --get --data-urlencode "query=$1" "http://127.0.0.1:$prom_port/api/v1/query" |
        python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}
answers() { [[ "$(query "$1")" == "$2" ]]; }
until_true 60 answers "up{job=\"keyplace\"}" 1 || fail "prometheus does not scrape the watcher (up: $(query up))"
until_true 30 answers "keyplace_watcher_epoch{cluster=\"$cluster\"}" 1 || fail "epoch $(query keyplace_watcher_epoch), not 1"
answers "sum(keyplace_members{cluster=\"$cluster\"})" 3 || fail "members $(query "sum(keyplace_members)"), not 3"
answers "count(keyplace_ownership_ratio{cluster=\"$cluster\"})" 3 || fail "not 3 ownership series"

# (d) A publish: the watcher adopts epoch 2, and Prometheus sees 4 members and the new epoch.
etcd_cli publish "$work/s2.json" >/dev/null
until_true 30 adopted 2 || fail "the watcher did not adopt epoch 2"
until_true 30 answers "keyplace_watcher_epoch{cluster=\"$cluster\"}" 2 || fail "epoch $(query keyplace_watcher_epoch), not 2"
until_true 30 answers "sum(keyplace_members{cluster=\"$cluster\",state=\"active\"})" 4 ||
    fail "members $(query "sum(keyplace_members)"), not 4"
answers "keyplace_snapshot_epoch{cluster=\"$cluster\"}" 2 || fail "snapshot epoch $(query keyplace_snapshot_epoch), not 2"
answers "keyplace_watcher_adopted_total{cluster=\"$cluster\"}" 2 || fail "adopted $(query keyplace_watcher_adopted_total), not 2"
# Maglev's exact shares of 4 equal nodes: each within 1e-4 of a quarter, summing to 1.
sum=$(query "sum(keyplace_ownership_ratio{cluster=\"$cluster\"})")
python3 -c "import sys; sys.exit(0 if abs(float('$sum') - 1) < 1e-12 else 1)" || fail "the shares sum to $sum"
far=$(query "count(abs(keyplace_ownership_ratio{cluster=\"$cluster\"} - 0.25) > 0.0001)")
[[ -z "$far" ]] || fail "$far shares are more than 1e-4 from 0.25"

kill -TERM "$prom_pid"
wait "$prom_pid" 2>/dev/null || true
echo "ok: prometheus on 127.0.0.1:$prom_port scraped the watcher on 127.0.0.1:$port through epochs 1 and 2"
