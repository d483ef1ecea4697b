#!/usr/bin/env python3
"""ctest fleet.bad_input: each bad command line is refused before any server starts, with the
status given, nothing on stdout and exactly the one stderr line given (the value named, cut to 40
bytes); a lost output is status 1. No memcached needed."""
import subprocess
import sys

fleet = sys.argv[1]
strategies = "modulo, ring, rendezvous, jump, maglev, ketama, bounded"
cases = [
    (["--bogus"], 2, "unknown option '--bogus' (--help lists them)"),
    (["--alphas", "2x"], 2, "--alphas '2x': expected a number in 0.10..3.00"),
    (["--alphas", "3.5"], 2, "--alphas '3.5': expected a number in 0.10..3.00"),
    (["--strategies", "ring,bogus"], 2, "--strategies 'bogus': not one of " + strategies),
    (["--rules", "none,later"], 2, "--rules 'later': not one of none, write-set, flush"),
    (["--keys"], 2, "--keys needs a value (N)"),
    (["--keys", "0"], 2, "--keys '0': expected a whole number in 100..10000000"),
    (["--window", "x"], 2, "--window 'x': expected a whole number in 100..10000000"),
    (["--clients", "9"], 2, "--clients '9': expected a whole number in 1..8"),
    (["--clients", "2"], 2, "--clients 2 needs --etcd URL or --etcd start"),
    (["--etcd", "localhost:2379"], 2, "--etcd 'localhost:2379': expected 'start' or http://IPV4:PORT"),
    (["--etcd", "http://127.0.0.1:99999"], 2, "--etcd 'http://127.0.0.1:99999': expected 'start' or http://IPV4:PORT"),
    (["--etcd", "start"], 2, "--etcd, --late-ms and --no-barrier are for several clients: add --clients N (2..8)"),
    (["--no-barrier"], 2, "--etcd, --late-ms and --no-barrier are for several clients: add --clients N (2..8)"),
    (["--late-ms", "20000"], 2, "--late-ms '20000': expected a whole number in 0..10000"),
    (["--clients", "2", "--etcd", "start", "--lag", "5"], 2,
     "--lag is for one client; with --clients the last client is late by --late-ms"),
    (["--clients", "2", "--etcd", "start", "--svg", "t.svg"], 2, "--svg draws the one-client run, not --clients"),
    (["--strategies", "r" * 100], 2, "--strategies '" + "r" * 40 + "...': not one of " + strategies),
]
failures = []
for args, status, line in cases:
    run = subprocess.run([fleet] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    want = "keyplace-fleet: " + line + "\n"
    if run.returncode != status or run.stdout != "" or run.stderr != want:
        failures.append(f"{args}: status {run.returncode}, stdout {run.stdout!r}, stderr {run.stderr!r}; want {status}, {want!r}")
# A write error is an error: the cascade report to a full device.
with open("/dev/full", "w") as full:
    run = subprocess.run([fleet, "--cascade"], stdout=full, stderr=subprocess.PIPE, text=True)
if run.returncode != 1 or run.stderr != "keyplace-fleet: cannot write the output\n":
    failures.append(f"--cascade >/dev/full: status {run.returncode}, stderr {run.stderr!r}")
for f in failures:
    print("FAIL: " + f)
sys.exit(1 if failures else 0)
