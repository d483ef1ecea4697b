#!/usr/bin/env python3
"""ctest fleet.rollout: keyplace-fleet --rollout, a short version (doc/fleet.md, "Ramped joins and
rollback, measured"): two client processes through an etcd the run starts, a 3 -> 4 join one-shot
against ramped in 5 steps, a ramp rolled back after 3 steps with and without the invalidations.
The figures are recomputed here from the raw windows (not read from the program's own verdicts):
the ramp's peak per-window extra DB reads <= 1.5 x the one-shot's peak / 5, its total <= 1.1 x the
one-shot's, 0 stale hits under the write-set rule (rollback included), and stale hits where the
rollback's invalidations are left out. Exits 77 (skip) without memcached or etcd."""
import sys

from fleet_run import check_gone, run_json

fleet = sys.argv[1]
# 3000 keys of uniform popularity, 2 x 6000 requests a window, 2 windows after each step. A moved
# key costs one extra DB read when it is first requested again: in a window of 12,000 requests
# 98% of the keys are, so each step's extra reads fall in its first window and the ramp's peak is
# its largest step, against the one-shot's whole move. The ramp's first four steps each move at
# most 1.02 / 5 of the join's share of the hash space, the last the rest; the 3000 keys of one seed split over them unevenly, by about 8% per
# step (the largest of seeds 1-3 is 1.07-1.16 x the mean), which the 1.5 leaves room for. Under
# Zipf 0.99 the tail of earlier steps adds to later ones (doc/fleet.md gives both).
args = [fleet, "--quiet", "--json", "-", "--rollout", "--clients", "2", "--etcd", "start", "--alphas", "uniform",
        "--keys", "3000", "--window", "6000", "--steady", "2", "--phase", "2"]
doc, stderr = run_json(args)
failures = []
if stderr:
    failures.append(f"stderr: {stderr.strip()[:2000]}")

for s in doc["servers"]:
    check_gone(s["pid"], f"memcached on port {s['port']}", failures)
check_gone(doc["etcd_pid"], "etcd", failures)
if len(doc["groups"]) != 1:
    failures.append(f"{len(doc['groups'])} groups, not 1")
steps, steady = doc["ramp_steps"], doc["steady"]
for g in doc["groups"]:
    arms = g["arms"]
    if sorted(arms) != sorted(["control", "one-shot", "ramp", "rollback", "uninvalidated"]):
        failures.append(f"arms {sorted(arms)}")
        continue
    for name, a in arms.items():
        for pid in a["client_pids"]:
            check_gone(pid, f"{name} client", failures)
        if len(a["windows"]) != steady + steps * doc["phase"]:
            failures.append(f"{name}: {len(a['windows'])} windows")
    control = arms["control"]["windows"]

    def extra(name):
        """DB reads per window after the steady ones, over the control's rate per get."""
        out = []
        for w, c in zip(arms[name]["windows"][steady:], control[steady:]):
            out.append(w["db_reads"] - w["gets"] * c["db_reads"] / c["gets"])
        return out

    one, ramp = extra("one-shot"), extra("ramp")
    print(f"one-shot peak {max(one):.1f} total {sum(one):.1f}; ramp peak {max(ramp):.1f} total {sum(ramp):.1f}")
    # The join moved about 28% of the keys: most of them are read again within the run.
    if sum(one) < 0.1 * doc["keys"]:
        failures.append(f"the one-shot join cost {sum(one):.0f} extra DB reads, under 10% of {doc['keys']} keys")
    if max(ramp) > 1.5 * max(one) / steps:
        failures.append(f"ramp peak {max(ramp):.1f} > 1.5 x one-shot peak {max(one):.1f} / {steps}")
    if sum(ramp) > 1.1 * sum(one):
        failures.append(f"ramp total {sum(ramp):.1f} > 1.1 x one-shot total {sum(one):.1f}")
    # The program's own figures agree with these.
    if abs(arms["ramp"]["extra_db_reads_peak"] - max(ramp)) > 0.01 or abs(arms["one-shot"]["extra_db_reads"] - sum(one)) > 0.05:
        failures.append("the report's extra DB reads differ from the windows'")
    for name in ("control", "one-shot", "ramp", "rollback"):
        stale = sum(w["stale_hits"] for w in arms[name]["windows"])
        if stale != 0:
            failures.append(f"{name}: {stale} stale hits under the write-set rule")
    # Without the invalidations the old owners serve what they held before the ramp took their keys.
    if sum(w["stale_hits"] for w in arms["uninvalidated"]["windows"]) == 0:
        failures.append("uninvalidated: no stale hit without the rollback's invalidations")
    # The epochs each arm served: the one-shot 3 from step 1; the ramp 3 (its first epoch, after
    # mc-3 joining) to 7, one per step; the rollbacks back at 7 from step 4.
    want = {"one-shot": [3] * steps, "ramp": [3, 4, 5, 6, 7], "rollback": [3, 4, 5, 7, 7], "uninvalidated": [3, 4, 5, 7, 7]}
    for name, epochs in want.items():
        got = [arms[name]["windows"][steady + i * doc["phase"]]["epoch"] for i in range(steps)]
        if got != epochs:
            failures.append(f"{name}: epochs {got} at the steps' first windows, not {epochs}")

for f in failures:
    print("FAIL: " + f)
sys.exit(1 if failures else 0)
