#!/usr/bin/env python3
"""Independent reference generator for keyplace native rendezvous, contract v1.

Weighted highest random weight, logarithmic method, all integer arithmetic.
Written from the contract text alone (not from the C++ sources) so that the
golden vectors it prints check the C++ implementation independently.

Usage, from the repository root:
    /usr/bin/python3 tests/golden/generate_rendezvous_native.py \
        > tests/golden/rendezvous_native_v1.txt

Needs Python 3.11 and the `xxhash` module (3.x, bundling xxHash 0.8.x).
Output is UTF-8 with '\n' line ends, written as bytes so the locale does not
matter.
"""

import functools
import math
import random
import sys

from contract_v1 import xxh3, le32, le64, llround, quantize, node_hash, U64_MAX

ONE62 = 1 << 62          # 1.0 in the 62-fraction-bit format used by F
FRAC = 1 << 48           # 1.0 in the 48-fraction-bit log2fix result


# --- fixed-point log2 -------------------------------------------------------

def table_f(v: int) -> int:
    """F(v): 48 fraction bits of log2(v / 4096) by repeated squaring."""
    assert 4096 <= v <= 8192
    if v == 8192:
        return FRAC
    x = v << 50  # v / 4096 with 62 fraction bits, in [1, 2)
    r = 0
    for b in range(47, -1, -1):
        x = (x * x) >> 62          # exact product, truncating shift
        if x >= (1 << 63):         # x >= 2.0: halve and emit a one bit
            x >>= 1
            r |= 1 << b
    return r


TABLE = [table_f(v) for v in range(4096, 8193)]  # T[0..4096]


def log2fix(y: int) -> int:
    """log2(y) with 48 fraction bits, for 1 <= y <= 2^64 (2^64 special)."""
    if y == 1 << 64:
        return 64 * FRAC
    assert 1 <= y <= U64_MAX
    e = y.bit_length() - 1                 # index of the highest set bit
    m = (y << (63 - e)) & U64_MAX          # normalised: top bit set
    i = (m >> 51) & 0xFFF                  # 12 bits after the leading one
    t = (m >> 27) & 0xFFFFFF               # next 24 bits: interpolation
    return e * FRAC + TABLE[i] + (((TABLE[i + 1] - TABLE[i]) * t) >> 24)


# --- rendezvous -------------------------------------------------------------

class Rendezvous:
    def __init__(self, nodes: list[tuple[bytes, float]]):
        ids = [i for i, _ in nodes]
        assert nodes and all(ids), "empty node set or empty id"
        assert len(set(ids)) == len(ids), "duplicate id"
        for _, w in nodes:
            assert isinstance(w, float) and math.isfinite(w) and w > 0.0
        # Node index = position after sorting by id bytes (Python compares
        # bytes as unsigned bytes, a proper prefix first).
        self.nodes = sorted(nodes, key=lambda n: n[0])
        self.seeds = [node_hash(nid, 0) for nid, _ in self.nodes]
        self.q = [quantize(w) for _, w in self.nodes]

    def scores(self, k: int) -> list[int]:
        """E_i for every node index i, for key point k."""
        out = []
        for s in self.seeds:
            h = xxh3(le64(k) + le64(s))
            y = (1 << 64) - h              # in [1, 2^64]
            out.append(64 * FRAC - log2fix(y))
        return out

    def ranking(self, k: int) -> list[int]:
        """All node indices, best (smallest E/q, then smaller index) first."""
        e = self.scores(k)
        q = self.q

        def cmp(a: int, b: int) -> int:
            lhs, rhs = e[a] * q[b], e[b] * q[a]   # exact cross products
            if lhs != rhs:
                return -1 if lhs < rhs else 1
            return -1 if a < b else (1 if a > b else 0)

        return sorted(range(len(self.nodes)), key=functools.cmp_to_key(cmp))

    def pick(self, k: int) -> int:
        e, q = self.scores(k), self.q
        best = 0
        for i in range(1, len(self.nodes)):
            if e[i] * q[best] < e[best] * q[i]:   # strict: ties keep smaller
                best = i
        return best

    def node_id(self, idx: int) -> str:
        return self.nodes[idx][0].decode("utf-8")


def emit_case(out, name, nodes, keys, queries, comment):
    rv = Rendezvous(nodes)
    out.append(f"# case {name}: {comment}")
    out.append(f"case {name}")
    for nid, w in nodes:  # input order, not sorted
        out.append(f"node {nid.decode('utf-8')} {w!r}")
    for idx, (nid, _) in enumerate(rv.nodes):
        out.append(f"seed {idx} {rv.node_id(idx)} {rv.seeds[idx]} "
                   f"{rv.q[idx]}")

    if keys:  # debugging aid: raw scores for the first key
        k0 = xxh3(keys[0])
        es = " ".join(f"{rv.node_id(i)}={e}"
                      for i, e in enumerate(rv.scores(k0)))
        out.append(f"# E_i for key {keys[0].hex() or '-'} (point {k0}): {es}")

    def line(k):
        rank = rv.ranking(k)
        assert rank[0] == rv.pick(k)
        return f"{rv.node_id(rank[0])} " + ",".join(map(rv.node_id, rank))

    for key in keys:
        k = xxh3(key)
        out.append(f"key {key.hex() if key else '-'} {k} {line(k)}")
    for k in queries:
        assert 0 <= k <= U64_MAX
        out.append(f"query {k} {line(k)}")
    out.append("end")
    return rv


def key_range(n):
    return [f"key-{i}".encode() for i in range(n)]


def main():
    out = [
        "# keyplace native rendezvous, contract version 1: golden vectors",
        "# generated by tests/golden/generate_rendezvous_native.py "
        "(independent Python reference)",
        "keyplace-rendezvous-golden 1",
    ]

    # Log2 table: a few entries plus a digest of all 4097.
    T = TABLE
    out.append("# T[0] T[1] T[2] T[2048] T[4095] T[4096]")
    out.append(f"table {T[0]} {T[1]} {T[2]} {T[2048]} {T[4095]} {T[4096]}")
    out.append("# XXH3 of LE64(T[0]) || ... || LE64(T[4096])")
    out.append(f"table_xxh3 {xxh3(b''.join(le64(v) for v in T)):016x}")

    # log2fix at edges, then 20 nonzero values from random.Random(7).
    ys = [1, 2, 3, 4095, 4096, 4097, (1 << 32) - 1, 1 << 32,
          (1 << 52) + 12345, (1 << 63) - 1, 1 << 63, U64_MAX]
    rng = random.Random(7)
    extra = []
    while len(extra) < 20:
        v = rng.getrandbits(64)
        if v != 0:
            extra.append(v)
    out.append("# log2fix y log2fix(y); last 20 from "
               "random.Random(7).getrandbits(64), zeros skipped")
    for y in ys + extra:
        out.append(f"log2fix {y} {log2fix(y)}")

    # 1. three: small, equal weights, input not sorted.
    emit_case(out, "three", [(b"c", 1.0), (b"a", 1.0), (b"b", 1.0)],
              [b"", b"a", b"user:42"] + key_range(20),
              [0, U64_MAX, 1, 12345678901234567890],
              "3 equal nodes, input order c a b")

    # 2. weighted: 0.1 * 65536 = 6553.6 -> q = 6554.
    r = emit_case(out, "weighted",
                  [(b"heavy", 4.0), (b"mid", 2.0), (b"light", 1.0),
                   (b"tiny", 0.1)],
                  key_range(200), [],
                  "weights 4, 2, 1, 0.1 (q of 0.1 is 6554)")
    assert r.q == [262144, 65536, 131072, 6554], r.q  # heavy light mid tiny

    # 3. ids: bytewise sort order, length-prefixed node hashes.
    ids = [b"n1", b"n10", b"n1:0", b"10.0.0.1:11211", b"N1", b"n"]
    r = emit_case(out, "ids", [(i, 1.0) for i in ids], key_range(100), [],
                  "bytewise order is 10.0.0.1:11211 N1 n n1 n10 n1:0")
    assert [n for n, _ in r.nodes] == sorted(ids)

    # 4. twenty: input order node-19 .. node-0.
    emit_case(out, "twenty",
              [(f"node-{i}".encode(), 1.0) for i in range(19, -1, -1)],
              key_range(500), [], "20 equal nodes, input order node-19..node-0")

    # 5. single: the only node always wins.
    emit_case(out, "single", [(b"only", 1.0)], [b"x", b"y"], [0, U64_MAX],
              "one node")

    sys.stdout.buffer.write(("\n".join(out) + "\n").encode("utf-8"))


def self_test():
    # Known XXH3-64 values (xxHash 0.8.x) and node hashes.
    assert xxh3(b"") == 0x2D06800538D394C2
    assert xxh3(b"abc") == 0x78AF5F94892F3950
    assert node_hash(b"a", 0) == 0x98123F6CEC13A4C3
    assert node_hash(b"a", 1) == 0x332D8FDE124825DF
    # llround: halves away from zero, unlike Python's round().
    assert llround(2.5) == 3 and llround(0.5) == 1 and llround(-2.5) == -3
    assert quantize(0.1) == 6554 and quantize(1.0) == 65536
    # Table ends and log2fix at exact powers of two.
    assert TABLE[0] == 0 and TABLE[4096] == FRAC and len(TABLE) == 4097
    assert all(a < b for a, b in zip(TABLE, TABLE[1:]))
    for e in range(64):
        assert log2fix(1 << e) == e * FRAC
    # log2fix tracks the real log2 closely (spot check).
    for y in (3, 5, 1000, 123456789, U64_MAX, (1 << 63) + 1):
        assert abs(log2fix(y) / FRAC - math.log2(y)) < 1e-6, y


if __name__ == "__main__":
    self_test()
    main()
