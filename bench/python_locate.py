#!/usr/bin/env python3
"""Batched lookups from Python against the same lookups in C++, in one process.

usage: PYTHONPATH=build/gcc/python python3 bench/python_locate.py [--keys N] [--repeats R]

The C++ baseline is the module's own loop over std::string keys (_keyplace._cxx_owners_seconds:
the keys copied in before the clock starts, then snapshot_ref::owners_of, the loop locate_many
runs). Each figure is the best of R runs; the ratio is Python's throughput over C++'s.
"""

import argparse
import time

import numpy as np

import keyplace
from keyplace import _keyplace


def best(f, repeats):
    t = 1e300
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - t0)
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    keys = [f"user:{i}" for i in range(a.keys)]
    as_bytes = np.array([k.encode() for k in keys])  # dtype S<width>
    as_str = np.array(keys)  # dtype U<width>
    print(f"{a.keys} keys 'user:<i>', best of {a.repeats}; throughput relative to the C++ loop")
    for strategy, nodes, params in [("ring", 100, {"vnodes": 160}), ("rendezvous", 100, {}),
                                    ("maglev", 100, {"table-size": 65537}), ("jump", 100, {})]:
        s = keyplace.build(strategy, [f"node-{i}" for i in range(nodes)], params=params)
        cxx = _keyplace._cxx_owners_seconds(s._s, keys, a.repeats)
        want = s.locate_many(as_bytes)
        assert (s.locate_many(keys) == want).all() and (s.locate_many(as_str) == want).all()
        rows = [("numpy bytes ('S')", best(lambda: s.locate_many(as_bytes), a.repeats)),
                ("list of str", best(lambda: s.locate_many(keys), a.repeats)),
                ("numpy str ('U')", best(lambda: s.locate_many(as_str), a.repeats))]
        print(f"{strategy:10} {nodes} nodes: C++ {a.keys / cxx / 1e6:6.2f} M keys/s")
        for name, t in rows:
            print(f"    {name:18} {a.keys / t / 1e6:6.2f} M keys/s  {cxx / t:5.2f} x C++")


if __name__ == "__main__":
    main()
