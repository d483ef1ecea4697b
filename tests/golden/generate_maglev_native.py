#!/usr/bin/env python3
"""Independent reference generator for keyplace native Maglev, contract v1.

Maglev lookup table (Eisenbud et al., NSDI 2016) populated in integer
weighted rounds. Written from the contract text alone (not from the C++
sources) so that the golden vectors it prints check the C++ implementation
independently.

Usage, from the repository root:
    /usr/bin/python3 tests/golden/generate_maglev_native.py \
        > tests/golden/maglev_native_v1.txt

Needs Python 3.11 and the `xxhash` module (3.x, bundling xxHash 0.8.x).
Output is UTF-8 with '\n' line ends, written as bytes so the locale does not
matter. Takes a few seconds (the `large` table has 655373 slots).
"""

import math
import random
import sys

from contract_v1 import xxh3, le32, llround, quantize, node_hash, U64_MAX

FULL_TABLE_MAX = 257  # print every entry only for tables this small


def is_prime(n: int) -> bool:
    if n < 2:
        return False
    return all(n % d for d in range(2, math.isqrt(n) + 1))


class Maglev:
    def __init__(self, size: int, nodes: list[tuple[bytes, float]]):
        ids = [i for i, _ in nodes]
        assert nodes and all(ids), "empty node set or empty id"
        assert len(set(ids)) == len(ids), "duplicate id"
        for _, w in nodes:
            assert isinstance(w, float) and math.isfinite(w) and w > 0.0
        assert is_prime(size) and size >= len(nodes), "bad table size"
        M = self.size = size
        # Node index = position after sorting by id bytes (Python compares
        # bytes as unsigned bytes, a proper prefix first).
        self.nodes = sorted(nodes, key=lambda n: n[0])
        self.offset = [node_hash(nid, 0) % M for nid, _ in self.nodes]
        self.skip = [node_hash(nid, 1) % (M - 1) + 1 for nid, _ in self.nodes]
        self.q = [quantize(w) for _, w in self.nodes]
        self.entry = self._populate()
        self.counts = [0] * len(self.nodes)
        for e in self.entry:
            self.counts[e] += 1

    def _populate(self) -> list[int]:
        M, N, Q = self.size, len(self.nodes), max(self.q)
        entry = [-1] * M                  # -1 = empty slot
        nxt = [0] * N                     # next_i: position in perm_i
        credit = [0] * N                  # signed credit per node
        filled = 0
        while filled < M:                 # one round per iteration
            for i in range(N):
                if filled == M:
                    break
                credit[i] += self.q[i]
                if credit[i] >= 0:
                    credit[i] -= Q
                    off, skip = self.offset[i], self.skip[i]
                    # perm_i(j) = (offset_i + j * skip_i) mod M; take the
                    # first slot of the sequence not yet taken.
                    c = (off + nxt[i] * skip) % M
                    nxt[i] += 1
                    while entry[c] != -1:
                        c = (off + nxt[i] * skip) % M
                        nxt[i] += 1
                    entry[c] = i
                    filled += 1
        return entry

    def pick(self, k: int) -> int:
        return self.entry[k % self.size]

    def pick_n(self, k: int, n: int) -> list[int]:
        want = min(n, len(self.nodes))
        out: list[int] = []
        s = k % self.size
        for step in range(self.size):     # walk at most M slots, wrapping
            if len(out) >= want:
                break
            e = self.entry[(s + step) % self.size]
            if e not in out:
                out.append(e)
        # Nodes without entries: append the rest in index order.
        for i in range(len(self.nodes)):
            if len(out) >= want:
                break
            if i not in out:
                out.append(i)
        assert len(out) == want
        return out

    def node_id(self, idx: int) -> str:
        return self.nodes[idx][0].decode("utf-8")


def emit_case(out, name, size, nodes, keys, queries, comment):
    mg = Maglev(size, nodes)
    out.append(f"# case {name}: {comment}")
    out.append(f"case {name} size {size}")
    for nid, w in nodes:  # input order, not sorted
        out.append(f"node {nid.decode('utf-8')} {w!r}")
    for idx in range(len(mg.nodes)):
        out.append(f"perm {idx} {mg.node_id(idx)} {mg.offset[idx]} "
                   f"{mg.skip[idx]} {mg.q[idx]}")
    if size <= FULL_TABLE_MAX:
        out.append("entries " + ",".join(map(str, mg.entry)))
    digest = xxh3(b"".join(le32(e) for e in mg.entry))
    out.append(f"table_xxh3 {digest:016x}")
    if size > FULL_TABLE_MAX:
        # Fixed slots, then 10 from a fresh random.Random(11) per case.
        rng = random.Random(11)
        slots = [0, 1, 2, size // 2, size - 1]
        slots += [rng.randrange(size) for _ in range(10)]
        for s in slots:
            out.append(f"slot {s} {mg.entry[s]}")
    for idx in range(len(mg.nodes)):
        out.append(f"count {mg.node_id(idx)} {mg.counts[idx]}")

    def line(k):
        p3 = mg.pick_n(k, 3)
        assert p3[0] == mg.pick(k)
        return f"{mg.node_id(mg.pick(k))} " + ",".join(map(mg.node_id, p3))

    for key in keys:
        k = xxh3(key)
        out.append(f"key {key.hex() if key else '-'} {k} {line(k)}")
    for k in queries:
        assert 0 <= k <= U64_MAX
        out.append(f"query {k} {line(k)}")
    out.append("end")
    return mg


def key_range(n):
    return [f"key-{i}".encode() for i in range(n)]


def main():
    out = [
        "# keyplace native Maglev, contract version 1: golden vectors",
        "# generated by tests/golden/generate_maglev_native.py "
        "(independent Python reference)",
        "keyplace-maglev-golden 1",
    ]

    # 1. seven: tiny table, equal weights; queries hit k mod 7 wrapping.
    mg = emit_case(out, "seven", 7, [(b"c", 1.0), (b"a", 1.0), (b"b", 1.0)],
                   [b"", b"a", b"user:42"] + key_range(20),
                   [0, 6, 7, U64_MAX], "3 equal nodes, input order c a b")
    assert sorted(mg.counts) == [2, 2, 3]

    # 2. weighted17: Q = q_y, so y places every round and x (q = Q/2) in
    #    rounds 1, 2, 4, 6, ...
    mg = emit_case(out, "weighted17", 17, [(b"x", 1.0), (b"y", 2.0)],
                   key_range(30), [], "weights 1 and 2")
    assert mg.counts[1] > mg.counts[0]

    # 3. lopsided: q(0.001) = llround(65.536) = 66 against Q = 65536, so
    #    `small` places only in round 1; every slot is queried.
    mg = emit_case(out, "lopsided", 13, [(b"big", 1.0), (b"small", 0.001)],
                   [b"a", b"b"] + key_range(10), list(range(13)),
                   "weights 1 and 0.001 (q 66): small places only in "
                   "round 1; queries 0..12 cover every slot")
    assert mg.q == [65536, 66] and mg.counts == [12, 1], mg.counts

    # 4. hundred: 65537 = 655 * 100 + 37.
    mg = emit_case(out, "hundred", 65537,
                   [(f"node-{i}".encode(), 1.0) for i in range(99, -1, -1)],
                   key_range(1000), [],
                   "100 equal nodes, input order node-99..node-0; "
                   "37 nodes get 656 entries, 63 get 655")
    assert sorted(mg.counts) == [655] * 63 + [656] * 37

    # 5. weighted12: production size, weights 1 : 2.
    mg = emit_case(out, "weighted12", 65537, [(b"w1", 1.0), (b"w2", 2.0)],
                   key_range(100), [], "weights 1 and 2")
    assert abs(mg.counts[1] - 2 * mg.counts[0]) <= 2, mg.counts

    # 6. large: 655373-slot table, 10 equal nodes.
    mg = emit_case(out, "large", 655373,
                   [(f"node-{i}".encode(), 1.0) for i in range(10)],
                   key_range(100), [], "10 equal nodes, large table")
    assert sorted(mg.counts) == [65537] * 7 + [65538] * 3

    sys.stdout.buffer.write(("\n".join(out) + "\n").encode("utf-8"))


def self_test():
    # Known XXH3-64 values (xxHash 0.8.x) and node hashes.
    assert xxh3(b"") == 0x2D06800538D394C2
    assert xxh3(b"abc") == 0x78AF5F94892F3950
    assert node_hash(b"a", 0) == 0x98123F6CEC13A4C3
    assert node_hash(b"a", 1) == 0x332D8FDE124825DF
    # llround: halves away from zero, unlike Python's round().
    assert llround(2.5) == 3 and llround(0.5) == 1 and llround(-2.5) == -3
    assert quantize(0.001) == 66 and quantize(1.0) == 65536
    assert is_prime(7) and is_prime(65537) and is_prime(655373)
    # Weighted rounds: a node of weight Q/2 places in rounds 1, 2, 4, 6.
    Q, q, credit, placed = 2, 1, 0, []
    for rnd in range(1, 9):
        credit += q
        if credit >= 0:
            credit -= Q
            placed.append(rnd)
    assert placed == [1, 2, 4, 6, 8]


if __name__ == "__main__":
    self_test()
    main()
