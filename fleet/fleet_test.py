#!/usr/bin/env python3
"""ctest fleet.short_arm: one short run of keyplace-fleet on its own memcached servers, asserting
only facts that hold whatever the noise (doc/fleet.md, "A real cache fleet"). Exit 77 (skip) without
memcached, as keyplace-fleet itself does."""
import sys

from fleet_run import check_gone, run_json

fleet = sys.argv[1]
args = [fleet, "--quiet", "--json", "-", "--alphas", "0.99", "--keys", "10000", "--window", "1000",
        "--steady", "2", "--phase", "4", "--rules", "none,write-set",
        "--strategies", "modulo,ring,rendezvous,jump,maglev,ketama,bounded,jumpback,multiprobe,anchor,memento"]
doc, _ = run_json(args)
failures = []

# Every server this run started is gone: kill(pid, 0) finds no such process.
for s in doc["servers"]:
    check_gone(s["pid"], f"memcached on port {s['port']}", failures)

arms = {(a["strategy"], a["rule"], a["alpha"]): a for a in doc["arms"]}
for alpha in ("0.99",):
    # Modulo keeps about a quarter of the mass on 3 -> 4, a consistent scheme about three quarters:
    # its misses over the control are (1 - 0.25) / (1 - 0.75) = 3 times the ring's in an ideal
    # fully warm cache; refills shrink both, and the measured ratio is well above 3 (README).
    mod = arms[("modulo", "none", alpha)]["events"]["join"]["extra_db_reads"]
    ring = arms[("ring", "none", alpha)]["events"]["join"]["extra_db_reads"]
    if not mod > 3 * ring:
        failures.append(f"alpha {alpha}: modulo's extra DB reads {mod} are not > 3 x the ring's {ring}")
    # Consistent schemes keep at least 65% of the mass on the join: ideal 75%. Counted by key (over
    # 10^4 keys the sampling deviation is 0.004, the ring's 160 vnodes at 4 nodes about 0.05):
    # request-weighted, alpha 0.99's hottest key alone carries about 10% of the requests here, so where
    # the few hottest keys land moves that figure by more than 10 points (jump keeps 0.646 of the
    # requests at seed 1, 0.75 of the keys); the README reports both.
    # jumpback, multiprobe, anchor and memento come from the strategy table like the others: the
    # same bound (each moves only the joiner's share, 1/4 in expectation).
    for s in ("ring", "rendezvous", "jump", "maglev", "ketama", "bounded", "jumpback", "multiprobe", "anchor",
              "memento"):
        kept = arms[(s, "none", alpha)]["events"]["join"]["kept_keys_predicted"]
        if not kept >= 0.65:
            failures.append(f"alpha {alpha}: {s} keeps {kept} of the keys on the join, below 0.65")
    # Invalidations to the write set (current and previous owners) leave no stale value anywhere.
    for (s, rule, a), arm in arms.items():
        if rule == "write-set" and a == alpha:
            stale = sum(w["stale_hits"] for w in arm["windows"])
            if stale != 0:
                failures.append(f"alpha {alpha}: {s} with write-set invalidation served {stale} stale hits")
    # The failure the arithmetic misses is real: a node that takes keys back serves old values.
    stale_none = sum(w["stale_hits"] for w in arms[("ring", "none", alpha)]["windows"])
    if stale_none == 0:
        failures.append(f"alpha {alpha}: the ring without invalidation of old owners served no stale hit on rejoin")

# Hot keys: every arm observes each request's key in a keyplace::hot_keys summary (k = 64, 4 x 4096)
# and counts it exactly. Always: every reported count lies in [lower, upper] (the sketch never
# underestimates, a candidate's lower count never overestimates). Probabilistic: an estimate exceeds
# its truth by more than error_bound with probability at most e^-4 = 1.8% a key; at most 10% of the
# 20 keys reported may (none did here). Recall of the true top 10 in the detected top 10: the issue
# asks >= 0.9. The arms of one popularity and seed make the same requests, so report the same keys.
by_stream = {}
for (s, rule, a), arm in arms.items():
    h = arm["hot_keys"]
    listed = h["detected"] + h["true_top"]
    for k in listed:
        if not (k["lower"] <= k["true"] <= k["upper"]):
            failures.append(f"{s}/{rule}: hot key {k['key']} has true count {k['true']} outside "
                            f"[{k['lower']}, {k['upper']}]")
    over = sum(1 for k in listed if k["upper"] - k["true"] > h["error_bound"])
    if over > len(listed) // 10:
        failures.append(f"{s}/{rule}: {over} of {len(listed)} hot-key estimates exceed the truth by more than "
                        f"{h['error_bound']}")
    if len(h["detected"]) != 10 or len(h["true_top"]) != 10 or h["true_top_detected"] < 9:
        failures.append(f"{s}/{rule}: {h['true_top_detected']} of the true top {len(h['true_top'])} hot keys "
                        f"detected in {len(h['detected'])}, below 9 of 10")
    if h["requests"] < sum(k["true"] for k in h["true_top"]):
        failures.append(f"{s}/{rule}: the true top 10 count more than the {h['requests']} requests observed")
    by_stream.setdefault(a, set()).add(tuple(k["key"] for k in h["true_top"]))
for a, tops in by_stream.items():
    if len(tops) != 1:
        failures.append(f"alpha {a}: arms of one stream report different true top 10s: {sorted(tops)[:2]}")

for f in failures:
    print("FAIL: " + f)
sys.exit(1 if failures else 0)
