#!/bin/sh
# A single-member etcd on loopback for the keyplace::etcd tests.
#   etcd_server.sh start DIR    picks two free ports, starts etcd (data in DIR/data), writes
#                               DIR/endpoint, DIR/ports and DIR/pid, waits until it is healthy
#   etcd_server.sh stop DIR     kills it by pid and waits for it to exit
#   etcd_server.sh restart DIR  stop, then start on the same ports and data dir
# Exits 77 (ctest: skipped) when etcd is not installed.
set -eu
cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop|restart DIR" >&2
  exit 2
fi
ETCD=${ETCD:-$(command -v etcd || true)}
if [ -z "$ETCD" ] && [ -x /usr/bin/etcd ]; then ETCD=/usr/bin/etcd; fi

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

healthy() {
  curl -s --max-time 1 "http://127.0.0.1:$1/health" 2>/dev/null | grep -q '"health":"true"'
}

# shellcheck source=pidfile.sh
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
. "$here/pidfile.sh"
do_stop() {
  stop_pidfile "$dir/pid"
}

do_start() {
  if [ -z "$ETCD" ]; then
    echo "etcd_server.sh: etcd is not installed (Debian: apt-get install etcd-server etcd-client); skipping" >&2
    exit 77
  fi
  mkdir -p "$dir"
  if [ "${1:-}" = same ] && [ -f "$dir/ports" ]; then
    read -r client peer < "$dir/ports"
  else
    client=$(free_port)
    peer=$(free_port)
    while [ "$peer" = "$client" ]; do peer=$(free_port); done
    echo "$client $peer" > "$dir/ports"
  fi
  "$ETCD" --name kp --data-dir "$dir/data" \
    --listen-client-urls "http://127.0.0.1:$client" --advertise-client-urls "http://127.0.0.1:$client" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "kp=http://127.0.0.1:$peer" --initial-cluster-state new \
    --logger zap --log-outputs stderr --log-level warn \
    >>"$dir/etcd.log" 2>&1 </dev/null &
  echo $! > "$dir/pid"
  echo "http://127.0.0.1:$client" > "$dir/endpoint"
  i=0
  until healthy "$client"; do
    i=$((i + 1))
    if ! kill -0 "$(cat "$dir/pid")" 2>/dev/null || [ "$i" -gt 100 ]; then
      echo "etcd_server.sh: etcd did not become healthy on port $client; its log:" >&2
      tail -20 "$dir/etcd.log" >&2
      do_stop
      exit 1
    fi
    sleep 0.1
  done
  echo "etcd_server.sh: etcd (pid $(cat "$dir/pid")) healthy at http://127.0.0.1:$client"
}

case "$cmd" in
  start)
    do_stop
    rm -rf "$dir/data"
    do_start ;;
  stop) do_stop ;;
  restart)
    do_stop
    do_start same ;;
  *) echo "usage: $0 start|stop|restart DIR" >&2; exit 2 ;;
esac
