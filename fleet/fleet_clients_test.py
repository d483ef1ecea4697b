#!/usr/bin/env python3
"""ctest fleet.clients: keyplace-fleet with three client processes following membership through an
etcd it starts itself, the last client made late by a relay that holds every byte etcd sends it
for 40 ms (doc/fleet.md, "Several clients through etcd"). Asserts only facts that hold whatever the
timing noise; exits 77 (skip) without memcached or etcd, as keyplace-fleet itself does."""
import socket
import subprocess
import sys

from fleet_run import check_gone, run_json

fleet = sys.argv[1]
late_ms = 40
args = [fleet, "--quiet", "--json", "-", "--clients", "3", "--etcd", "start", "--late-ms", str(late_ms),
        "--alphas", "0.99", "--keys", "10000", "--window", "2000", "--steady", "2", "--phase", "4",
        "--strategies", "ring,modulo", "--rules", "none,write-set"]
doc, stderr = run_json(args)
failures = []
if stderr:  # --quiet: a line here is a client's or a sanitizer's complaint
    failures.append(f"stderr: {stderr.strip()[:2000]}")

# Every process this run started is gone: the servers, etcd, each arm's clients.
for s in doc["servers"]:
    check_gone(s["pid"], f"memcached on port {s['port']}", failures)
check_gone(doc["etcd_pid"], "etcd", failures)
for arm in doc["arms"]:
    for c in arm["clients"]:
        check_gone(c["pid"], f"{arm['strategy']}/{arm['rule']} {c['id']}", failures)

if len(doc["arms"]) != 4:
    failures.append(f"{len(doc['arms'])} arms, not 4 (ring and modulo under none and write-set)")
for arm in doc["arms"]:
    name = f"{arm['strategy']}/{arm['rule']}"
    late = [c for c in arm["clients"] if c["late"]]
    if len(arm["clients"]) != 3 or len(late) != 1 or late[0]["id"] != "client-2":
        failures.append(f"{name}: clients {[c['id'] for c in arm['clients']]}, late {[c['id'] for c in late]}")
        continue
    late = late[0]
    # The relay holds everything etcd sends the late client for 40 ms, so it cannot serve an epoch
    # sooner than that after its publish began, and it keeps sending requests meanwhile.
    for epoch, ms in late["adoption_ms"].items():
        if ms is not None and ms < late_ms:
            failures.append(f"{name}: the late client served epoch {epoch} {ms} ms after its publish, under {late_ms}")
    for ev, x in late["events"].items():
        if x["old_epoch_requests"] == 0:
            failures.append(f"{name}: the late client sent no request on an old epoch after the {ev}")
    if arm["rule"] == "write-set":
        # The barrier: an event's completing epoch is published only once every client reports its
        # transition epoch, so every client served each transition epoch (2, 4, 6) ...
        for c in arm["clients"]:
            for epoch in ("2", "4", "6"):
                if c["adoption_ms"][epoch] is None:
                    failures.append(f"{name}: {c['id']} never served the transition epoch {epoch}")
        # ... and, with invalidations to the write set, no read anywhere returned a stale value.
        if arm["stale_hits"] != 0:
            failures.append(f"{name}: {arm['stale_hits']} stale hits with write-set invalidation and the barrier")
    elif arm["strategy"] == "ring" and arm["stale_hits"] == 0:
        # Without invalidation of old owners the rejoining node serves the values it held (as with
        # one client), whatever the timing.
        failures.append(f"{name}: no stale hit without invalidation of old owners")

# Hot keys across processes: each client observes its requests in its own keyplace::hot_keys
# summary and serializes it; the coordinator parses the bytes and merges them, and counts every
# client's requests exactly. The same bounds as the one-client run (fleet_test.py): every count
# within [lower, upper] (always), at most 10% of the estimates beyond the error bound (each with
# probability at most e^-4), and at least 9 of the true top 10 detected. The observed requests
# are the clients' windows' gets and sets together, at least the gets.
for arm in doc["arms"]:
    name = f"{arm['strategy']}/{arm['rule']}"
    h = arm.get("hot_keys")
    if h is None:
        failures.append(f"{name}: no hot_keys in the report")
        continue
    listed = h["detected"] + h["true_top"]
    for k in listed:
        if not (k["lower"] <= k["true"] <= k["upper"]):
            failures.append(f"{name}: hot key {k['key']} has true count {k['true']} outside [{k['lower']}, {k['upper']}]")
    over = sum(1 for k in listed if k["upper"] - k["true"] > h["error_bound"])
    if over > len(listed) // 10:
        failures.append(f"{name}: {over} of {len(listed)} hot-key estimates exceed the truth by more than {h['error_bound']}")
    if len(h["detected"]) != 10 or len(h["true_top"]) != 10 or h["true_top_detected"] < 9:
        failures.append(f"{name}: {h['true_top_detected']} of the true top {len(h['true_top'])} hot keys detected "
                        f"in {len(h['detected'])}, below 9 of 10")
    gets = sum(w["gets"] for c in arm["clients"] for w in c["windows"])
    if h["requests"] < gets:
        failures.append(f"{name}: the merged summary observed {h['requests']} requests, fewer than the clients' {gets} gets")

# An etcd that does not answer: one line naming the endpoint, status 1, every server stopped.
s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
s.close()
run = subprocess.run([fleet, "--quiet", "--clients", "2", "--etcd", f"http://127.0.0.1:{port}", "--keys", "1000"],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
want = f"keyplace-fleet: etcd at http://127.0.0.1:{port} does not answer"
if run.returncode != 1 or not run.stderr.startswith(want) or run.stderr.count("\n") != 1 or run.stdout:
    failures.append(f"unreachable etcd: status {run.returncode}, stderr {run.stderr!r}")

for f in failures:
    print("FAIL: " + f)
sys.exit(1 if failures else 0)
