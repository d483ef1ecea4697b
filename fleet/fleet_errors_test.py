#!/usr/bin/env python3
"""ctest fleet.bad_input: each bad command line is refused before any server starts, with the
status given, nothing on stdout and exactly the one stderr line given (the value named, quoted as
keyplace-cli quotes it: control bytes as \\xNN, cut after 64 bytes); a lost output is status 1,
and a closed stdout is refused before the run. No memcached needed."""
import os
import subprocess
import sys
import tempfile

fleet = sys.argv[1]
# Every strategy whose nodes take no data of their own (doc/fleet.md, "A real cache fleet"), then bounded.
strategies = ("ring, rendezvous, jump, jump-guava, jumpback, maglev, modulo, envoy-ring, envoy-maglev, ketama, "
              "ketama-spy, ketama-unweighted, libketama, hash-ring, multiprobe, mpchash, anchor, memento, bounded")
cases = [
    (["--bogus"], 2, "unknown option '--bogus'"),
    (["--alphas", "2x"], 2, "--alphas '2x': expected a number in 0.10..3.00"),
    (["--alphas", "3.5"], 2, "--alphas '3.5': expected a number in 0.10..3.00"),
    (["--strategies", "ring,bogus"], 2, "--strategies 'bogus': not one of " + strategies),
    (["--rules", "none,later"], 2, "--rules 'later': not one of none, write-set, flush"),
    (["--keys"], 2, "option --keys needs a value"),
    (["--quiet=1"], 2, "option --quiet takes no value"),
    (["stray"], 2, "unexpected argument 'stray'"),
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
    (["--rollout"], 2, "--rollout measures several clients through etcd: add --clients N (2..8) and --etcd"),
    (["--rollout", "--clients", "2"], 2, "--rollout measures several clients through etcd: add --clients N (2..8) and --etcd"),
    (["--rollout", "--clients", "2", "--etcd", "start", "--rules", "write-set"], 2,
     "--rollout runs rule write-set under the barrier: --rules and --no-barrier are for the event run"),
    (["--rollout", "--clients", "2", "--etcd", "start", "--no-barrier"], 2,
     "--rollout runs rule write-set under the barrier: --rules and --no-barrier are for the event run"),
    (["--rollout", "--clients", "2", "--etcd", "start", "--strategies", "ring,maglev"], 2,
     "--strategies 'maglev': --rollout ramps a node's weight, and keeps every write reaching each copy only where "
     "keys move toward it once (ring, rendezvous)"),
    (["--rollout", "--clients", "2", "--etcd", "start", "--strategies", "bounded"], 2,
     "--strategies 'bounded': --rollout ramps a node's weight, and keeps every write reaching each copy only where "
     "keys move toward it once (ring, rendezvous)"),
    (["--strategies", "r" * 100], 2, "--strategies '" + "r" * 64 + "'... (100 bytes): not one of " + strategies),
    # Issue 35: values echoed raw, paths checked after the run, repeats and loose numbers taken.
    (["--alphas", "1\n2"], 2, "--alphas '1\\x0a2': expected a number in 0.10..3.00"),
    (["--bo\ngus"], 2, "unknown option '--bo\\x0agus'"),
    (["--memcached", ""], 2, "--memcached '': not an executable regular file"),
    (["--memcached", "/"], 2, "--memcached '/': not an executable regular file"),
    (["--memcached", "/etc/passwd"], 2, "--memcached '/etc/passwd': not an executable regular file"),
    (["--json", "/nonexistent/dir/fleet.json"], 2,
     "--json '/nonexistent/dir/fleet.json': cannot write: No such file or directory"),
    (["--svg", "/"], 2, "--svg '/': cannot write: Is a directory"),
    (["--json", "same.json", "--svg", "same.json"], 2, "--json and --svg name the same file 'same.json'"),
    (["--keys", "100", "--keys", "200"], 2, "option --keys given twice"),
    (["--quiet", "--quiet"], 2, "option --quiet given twice"),
    (["--seeds", "1,2,1"], 2, "--seeds '1': listed twice"),
    (["--strategies", "ring,ring"], 2, "--strategies 'ring': listed twice"),
    (["--rules", "none,flush,none"], 2, "--rules 'none': listed twice"),
    (["--alphas", "1,1.0"], 2, "--alphas '1.0': listed twice"),
    (["--alphas", "uniform,uniform"], 2, "--alphas 'uniform': listed twice"),
    (["--keys", " 100"], 2, "--keys ' 100': expected a whole number in 100..10000000"),
    (["--keys", "0x100"], 2, "--keys '0x100': expected a whole number in 100..10000000"),
    (["--seeds", "+1"], 2, "--seeds '+1': expected a whole number in 0..4294967295"),
    (["--alphas", " 1"], 2, "--alphas ' 1': expected a number in 0.10..3.00"),
    (["--alphas", "0x1"], 2, "--alphas '0x1': expected a number in 0.10..3.00"),
    (["--prefill", "0x1"], 2, "--prefill '0x1': expected a number in 0.00..1.00"),
    (["--writes", " 0.1"], 2, "--writes ' 0.1': expected a number in 0.00..0.50"),
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
# A refused run leaves no file behind: the output paths are checked, not written, up front.
with tempfile.TemporaryDirectory() as d:
    kept = os.path.join(d, "fleet.json")
    run = subprocess.run([fleet, "--json", kept, "--svg", "/"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if run.returncode != 2 or os.path.exists(kept):
        failures.append(f"--json {kept} --svg /: status {run.returncode}, {kept} exists: {os.path.exists(kept)}")
# A closed stdout (a server's socket would take descriptor 1 and the report with it) is refused
# before any server starts; so is every other command's output, --cascade's and --help's.
for args in (["--strategies", "ring", "--rules", "none"], ["--cascade"], ["--help"]):
    run = subprocess.run(["sh", "-c", 'exec "$0" "$@" >&-', fleet] + args, stderr=subprocess.PIPE, text=True)
    if run.returncode != 1 or run.stderr != "keyplace-fleet: cannot write the output: stdout is closed\n":
        failures.append(f"{args} >&-: status {run.returncode}, stderr {run.stderr!r}")
for f in failures:
    print("FAIL: " + f)
sys.exit(1 if failures else 0)
