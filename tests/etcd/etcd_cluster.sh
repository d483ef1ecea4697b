#!/bin/sh
# A secured 3-member etcd on loopback for the keyplace::etcd tests: TLS between clients and
# members and between members (certificates made here with openssl), client certificates
# required (--client-cert-auth), and etcd authentication on (root, and a user with a role).
#   etcd_cluster.sh start DIR [TOKEN_TTL]  makes DIR/tls, picks six free ports, starts the members
#                            (data in DIR/m0..m2), waits until all are healthy, adds the users,
#                            enables auth; writes DIR/endpoints (URL,URL,URL), DIR/m<N>/endpoint
#                            and DIR/m<N>/pid. TOKEN_TTL: --auth-token-ttl in seconds (300).
#   etcd_cluster.sh stop DIR         kills every member by pid, waits for it to exit, removes the
#                                    endpoint files (so the tests skip rather than fail after it)
#   etcd_cluster.sh leader DIR       prints the index (0..2) of the current leader
#   etcd_cluster.sh kill DIR N       kills member N (SIGKILL, by pid)
#   etcd_cluster.sh restart DIR N    starts member N again on its ports and data, waits until healthy
# Users: root (password rootpw), kp (password kppw; role keyplace: readwrite on /keyplace/),
# outsider (password outsiderpw; no role). TLS files: DIR/tls/ca.pem, client.pem, client-key.pem,
# and other-ca.pem (a CA that signed nothing here).
# Exits 77 (ctest: skipped) when etcd, etcdctl or openssl is not installed.
set -eu
cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop|leader|kill|restart DIR [N|TOKEN_TTL]" >&2
  exit 2
fi
ETCD=${ETCD:-$(command -v etcd || true)}
ETCDCTL=${ETCDCTL:-$(command -v etcdctl || true)}
OPENSSL=$(command -v openssl || true)

free_ports() {  # six distinct free ports, in one interpreter (a start each costs a second under load)
  python3 -c '
import socket
socks = [socket.socket() for _ in range(6)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
'
}

tls="$dir/tls"
ctl() {
  ETCDCTL_API=3 "$ETCDCTL" --endpoints "$(cat "$dir/endpoints")" --cacert "$tls/ca.pem" \
    --cert "$tls/client.pem" --key "$tls/client-key.pem" --command-timeout 5s "$@"
}

healthy() {  # healthy N: member N answers /health
  curl -s --max-time 1 --cacert "$tls/ca.pem" --cert "$tls/client.pem" --key "$tls/client-key.pem" \
    "$(cat "$dir/m$1/endpoint")/health" 2>/dev/null | grep -q '"health":"true"'
}

make_certs() {
  mkdir -p "$tls"
  (
    cd "$tls"
    "$OPENSSL" req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj "/CN=keyplace test CA" \
      -keyout ca-key.pem -out ca.pem 2>/dev/null
    "$OPENSSL" req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj "/CN=another CA" \
      -keyout other-ca-key.pem -out other-ca.pem 2>/dev/null
    # Members present server.pem to clients and to each other (and etcd's gateway dials its own
    # gRPC server with it): both usages.
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n' >server.ext
    "$OPENSSL" req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=etcd member" -keyout server-key.pem -out server.csr 2>/dev/null
    "$OPENSSL" x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 2 \
      -extfile server.ext -out server.pem 2>/dev/null
    # With --client-cert-auth, etcd 3.4's JSON gateway answers 400 to a client certificate that
    # has a CommonName (it would not be used as the user name): the client's subject has none.
    printf 'extendedKeyUsage=clientAuth\n' >client.ext
    "$OPENSSL" req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/O=keyplace client" -keyout client-key.pem -out client.csr 2>/dev/null
    "$OPENSSL" x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 2 \
      -extfile client.ext -out client.pem 2>/dev/null
  )
}

start_member() {  # start_member N: ports and the initial cluster come from DIR
  n=$1
  read -r client peer <"$dir/m$n/ports"
  "$ETCD" --name "m$n" --data-dir "$dir/m$n/data" \
    --listen-client-urls "https://127.0.0.1:$client" --advertise-client-urls "https://127.0.0.1:$client" \
    --listen-peer-urls "https://127.0.0.1:$peer" --initial-advertise-peer-urls "https://127.0.0.1:$peer" \
    --initial-cluster "$(cat "$dir/initial-cluster")" --initial-cluster-state new \
    --initial-cluster-token "keyplace-$$" \
    --cert-file "$tls/server.pem" --key-file "$tls/server-key.pem" \
    --trusted-ca-file "$tls/ca.pem" --client-cert-auth \
    --peer-cert-file "$tls/server.pem" --peer-key-file "$tls/server-key.pem" \
    --peer-trusted-ca-file "$tls/ca.pem" --peer-client-cert-auth \
    --auth-token-ttl "$(cat "$dir/token-ttl")" \
    --heartbeat-interval 50 --election-timeout 500 \
    --logger zap --log-outputs stderr --log-level warn \
    >>"$dir/m$n/etcd.log" 2>&1 </dev/null &
  echo $! >"$dir/m$n/pid"
}

wait_healthy() {  # wait_healthy N
  i=0
  until healthy "$1"; do
    i=$((i + 1))
    if ! kill -0 "$(cat "$dir/m$1/pid")" 2>/dev/null || [ "$i" -gt 200 ]; then
      echo "etcd_cluster.sh: member m$1 did not become healthy; its log:" >&2
      tail -20 "$dir/m$1/etcd.log" >&2
      return 1
    fi
    sleep 0.1
  done
}

# shellcheck source=pidfile.sh
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
. "$here/pidfile.sh"
stop_member() {  # stop_member N [SIGNAL]
  stop_pidfile "$dir/m$1/pid" "${2:-TERM}"
}

do_stop() {
  for n in 0 1 2; do stop_member "$n"; done
  # Without endpoints the tests skip (77) rather than fail against members that are gone.
  rm -f "$dir/endpoints" "$dir"/m*/endpoint
}

do_start() {
  for tool in "$ETCD:etcd" "$ETCDCTL:etcdctl" "$OPENSSL:openssl"; do
    if [ -z "${tool%%:*}" ]; then
      echo "etcd_cluster.sh: ${tool#*:} is not installed (Debian: apt-get install etcd-server etcd-client openssl); skipping" >&2
      exit 77
    fi
  done
  do_stop
  rm -rf "$dir"
  mkdir -p "$dir"
  echo "${1:-300}" >"$dir/token-ttl"
  make_certs
  initial=""
  endpoints=""
  # shellcheck disable=SC2046
  set -- $(free_ports)
  for n in 0 1 2; do
    mkdir -p "$dir/m$n"
    client=$1
    peer=$2
    shift 2
    echo "$client $peer" >"$dir/m$n/ports"
    echo "https://127.0.0.1:$client" >"$dir/m$n/endpoint"
    initial="$initial${initial:+,}m$n=https://127.0.0.1:$peer"
    endpoints="$endpoints${endpoints:+,}https://127.0.0.1:$client"
  done
  echo "$initial" >"$dir/initial-cluster"
  echo "$endpoints" >"$dir/endpoints"
  for n in 0 1 2; do start_member "$n"; done
  for n in 0 1 2; do wait_healthy "$n" || { do_stop; exit 1; }; done
  {
    ctl user add root:rootpw --interactive=false
    ctl user grant-role root root
    ctl role add keyplace
    ctl role grant-permission keyplace --prefix=true readwrite /keyplace/
    ctl user add kp:kppw --interactive=false
    ctl user grant-role kp keyplace
    ctl user add outsider:outsiderpw --interactive=false
    ctl auth enable
  } >"$dir/setup.log" 2>&1 || {
    echo "etcd_cluster.sh: adding the users failed:" >&2
    cat "$dir/setup.log" >&2
    do_stop
    exit 1
  }
  echo "etcd_cluster.sh: 3 members healthy at $endpoints (TLS, client certificates, auth on)"
}

case "$cmd" in
  start) do_start "${3:-300}" ;;
  stop) do_stop ;;
  leader)
    # The member whose id is the leader etcd reports.
    ctl --user root:rootpw endpoint status -w json | python3 -c '
import json, sys
rows = json.load(sys.stdin)
leaders = {r["Status"]["leader"] for r in rows}
for r in rows:
    if r["Status"]["header"]["member_id"] in leaders:
        print(r["Endpoint"])
        break
' >"$dir/leader-endpoint"
    for n in 0 1 2; do
      if [ "$(cat "$dir/m$n/endpoint")" = "$(cat "$dir/leader-endpoint")" ]; then echo "$n"; exit 0; fi
    done
    echo "etcd_cluster.sh: no leader found" >&2
    exit 1 ;;
  kill) stop_member "${3:?member}" KILL ;;
  restart)
    stop_member "${3:?member}"
    start_member "$3"
    wait_healthy "$3" ;;
  *) echo "usage: $0 start|stop|leader|kill|restart DIR [N|TOKEN_TTL]" >&2; exit 2 ;;
esac
