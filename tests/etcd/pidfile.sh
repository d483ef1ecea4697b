# Sourced by the etcd fixture scripts (POSIX sh).
# stop_pidfile FILE [SIGNAL]: sends SIGNAL (TERM) to the process whose pid FILE holds, waits for it
# to exit (SIGKILL after 10 s), and removes FILE.
stop_pidfile() {
  if [ -f "$1" ]; then
    pid=$(cat "$1")
    if kill -0 "$pid" 2>/dev/null; then
      kill "-${2:-TERM}" "$pid" 2>/dev/null || true
      i=0
      while kill -0 "$pid" 2>/dev/null; do
        i=$((i + 1))
        if [ "$i" -gt 100 ]; then kill -9 "$pid" 2>/dev/null || true; fi
        sleep 0.1
      done
    fi
    rm -f "$1"
  fi
}
