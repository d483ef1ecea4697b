#!/usr/bin/env python3
"""Independent reference generator for keyplace snapshot digests, contract v1.

Computes the *fingerprint* and the *probe digest* of snapshots of every
strategy a snapshot can hold. Written from the documentation's text alone, not
from the C++ sources (it was written when that text was the README; its sections now
live in doc/: the strategies, "Fingerprint" and "Probe digest" in doc/contract.md, the
description and "Overrides" in doc/snapshots.md, "Compatibility modes" in doc/compat.md,
"Chosen points" and the replica example in doc/guide.md; "README" below names them). It reads "Snapshots: changing a fleet's placement" (### Fingerprint,
### Probe digest), the placement contract sections ("Native ring, contract v1",
"Shared by rendezvous and Maglev", "Rendezvous", "Maglev", "Jump") and
"Compatibility modes" (ketama dialects, Redis Cluster, Cassandra, Envoy). The
native ring, rendezvous and Maglev reuse the classes of the existing
generators, themselves written from the same text.

Usage, from the repository root:
    /usr/bin/python3 tests/golden/generate_snapshot_digests.py \
        > tests/golden/snapshot_digests_v2.txt
    /usr/bin/python3 tests/golden/generate_snapshot_digests.py --encoding 1 \
        > tests/golden/snapshot_digests_v1.txt
The fingerprint encoding 2 adds the location block (README, "Fingerprint",
item 6); encoding 1, without it, is what documents written before it state.

Needs Python 3.11 and the `xxhash` module (3.x, bundling xxHash 0.8.x;
Debian's python3-xxhash). Output is ASCII with '\n' line ends. Before printing,
it checks its compat implementations against the systems' own vectors that
this repository stores (Guava's and the paper's jump tables, node-hashring's
and libmemcached's ketama fixtures) and against published Envoy, Cassandra and
Redis vectors. (When the table was written, the libmemcached dialects of its
cases were also compared, over the probe keys and 20000 more, with the
installed libmemcached 1.1.4 through ctypes: no difference.)

What the README leaves open, and this reference therefore avoids: equal points
of Envoy's ring (std::sort's order is unspecified) and Redis's even split for a
node count that does not divide 16384 (the README says only "splits slots
evenly by id").
"""

import bisect
import copy
import hashlib
import math
import os
import struct
import sys

import xxhash

from contract_v1 import xxh3, le32, le64, U64_MAX
from generate_anchor_native import Anchor
from generate_maglev_native import Maglev, is_prime
from generate_memento_native import Memento
from generate_multiprobe_native import Multiprobe
from generate_rendezvous_native import Rendezvous
from generate_ring_native import Ring

HERE = os.path.dirname(os.path.abspath(__file__))
MASK32 = (1 << 32) - 1
MASK64 = U64_MAX
PROBE_KEYS = [f"keyplace.probe.{i}".encode() for i in range(4096)]


def s_str(b: bytes) -> bytes:
    """str(s) = LE32(len(s)) || s."""
    return le32(len(b)) + b


def xxh3_128(data: bytes) -> tuple[int, int]:
    """XXH3-128, seed 0, as (high, low) 64-bit halves."""
    v = xxhash.xxh3_128_intdigest(data, seed=0)
    return v >> 64, v & MASK64


def hex128(d: tuple[int, int]) -> str:
    """32 hex digits, the high half first (xxhsum -H2)."""
    return f"{d[0]:016x}{d[1]:016x}"


def f32(x: float) -> float:
    """Round a binary64 value to binary32 (a C (float) conversion)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def to_signed64(x: int) -> int:
    x &= MASK64
    return x - (1 << 64) if x >> 63 else x


# --- node sets -------------------------------------------------------------

class Node:
    def __init__(self, nid: str, weight: float = 1.0, state: str = "active",
                 where: str = "", tokens=None, slots=None, points=None, partitions=None):
        self.id = nid
        self.bid = nid.encode()
        self.weight = float(weight)
        self.state = state
        self.where = where            # "region/zone/rack", "" for none
        self.tokens = tokens or []    # Cassandra tokens (signed)
        self.slots = slots or []      # Redis ranges [(first, last)]
        self.points = points or []    # chosen tokens of strategy "tokens" (unsigned)
        self.partitions = partitions or []  # partition spans [(first, last, rank)]

    def spec(self) -> str:
        """The node's entry in a golden line (see the file header)."""
        s = self.id
        if self.weight != 1.0:
            w = self.weight
            s += f"*{int(w)}" if w.is_integer() else f"*{w!r}"
        if self.state != "active":
            s += f"@{self.state}"
        if self.where:
            s += f"~{self.where}"
        if self.tokens:
            s += "#" + ";".join(str(t) for t in self.tokens)
        if self.slots:
            s += "$" + ";".join(f"{a}-{b}" for a, b in self.slots)
        if self.points:
            s += "%" + ";".join(str(t) for t in self.points)
        if self.partitions:
            s += "^" + ";".join(f"{a}-{b}" + (f":{r}" if r else "") for a, b, r in self.partitions)
        return s


def owns_now(n: Node) -> bool:
    return n.state in ("active", "leaving", "read_only")


def owns_after(n: Node) -> bool:
    return n.state in ("active", "joining")


# --- placements: each knows its kind's built state and its key lookup -------
#
# Every placement is built over the nodes that own keys at one moment, in the
# description's order (only jump and the compat rings use that order).
# owner_of(key) returns a Node; built_state() the bytes of fingerprint item 5.

def ranks_of(nodes: list[Node]) -> dict[bytes, int]:
    return {b: i for i, b in enumerate(sorted(n.bid for n in nodes))}


def ring_state(width: int, rule: int, points: list[tuple[int, Node]],
               ranks: dict[bytes, int]) -> bytes:
    """0x01, width, rule, LE64(T), then (point, LE32(rank)) in ring order."""
    out = [bytes([1, width, rule]), le64(len(points))]
    for p, n in points:
        if width == 8:
            out.append(le64(p & MASK64))      # a signed token: its bits
        else:
            out.append(le32(p))
        out.append(le32(ranks[n.bid]))
    return b"".join(out)


def table_state(owners: list[Node], ranks: dict[bytes, int]) -> bytes:
    """0x02, LE64(M), then LE32(rank of pick(r)) for r = 0 .. M-1."""
    return b"\x02" + le64(len(owners)) + b"".join(le32(ranks[n.bid]) for n in owners)


def list_state(order: list[Node], ranks: dict[bytes, int]) -> bytes:
    """0x03, LE32(N), then LE32(rank) and LE64(weight bits) in strategy order."""
    out = [b"\x03", le32(len(order))]
    for n in order:
        out.append(le32(ranks[n.bid]))
        out.append(struct.pack("<d", n.weight))
    return b"".join(out)


def check_distinct(points: list[int], what: str) -> None:
    # Equal points are where the reference systems disagree among themselves
    # (README, "Equal points"): the golden cases avoid them.
    assert len(set(points)) == len(points), f"{what}: equal points"


# native ring ---------------------------------------------------------------

class NativeRing:
    def __init__(self, nodes, params):
        self.ring = Ring(params["vnodes"], [(n.bid, n.weight) for n in nodes])
        self.by_id = {n.bid: n for n in nodes}
        self.ranks = ranks_of(nodes)

    def owner_of(self, key: bytes) -> Node:
        return self.by_id[self.ring.nodes[self.ring.pick(xxh3(key))][0]]

    def built_state(self) -> bytes:
        pts = [(p, self.by_id[self.ring.nodes[idx][0]])
               for p, idx, _ in self.ring.entries]
        return ring_state(8, 0, pts, self.ranks)


# rendezvous -----------------------------------------------------------------

class NativeRendezvous:
    def __init__(self, nodes, params):
        self.rv = Rendezvous([(n.bid, n.weight) for n in nodes])
        self.by_id = {n.bid: n for n in nodes}
        self.ranks = ranks_of(nodes)

    def owner_of(self, key):
        return self.by_id[self.rv.nodes[self.rv.pick(xxh3(key))][0]]

    def built_state(self):
        order = [self.by_id[b] for b, _ in self.rv.nodes]  # id order
        return list_state(order, self.ranks)


# maglev ----------------------------------------------------------------------

class NativeMaglev:
    def __init__(self, nodes, params):
        self.mg = Maglev(params["table-size"], [(n.bid, n.weight) for n in nodes])
        self.by_id = {n.bid: n for n in nodes}
        self.ranks = ranks_of(nodes)
        self.owners = [self.by_id[self.mg.nodes[e][0]] for e in self.mg.entry]

    def owner_of(self, key):
        return self.owners[xxh3(key) % len(self.owners)]

    def built_state(self):
        return table_state(self.owners, self.ranks)


# modulo ----------------------------------------------------------------------

class Modulo:
    """Point mod N over the nodes sorted by id (README: "point mod N")."""

    def __init__(self, nodes, params):
        self.sorted = sorted(nodes, key=lambda n: n.bid)
        self.ranks = ranks_of(nodes)

    def owner_of(self, key):
        return self.sorted[xxh3(key) % len(self.sorted)]

    def built_state(self):
        return table_state(self.sorted, self.ranks)  # residue r -> node r


# multi-probe -------------------------------------------------------------------

class NativeMultiprobe:
    """Multi-probe, contract v1: no weights, nodes in id order; its state is the
    node list (README: "the node list" encoding, tag 3)."""

    def __init__(self, nodes, params):
        assert all(n.weight == 1.0 for n in nodes)
        self.mp = Multiprobe([n.bid for n in nodes], params["probes"])
        self.by_id = {n.bid: n for n in nodes}
        self.ranks = ranks_of(nodes)

    def owner_of(self, key):
        return self.by_id[self.mp.ids[self.mp.pick(xxh3(key))]]

    def built_state(self):
        return list_state([self.by_id[b] for b in self.mp.ids], self.ranks)


# AnchorHash and MementoHash ------------------------------------------------------

class BucketTable:
    """A table of numbered buckets whose removed ones are history (README, "AnchorHash,
    contract v1", "MementoHash, contract v1", and the snapshot's description of them):
    the nodes that own keys now take the working buckets in ascending order, in the
    description's order; after a transition the table is that one without each
    leaving node, then with each joining node, in the description's order. The
    state is tag 6, LE32(table size), LE32(removed count), LE32 of each removed
    bucket in order, then LE32(rank) of the node at each working bucket, ascending."""

    def __init__(self, nodes, params):
        self.ranks = ranks_of(nodes)
        self.t = self.make(nodes, params)

    def owner_of(self, key):
        return self.t.owner[self.t.bucket(xxh3(key))]

    def built_state(self):
        removed = self.removed()
        out = [b"\x06", le32(self.size()), le32(len(removed))] + [le32(b) for b in removed]
        out += [le32(self.ranks[self.t.owner[b].bid]) for b in sorted(self.t.owner)]
        return b"".join(out)

    @classmethod
    def derive(cls, before, nodes):
        """The placement after the transition, from the one now."""
        out = cls.__new__(cls)
        out.t = copy.deepcopy(before.t, {id(n): n for n in nodes})  # the same Node objects
        for n in nodes:
            if n.state in ("leaving", "read_only"):   # owns keys now, none after
                out.t.without(n)
        for n in nodes:
            if n.state == "joining":
                out.t.with_(n)
        out.ranks = ranks_of([n for n in nodes if owns_after(n)])
        return out


class NativeAnchor(BucketTable):
    """Capacity a (0: the nodes that are not left), the removed stack R replayed from
    the identity state with the paper's removal rule (empty: a-1 down to N)."""

    @staticmethod
    def make(nodes, params):
        a = params["capacity"]
        t = Anchor(a, list(range(a)))          # the identity state: nothing removed
        R = list(params["removed"]) or list(range(a - 1, len(nodes) - 1, -1))
        assert len(R) == a - len(nodes) and len(set(R)) == len(R) and all(b < a for b in R)
        for b in R:
            t.remove_bucket(b)
        working = [b for b in range(a) if b not in set(R)]
        t.owner = dict(zip(working, nodes))
        return t

    def size(self):
        return self.t.a

    def removed(self):
        return self.t.R


class NativeMemento(BucketTable):
    """The removal order; n = N + |removed|."""

    @staticmethod
    def make(nodes, params):
        R = list(params["removed"])
        t = Memento([])
        t.n = len(nodes) + len(R)
        assert len(set(R)) == len(R) and all(b < t.n for b in R) and (not R or R[0] != t.n - 1)
        t.removed = R
        working = [b for b in range(t.n) if b not in set(R)]
        t.owner = dict(zip(working, nodes))
        return t

    def size(self):
        return self.t.n

    def removed(self):
        return self.t.removed


# jump ------------------------------------------------------------------------

def jump_paper(key: int, buckets: int) -> int:
    """Lamping & Veach's reference function; Python floats are binary64."""
    b, j = -1, 0
    while j < buckets:
        b = j
        key = (key * 2862933555777941757 + 1) & MASK64
        j = int((b + 1) * (float(1 << 31) / float((key >> 33) + 1)))
    return b


def java_int(x: int) -> int:
    x &= MASK32
    return x - (1 << 32) if x >> 31 else x


def java_d2i(d: float) -> int:
    """Java's (int) of a double: truncation, saturating, NaN -> 0."""
    if d != d:
        return 0
    if d >= 2147483647.0:
        return 2147483647
    if d <= -2147483648.0:
        return -2147483648
    return int(d)


def jump_guava(key: int, buckets: int) -> int:
    """Guava 31.1 Hashing.consistentHash(long, int), with its int arithmetic."""
    state = key & MASK64
    candidate = 0
    while True:
        state = (2862933555777941757 * state + 1) & MASK64
        # (double) ((int) (state >>> 33) + 1) / 0x1.0p31; the int sum wraps
        nd = float(java_int((state >> 33) + 1)) / 2147483648.0
        nxt = java_d2i(float(candidate + 1) / nd)
        if 0 <= nxt < buckets:
            candidate = nxt
        else:
            return candidate


class Jump:
    fn = staticmethod(jump_paper)

    def __init__(self, nodes, params):
        assert all(n.weight == 1.0 for n in nodes)
        self.order = list(nodes)  # the order given: bucket i is node i
        self.ranks = ranks_of(nodes)

    def owner_of(self, key):
        return self.order[self.fn(xxh3(key), len(self.order))]

    def built_state(self):
        return list_state(self.order, self.ranks)


class JumpGuava(Jump):
    fn = staticmethod(jump_guava)


# jumpback ---------------------------------------------------------------------

def splitmix64_next(state: int) -> tuple[int, int]:
    """hash4j's SplitMix64V1.nextLong(): (new state, value)."""
    state = (state + 0x9E3779B97F4A7C15) & MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return state, z ^ (z >> 31)


def jumpback_hash(key: int, buckets: int) -> int:
    """JumpBackHash (Ertl) with SplitMix64 seeded by the key, as hash4j 0.30.0's
    jumpBackHash(splitMix64_V1()) computes it; 1 <= buckets <= 2^31 - 1. Java's
    1 << ~nlz(x) is the highest set bit of x; r0 >>> (bitCount(x) << 5) shifts by
    32 when x has an odd number of bits set, else by 0 (Java takes counts mod 64)."""
    assert 1 <= buckets <= 2147483647
    if buckets == 1:
        return 0
    state, r0 = splitmix64_next(key & MASK64)
    x = ((r0 ^ (r0 >> 32)) & MASK32) & ((1 << (buckets - 1).bit_length()) - 1)
    while x:
        lo = 1 << (x.bit_length() - 1)
        half = r0 >> 32 if bin(x).count("1") & 1 else r0
        b = lo + ((half & MASK32) & (lo - 1))
        if b < buckets:
            return b
        hi = 2 * lo - 1
        while True:
            state, r1 = splitmix64_next(state)
            b = r1 & hi
            if b < lo:
                break
            if b < buckets:
                return b
            b = (r1 >> 32) & hi
            if b < lo:
                break
            if b < buckets:
                return b
        x ^= lo
    return 0


class JumpBack(Jump):
    fn = staticmethod(jumpback_hash)


# go-mpchash -------------------------------------------------------------------

def siphash24(k0: int, k1: int, msg: bytes) -> int:
    """SipHash-2-4 (Aumasson and Bernstein), 64-bit output, key (k0, k1) as
    two little-endian words, from the paper's description."""
    def rotl(x, b):
        return ((x << b) | (x >> (64 - b))) & MASK64

    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D,
         k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]

    def sipround():
        v[0] = (v[0] + v[1]) & MASK64; v[1] = rotl(v[1], 13); v[1] ^= v[0]; v[0] = rotl(v[0], 32)
        v[2] = (v[2] + v[3]) & MASK64; v[3] = rotl(v[3], 16); v[3] ^= v[2]
        v[0] = (v[0] + v[3]) & MASK64; v[3] = rotl(v[3], 21); v[3] ^= v[0]
        v[2] = (v[2] + v[1]) & MASK64; v[1] = rotl(v[1], 17); v[1] ^= v[2]; v[2] = rotl(v[2], 32)

    # The message, then zero bytes to a multiple of 8 less one, then the length
    # mod 256: little-endian words.
    padded = msg + b"\x00" * (7 - len(msg) % 8) + bytes([len(msg) & 0xFF])
    for at in range(0, len(padded), 8):
        m = int.from_bytes(padded[at:at + 8], "little")
        v[3] ^= m
        sipround()
        sipround()
        v[0] ^= m
    v[2] ^= 0xFF
    for _ in range(4):
        sipround()
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def mpchash_h(b: bytes, seed: int) -> int:
    """The README's H(b, s): SipHash-2-4 under the key (k0 = s, k1 = 0)."""
    return siphash24(seed, 0, b)


class Mpchash:
    """go-mpchash (README, "Compatibility modes"): bucket b's point H(b, 0);
    a key's probes H(key, 1) + i*H(key, 2) for i < K; each probe's strict
    successor (wrapping), the nearest wins, the earliest probe on a tie.
    Buckets keep the order given; on a point two buckets share, the later one
    in the list owns it. Its state is the node list in that order."""

    def __init__(self, nodes, params):
        assert all(n.weight == 1.0 for n in nodes)
        self.order = list(nodes)
        self.ranks = ranks_of(nodes)
        self.k = params["probes"]
        owner = {}
        for n in self.order:              # a later bucket overwrites an earlier one
            owner[mpchash_h(n.bid, 0)] = n
        self.owner = owner
        self.sorted = sorted(owner)

    def owner_of(self, key):
        h1, h2 = mpchash_h(key, 1), mpchash_h(key, 2)
        best = None
        for i in range(self.k):
            probe = (h1 + i * h2) & MASK64
            at = bisect.bisect_right(self.sorted, probe)
            point = self.sorted[at if at < len(self.sorted) else 0]
            d = (point - probe) & MASK64 or (1 << 64)   # equal: a whole turn
            if best is None or d < best[0]:
                best = (d, point)
        return self.owner[best[1]]

    def built_state(self):
        return list_state(self.order, self.ranks)


# ketama dialects (memcached clients, libketama, Python hash_ring) ----------

def md5(b: bytes) -> bytes:
    return hashlib.md5(b).digest()


def md5_le32(d: bytes, a: int) -> int:
    """Point a of a digest: bytes 4a..4a+3, little-endian."""
    return int.from_bytes(d[4 * a:4 * a + 4], "little")


def one_at_a_time(b: bytes) -> int:
    """Jenkins' one-at-a-time as libhashkit computes it (signed char)."""
    v = 0
    for c in b:
        c = c - 256 if c >= 0x80 else c        # sign-extended char
        v = (v + (c & MASK32)) & MASK32
        v = (v + (v << 10)) & MASK32
        v ^= v >> 6
    v = (v + (v << 3)) & MASK32
    v ^= v >> 11
    v = (v + (v << 15)) & MASK32
    return v


def host_port(nid: str) -> tuple[str, int]:
    """A server id "host[:port]" (IPv4 or a name); the port defaults to 11211."""
    if ":" in nid:
        host, port = nid.rsplit(":", 1)
        return host, int(port)
    return nid, 11211


class KetamaBase:
    """A 32-bit continuum; node order = server index; lookup first >= h
    (first > h for hash_ring). Subclasses list (point, server index) in the
    order the client writes them. Equal points of two servers are ordered by
    server index, each owned by its own server (README, "Equal points":
    libmemcached's order, which keyplace follows); hash_ring overrides the
    owner."""
    rule = 0

    def __init__(self, nodes, params):
        self.nodes = list(nodes)
        self.params = params
        self.ranks = ranks_of(nodes)
        written = self.points()  # [(point, server index)], in build order
        pts = sorted(written)    # by point, then server index
        self.pts = self.owners(written, pts)
        self.values = [p for p, _ in pts]

    def owners(self, written, pts):
        return pts

    def key_hash(self, key: bytes) -> int:
        return md5_le32(md5(key), 0)

    def owner_of(self, key):
        h = self.key_hash(key)
        if self.rule == 0:
            i = bisect.bisect_left(self.values, h)
        else:
            i = bisect.bisect_right(self.values, h)
        if i == len(self.values):
            i = 0
        return self.nodes[self.pts[i][1]]

    def built_state(self):
        return ring_state(4, self.rule,
                          [(p, self.nodes[s]) for p, s in self.pts], self.ranks)


def libmemcached_points_per_server(weight: int, total: int, n: int) -> int:
    """floor((float)(pct * 160 / 4 * (float)n + 1e-10)) * 4, in C's float/double
    mix: pct = (float)weight / (float)total; the products and the division by 4
    are float operations; the 1e-10 is a double."""
    pct = f32(f32(float(weight)) / f32(float(total)))
    a = f32(pct * 160.0)
    b = f32(a / 4.0)
    c = f32(b * f32(float(n)))
    return int(math.floor(f32(c + 0.0000000001))) * 4


class KetamaWeighted(KetamaBase):
    """libmemcached KETAMA_WEIGHTED: MD5 of "host-i" ("host:port-i" off 11211)."""

    def server_string(self, host, port, i):
        return f"{host}-{i}" if port == 11211 else f"{host}:{port}-{i}"

    def points(self):
        total = sum(int(n.weight) for n in self.nodes)
        out = []
        for s, n in enumerate(self.nodes):
            host, port = host_port(n.id)
            pps = libmemcached_points_per_server(int(n.weight), total, len(self.nodes))
            for i in range(pps // 4):
                d = md5(self.server_string(host, port, i).encode())
                out += [(md5_le32(d, a), s) for a in range(4)]
        return out


class KetamaSpy(KetamaWeighted):
    """spymemcached strings "/host:port-i", port always written."""

    def server_string(self, host, port, i):
        return f"/{host}:{port}-{i}"


class KetamaUnweighted(KetamaBase):
    """libmemcached KETAMA without weights: 100 points per server, each the key
    hash of one "host-i" string; one-at-a-time by default, or MD5."""

    def hash(self, b: bytes) -> int:
        if self.params["hash"] == "one-at-a-time":
            return one_at_a_time(b)
        assert self.params["hash"] == "md5-ketama"
        return md5_le32(md5(b), 0)

    def key_hash(self, key):
        return self.hash(key)

    def points(self):
        out = []
        for s, n in enumerate(self.nodes):
            host, port = host_port(n.id)
            for i in range(100):
                t = f"{host}-{i}" if port == 11211 else f"{host}:{port}-{i}"
                out.append((self.hash(t.encode()), s))
        return out


class LibKetama(KetamaBase):
    """last.fm libketama: "addr-k" as written, floorf(pct * 40.0 * n) digests,
    pct = (float)memory / (float)total, the product in double."""

    def points(self):
        total = sum(int(n.weight) for n in self.nodes)
        out = []
        for s, n in enumerate(self.nodes):
            pct = f32(f32(float(int(n.weight))) / f32(float(total)))
            ks = int(math.floor(f32(pct * 40.0 * float(f32(float(len(self.nodes)))))))
            for k in range(ks):
                d = md5(f"{n.id}-{k}".encode())
                out += [(md5_le32(d, a), s) for a in range(4)]
        return out


class HashRing(KetamaBase):
    """Python hash_ring: floor(40 n w / total) digests of "name-j", three
    points per digest, bisect_right lookup."""
    rule = 1

    def points(self):
        total = sum(int(n.weight) for n in self.nodes)
        out = []
        for s, n in enumerate(self.nodes):
            factor = (40 * len(self.nodes) * int(n.weight)) // total
            for j in range(factor):
                d = md5(f"{n.id}-{j}".encode())
                out += [(md5_le32(d, a), s) for a in range(3)]
        return out

    def owners(self, written, pts):
        """self.ring[key] = node: an equal point belongs to the last server
        that wrote it, and _sorted_keys keeps every copy of it."""
        last = {}
        for p, s in written:
            last[p] = s
        return [(p, last[p]) for p, _ in pts]


# Envoy -----------------------------------------------------------------------

def xxh64(b: bytes, seed: int = 0) -> int:
    return xxhash.xxh64_intdigest(b, seed=seed)


def murmur2_envoy(b: bytes, seed: int = 0xC70F6907) -> int:
    """64-bit MurmurHash2 as libstdc++'s _Hash_bytes (std::hash<std::string>)."""
    mul = (0xC6A4A793 << 32) + 0x5BD1E995

    def shift_mix(v):
        return v ^ (v >> 47)

    n = len(b)
    aligned = n & ~7
    h = (seed ^ (n * mul)) & MASK64
    for p in range(0, aligned, 8):
        data = (shift_mix((int.from_bytes(b[p:p + 8], "little") * mul) & MASK64) * mul) & MASK64
        h ^= data
        h = (h * mul) & MASK64
    if n & 7:
        data = int.from_bytes(b[aligned:], "little")
        h ^= data
        h = (h * mul) & MASK64
    h = (shift_mix(h) * mul) & MASK64
    return shift_mix(h)


def envoy_normalized(nodes) -> list[float]:
    total = sum(int(n.weight) for n in nodes)
    return [float(int(n.weight)) * 1.0 / float(total) for n in nodes]


class EnvoyRing:
    """RING_HASH: scale = min(ceil(min_nw * min_ring) / min_nw, max_ring);
    host by host in the order given, entries "<id>_<i>" while the running
    count is below the running target; sorted; lookup first >= XXH64(key)."""

    def __init__(self, nodes, params):
        self.ranks = ranks_of(nodes)
        hf = xxh64 if params["hash"] == "xxh64" else murmur2_envoy
        assert params["hash"] in ("xxh64", "murmur2-envoy")
        nw = envoy_normalized(nodes)
        min_nw = min(nw)
        scale = min(math.ceil(min_nw * float(params["min-ring-size"])) / min_nw,
                    float(params["max-ring-size"]))
        ring = []
        current = target = 0.0
        for n, w in zip(nodes, nw):
            target += scale * w
            i = 0
            while current < target:
                ring.append((hf(f"{n.id}_{i}".encode()), n))
                i += 1
                current += 1.0
        check_distinct([h for h, _ in ring], "envoy-ring")
        ring.sort(key=lambda e: e[0])
        self.ring = ring
        self.values = [h for h, _ in ring]

    def owner_of(self, key):
        i = bisect.bisect_left(self.values, xxh64(key))
        return self.ring[0 if i == len(self.ring) else i][1]

    def built_state(self):
        return ring_state(8, 0, self.ring, self.ranks)


class EnvoyMaglev:
    """MAGLEV: hosts sorted by id, offset XXH64(id, 0) % M, skip
    XXH64(id, 1) % (M - 1) + 1; a host is skipped in round i while
    i * nw < target, and target += max_nw when it takes a slot."""

    def __init__(self, nodes, params):
        M = params["table-size"]
        assert is_prime(M) and M <= 5000011
        self.ranks = ranks_of(nodes)
        hosts = sorted(nodes, key=lambda n: n.bid)
        nw = envoy_normalized(hosts)
        max_nw = max(nw)
        offset = [xxh64(h.bid, 0) % M for h in hosts]
        skip = [xxh64(h.bid, 1) % (M - 1) + 1 for h in hosts]
        target = [0.0] * len(hosts)
        nxt = [0] * len(hosts)
        table = [None] * M
        filled = 0
        iteration = 1
        while filled < M:
            for i in range(len(hosts)):
                if filled >= M:
                    break
                if float(iteration) * nw[i] < target[i]:
                    continue
                target[i] += max_nw
                c = (offset[i] + skip[i] * nxt[i]) % M
                while table[c] is not None:
                    nxt[i] += 1
                    c = (offset[i] + skip[i] * nxt[i]) % M
                table[c] = hosts[i]
                nxt[i] += 1
                filled += 1
            iteration += 1
        self.table = table

    def owner_of(self, key):
        return self.table[xxh64(key) % len(self.table)]

    def built_state(self):
        return table_state(self.table, self.ranks)


# Cassandra -------------------------------------------------------------------

C1 = 0x87C37B91114253D5
C2 = 0x4CF5AD432745937F


def rotl64(x, r):
    return ((x << r) | (x >> (64 - r))) & MASK64


def fmix64(k):
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & MASK64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & MASK64
    k ^= k >> 33
    return k


def murmur3_x64_128(data: bytes, seed: int = 0, java_tail: bool = True):
    """MurmurHash3_x64_128 -> (h1, h2) unsigned. java_tail: tail bytes are
    sign-extended Java bytes, as Cassandra's port reads them."""
    n = len(data)
    h1 = h2 = seed & MASK64
    nblocks = n // 16
    for i in range(nblocks):
        k1 = int.from_bytes(data[16 * i:16 * i + 8], "little")
        k2 = int.from_bytes(data[16 * i + 8:16 * i + 16], "little")
        k1 = (k1 * C1) & MASK64
        k1 = rotl64(k1, 31)
        k1 = (k1 * C2) & MASK64
        h1 ^= k1
        h1 = rotl64(h1, 27)
        h1 = (h1 + h2) & MASK64
        h1 = (h1 * 5 + 0x52DCE729) & MASK64
        k2 = (k2 * C2) & MASK64
        k2 = rotl64(k2, 33)
        k2 = (k2 * C1) & MASK64
        h2 ^= k2
        h2 = rotl64(h2, 31)
        h2 = (h2 + h1) & MASK64
        h2 = (h2 * 5 + 0x38495AB5) & MASK64
    tail = data[16 * nblocks:]

    def byte(i):
        b = tail[i]
        if java_tail and b >= 0x80:
            return (b - 256) & MASK64   # (long) of a negative Java byte
        return b

    k1 = k2 = 0
    t = len(tail)
    if t > 8:
        for i in range(t - 1, 7, -1):
            k2 ^= (byte(i) << (8 * (i - 8))) & MASK64
        k2 = (k2 * C2) & MASK64
        k2 = rotl64(k2, 33)
        k2 = (k2 * C1) & MASK64
        h2 ^= k2
    if t > 0:
        for i in range(min(t, 8) - 1, -1, -1):
            k1 ^= (byte(i) << (8 * i)) & MASK64
        k1 = (k1 * C1) & MASK64
        k1 = rotl64(k1, 31)
        k1 = (k1 * C2) & MASK64
        h1 ^= k1
    h1 ^= n
    h2 ^= n
    h1 = (h1 + h2) & MASK64
    h2 = (h2 + h1) & MASK64
    h1 = fmix64(h1)
    h2 = fmix64(h2)
    h1 = (h1 + h2) & MASK64
    h2 = (h2 + h1) & MASK64
    return h1, h2


def cassandra_token(key: bytes) -> int:
    """Murmur3Partitioner: h1 as a signed long, Long.MIN_VALUE -> MAX_VALUE;
    the empty key is the minimum token."""
    if not key:
        return -(1 << 63)
    t = to_signed64(murmur3_x64_128(key)[0])
    return (1 << 63) - 1 if t == -(1 << 63) else t


class GivenPoints:
    """A ring of points the nodes list themselves (8-byte points, first point >= h,
    wrapping): the subclass names the node field and the key hash."""

    name = ""

    def __init__(self, nodes, params):
        self.ranks = ranks_of(nodes)
        ring = [(t, n) for n in nodes for t in self.points_of(n)]
        check_distinct([t for t, _ in ring], self.name)
        ring.sort(key=lambda e: e[0])
        self.ring = ring
        self.values = [t for t, _ in ring]

    def owner_of(self, key):
        i = bisect.bisect_left(self.values, self.key_point(key))
        return self.ring[0 if i == len(self.ring) else i][1]

    def built_state(self):
        return ring_state(8, 0, self.ring, self.ranks)


class Cassandra(GivenPoints):
    """The token ring: a key's primary is the node of the first token >= its
    token (signed order), wrapping."""

    name = "cassandra"

    @staticmethod
    def points_of(n):
        return n.tokens

    @staticmethod
    def key_point(key):
        return cassandra_token(key)


# Redis Cluster -----------------------------------------------------------------

def crc16_xmodem(b: bytes) -> int:
    crc = 0
    for c in b:
        crc ^= c << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def redis_hash_tag(key: bytes) -> bytes:
    s = key.find(b"{")
    if s >= 0:
        e = key.find(b"}", s + 1)
        if e > s + 1:
            return key[s + 1:e]
    return key


def redis_slot(key: bytes) -> int:
    return crc16_xmodem(redis_hash_tag(key)) & 16383


class Redis:
    """16384 slots: the given ranges, or with none the even split by id.

    The README says only that build_even "splits slots evenly by id"; this
    reference assumes contiguous blocks in id order, and the golden cases use
    node counts that divide 16384, where no remainder rule is needed."""

    def __init__(self, nodes, params):
        self.ranks = ranks_of(nodes)
        owners = [None] * 16384
        if any(n.slots for n in nodes):
            for n in nodes:
                assert n.slots, f"{n.id}: no slots"
                for a, b in n.slots:
                    for s in range(a, b + 1):
                        assert owners[s] is None, f"slot {s} twice"
                        owners[s] = n
            assert all(o is not None for o in owners), "slot gap"
        else:
            srt = sorted(nodes, key=lambda n: n.bid)
            assert 16384 % len(srt) == 0, "even split needs N | 16384 here"
            per = 16384 // len(srt)
            owners = [srt[s // per] for s in range(16384)]
        self.owners = owners

    def owner_of(self, key):
        return self.owners[redis_slot(key)]

    def built_state(self):
        return table_state(self.owners, self.ranks)


# Chosen tokens and partition tables -----------------------------------------------

class Tokens(GivenPoints):
    """The native ring of chosen points ("tokens"): a ring (README: point_ring, keys
    hashed with XXH3 as the native ring), first point >= h, wrapping."""

    name = "tokens"

    @staticmethod
    def points_of(n):
        return n.points

    @staticmethod
    def key_point(key):
        return xxh3(key)


class Partitions:
    """A listed partition table (README: "A partition table is state the snapshot
    carries"): Q partitions by the top log2(Q) bits of the key's XXH3, n ranks each.
    Only listed tables here: a fresh claim or a transition follows claim rules this
    reference does not port."""

    def __init__(self, nodes, params):
        self.ranks = ranks_of(nodes)
        self.q, self.n = params["partitions"], params["replicas"]
        self.bits = self.q.bit_length() - 1
        assert 1 << self.bits == self.q
        table = [[None] * self.n for _ in range(self.q)]
        for node in nodes:
            for a, b, r in node.partitions:
                for p in range(a, b + 1):
                    assert table[p][r] is None, f"partition {p} rank {r} twice"
                    table[p][r] = node
        assert all(x is not None for row in table for x in row), "a gap in the table"
        assert all(len({x.bid for x in row}) == self.n for row in table), "a node twice in a partition"
        self.table = table

    def owner_of(self, key):
        p = (xxh3(key) >> (64 - self.bits)) if self.bits else 0
        return self.table[p][0]

    def built_state(self):
        out = [b"\x04", le32(self.q), le32(self.n)]
        for row in self.table:
            out += [le32(self.ranks[x.bid]) for x in row]
        return b"".join(out)


# --- the strategies, their parameters and defaults (README: description) -----

STRATEGIES = {
    "ring": (NativeRing, {"vnodes": 160}),
    "rendezvous": (NativeRendezvous, {}),
    "jump": (Jump, {}),
    "jump-guava": (JumpGuava, {}),
    "maglev": (NativeMaglev, {"table-size": 65537}),
    "modulo": (Modulo, {}),
    "envoy-ring": (EnvoyRing, {"hash": "xxh64", "min-ring-size": 1024,
                               "max-ring-size": 8388608}),
    "envoy-maglev": (EnvoyMaglev, {"table-size": 65537}),
    "ketama": (KetamaWeighted, {}),
    "ketama-spy": (KetamaSpy, {}),
    "ketama-unweighted": (KetamaUnweighted, {"hash": "one-at-a-time"}),
    "libketama": (LibKetama, {}),
    "hash-ring": (HashRing, {}),
    "cassandra": (Cassandra, {}),
    "redis": (Redis, {}),
    "tokens": (Tokens, {}),
    "partitions": (Partitions, {"partitions": 1024, "replicas": 1, "spread": "node"}),
    "multiprobe": (NativeMultiprobe, {"probes": 21}),
    "anchor": (NativeAnchor, {"capacity": 0, "removed": []}),
    "memento": (NativeMemento, {"removed": []}),
    "jumpback": (JumpBack, {}),
    "mpchash": (Mpchash, {"probes": 21}),
}
SPREAD = {"node": 0, "rack": 1, "zone": 2, "region": 3}
STATE_PARAMS = {"anchor": ("capacity", "removed"), "memento": ("removed",)}


# --- the digests --------------------------------------------------------------

def header_bytes(strategy: str, params: dict, count: int, spread: str,
                 members: list[Node]) -> bytes:
    """Fingerprint items 1-4."""
    # A bucket table's size and removed buckets are in its built state, not here.
    params = {k: v for k, v in params.items() if k not in STATE_PARAMS.get(strategy, ())}
    out = [b"keyplace.fingerprint/1", s_str(strategy.encode()), le32(1),
           le32(len(params))]
    for name in sorted(params, key=lambda k: k.encode()):
        v = params[name]
        out.append(s_str(name.encode()))
        if isinstance(v, int):
            out.append(b"\x00" + le64(v))
        elif isinstance(v, list):   # a list of numbers: tag 2, LE32(count), LE64 each
            out.append(b"\x02" + le32(len(v)) + b"".join(le64(x) for x in v))
        else:
            out.append(b"\x01" + s_str(v.encode()))
    if count <= 1:  # one owner, however it is written: count 0, spread node
        count, spread = 0, "node"
    out.append(le32(count) + bytes([SPREAD[spread]]))
    ids = sorted(n.bid for n in members)
    out.append(le32(len(ids)))
    out += [s_str(b) for b in ids]
    return b"".join(out)


def location_block(count: int, spread: str, members: list[Node]) -> bytes:
    """Fingerprint item 6 (encoding 2): with 2 or more copies spread over racks,
    zones or regions, each node's domain at the spread level, numbered in order
    of first appearance over the nodes in id order; then the same one level
    finer, down to racks, while a level has fewer domains than copies (every
    node of these cases holds keys)."""
    if count <= 1 or spread == "node":
        return b""
    out = [b"\x05"]
    for depth in range({"region": 1, "zone": 2, "rack": 3}[spread], 4):
        numbers: dict[tuple, int] = {}
        for n in sorted(members, key=lambda m: m.bid):
            parts = (n.where.split("/") + ["", "", ""])[:3]
            domain = tuple(parts[:depth])
            out.append(le32(numbers.setdefault(domain, len(numbers))))
        if len(numbers) >= count:
            break
    return b"".join(out)


def placement_fingerprint(strategy, params, count, spread, members, encoding, p=None):
    cls, _ = STRATEGIES[strategy]
    if p is None:
        p = cls(members, params)
    data = header_bytes(strategy, params, count, spread, members) + p.built_state()
    if encoding >= 2:
        data += location_block(count, spread, members)
    return p, xxh3_128(data)


def probe_digest(p) -> tuple[int, int]:
    return xxh3_128(b"".join(s_str(p.owner_of(k).bid) for k in PROBE_KEYS))


IMPLICIT = {"partitions": {"contract": 1}}


def snapshot_digests(strategy, given_params, count, spread, nodes, overrides=(), encoding=2):
    cls, defaults = STRATEGIES[strategy]
    params = dict(defaults)
    implicit = IMPLICIT.get(strategy, {})
    for k, v in given_params.items():
        assert k in defaults or k in implicit, f"{strategy}: unknown parameter {k}"
        params[k] = v
    # A parameter added after documents without it were written is left out at its
    # default (those documents' fingerprints stay): partitions' "contract", 1.
    for k, v in implicit.items():
        if params.get(k) == v:
            del params[k]
    now = [n for n in nodes if owns_now(n)]
    after = [n for n in nodes if owns_after(n)]
    built = dict(params)
    if strategy == "anchor" and params["capacity"] == 0:   # 0: the nodes that are not left
        built["capacity"] = len([n for n in nodes if n.state != "left"])
    cur = cls(now, built)
    _, fp_now = placement_fingerprint(strategy, params, count, spread, now, encoding, cur)
    nxt = cls.derive(cur, nodes) if hasattr(cls, "derive") else None
    _, fp_after = placement_fingerprint(strategy, params, count, spread, after, encoding, nxt)
    # Overrides (README, "Overrides"): none adds no byte; else LE32(count), then
    # str(key) || str(node id) in bytewise order of key. The probe ignores them.
    tail = b""
    if overrides:
        ordered = sorted((k.encode(), n.encode()) for k, n in overrides)
        tail = le32(len(ordered)) + b"".join(s_str(k) + s_str(n) for k, n in ordered)
    # Read-only nodes (README, "read_only"): none adds no byte; else LE32(0xffffffff),
    # LE32(count), then str(id) of each in bytewise order of id.
    read_only = sorted(n.bid for n in nodes if n.state == "read_only")
    if read_only:
        tail += le32(0xFFFFFFFF) + le32(len(read_only)) + b"".join(s_str(i) for i in read_only)
    fp = xxh3_128(b"keyplace.snapshot/1" + le64(fp_now[1]) + le64(fp_now[0]) +
                  le64(fp_after[1]) + le64(fp_after[0]) + tail)
    return fp, probe_digest(cur)


# --- the cases ------------------------------------------------------------------

def N(spec: str) -> list[Node]:
    """Nodes from a compact spec: "a,b*2,c@joining" (no tokens or slots)."""
    out = []
    for e in spec.split(","):
        state, where, w = "active", "", 1.0
        if "~" in e:
            e, where = e.split("~")
        if "@" in e:
            e, state = e.split("@")
        if "*" in e:
            e, ws = e.split("*")
            w = float(ws)
        out.append(Node(e, w, state, where))
    return out


def zones12() -> list[Node]:
    """12 nodes, 3 zones x 2 racks x 2 nodes (README's replica example)."""
    out = []
    for z in range(3):
        for r in range(2):
            for n in range(2):
                out.append(Node(f"z{z}r{r}n{n}",
                                where=f"eu/zone-{z}/rack-{r}"))
    return out


def cases():
    C = []

    def add(name, strategy, nodes, params=None, replication=(0, "node"),
            comment=None):
        C.append((name, strategy, params or {}, replication, nodes, comment))

    # native ring
    add("ring_default", "ring", N("cache-b,cache-a,cache-c"),
        comment="vnodes omitted: the default 160 is in the fingerprint")
    add("ring_v100", "ring", N("n2,n10,n1,n1:0,n11*2.0,n*0.5"),
        {"vnodes": 100}, comment="prefix ids: n < n1 < n10 < n11 < n1:0 < n2")
    add("ring_weighted_v10", "ring", N("heavy*2.0,light*0.5,mid,tiny*0.25"),
        {"vnodes": 10}, comment="tiny: 0.25 * 10 = 2.5 rounds to 3 points")
    add("ring_joining", "ring", N("cache-a,cache-b,cache-c,cache-d@joining"),
        {"vnodes": 160}, comment="current a,b,c; pending a,b,c,d")
    add("ring_leaving_left", "ring", N("n1,n2@leaving,n3,n4,n5@left"),
        {"vnodes": 64}, comment="current n1..n4; pending n1,n3,n4; n5 a tombstone")
    add("ring_replicas3_node", "ring", N("r1,r2,r3,r4,r5,r6,r7,r8"),
        {"vnodes": 160}, (3, "node"))
    add("ring_replicas3_zone", "ring", zones12(), {"vnodes": 40}, (3, "zone"),
        comment="locations are not hashed; replication enters as bytes")
    add("ring_replicas1_rack", "ring", zones12(), {"vnodes": 40}, (1, "rack"),
        comment="count 1 is hashed as 1 (not normalised to 0)")
    # rendezvous
    add("rendezvous_weighted", "rendezvous",
        N("n10*2.5,n1,n2*0.1,n1:0*4.0,N1*1.5"),
        comment="unequal weights; the node list carries each weight's bits")
    add("rendezvous_joining_leaving", "rendezvous",
        N("a,b*3.0,c@leaving,d*0.5@joining,e@left"))
    add("rendezvous_replicas3", "rendezvous", N("s1,s2,s3,s4,s5,s6"),
        replication=(3, "node"))
    # maglev
    add("maglev_251", "maglev", N("m-c,m-a,m-b*2.0,m-d*0.5,m-e"),
        {"table-size": 251}, comment="small prime table, weights 1 2 0.5")
    add("maglev_default", "maglev", N("b1,b2,b3,b4,b5,b6,b7,b8,b9,b10"),
        comment="table-size omitted: 65537")
    add("maglev_251_joining", "maglev", N("x,y,z,w@joining"),
        {"table-size": 251}, replication=(3, "node"))
    add("maglev_7_leaving", "maglev", N("c,a,b@leaving"), {"table-size": 7})
    # jump
    add("jump_ten", "jump", N(",".join(f"shard-{i}" for i in
                                      (3, 1, 4, 0, 5, 9, 2, 6, 8, 7))),
        comment="buckets in the order given, not id order")
    add("jump_joining", "jump", N("s0,s1,s2,s3,s4@joining"),
        comment="push_back of s4")
    add("jump_leaving", "jump", N("s0,s1,s2,s3@leaving"),
        comment="pop_back of s3")
    add("jump_guava_seven", "jump-guava", N("g6,g5,g4,g3,g2,g1,g0"))
    add("jump_guava_twenty", "jump-guava",
        N(",".join(f"node-{i}" for i in range(20))))
    # modulo
    add("modulo_seven", "modulo", N("m7,m3,m1,m5,m2,m6,m4"))
    add("modulo_joining", "modulo", N("p,q,r@joining"))
    # ketama dialects
    add("hash_ring_weighted", "hash-ring",
        N("0.0.0.5*5,0.0.0.1*1,0.0.0.3*3,0.0.0.2*2,0.0.0.4*4"),
        comment="Python hash_ring: 3 points per digest, first point > h")
    add("hash_ring_joining", "hash-ring",
        N("cache1.example:11211,cache2.example:11211,cache3.example:11211*2@joining"))
    add("hash_ring_shared_point", "hash-ring", N("s218,s714"),
        comment="s218 and s714 share point 1697340005: both copies belong to "
        "s714, the last server that wrote it (hash_ring's dict)")
    add("libketama_shared_point", "libketama", N("s714,s218"),
        comment="the same shared point under libketama: the copies in server "
        "index order (s714 first), each its own server's")
    add("libketama_weighted", "libketama",
        N("10.0.0.1:11211*100,10.0.0.2:11211*200,10.0.0.3:11212*300,10.0.0.4*150"))
    add("ketama_libmemcached", "ketama",
        N("10.0.1.1:11211*600,10.0.1.2:11211*300,10.0.1.3:11211*200,"
          "10.0.1.4:11211*350,10.0.1.5:11211*1000,10.0.1.6:11211*800,"
          "10.0.1.7:11211*950,10.0.1.8:11211*100"),
        comment="libmemcached's weighted fixture servers")
    add("ketama_ports", "ketama",
        N("10.0.0.1:11211,10.0.0.2:11212*2,10.0.0.3*3,memc-4:22122"),
        replication=(3, "node"),
        comment="port 11211 is not written in the point strings, others are")
    add("ketama_spy", "ketama-spy", N("10.0.2.1:11211*10,10.0.2.2:11211*20,10.0.2.3:11311*30"))
    add("ketama_unweighted_oaat", "ketama-unweighted",
        N("192.168.0.1:11211,192.168.0.2:11211,192.168.0.3:11212,192.168.0.4"),
        comment="hash omitted: one-at-a-time")
    add("ketama_unweighted_md5", "ketama-unweighted",
        N("192.168.0.1:11211,192.168.0.2:11211,192.168.0.3:11212"),
        {"hash": "md5-ketama"})
    # Envoy
    add("envoy_ring_default", "envoy-ring",
        N("127.0.0.1:92*3,127.0.0.1:90,127.0.0.1:91*2"),
        comment="defaults min 1024, max 8388608, xxh64; host order as given")
    add("envoy_ring_murmur2", "envoy-ring",
        N("10.1.0.1:80,10.1.0.2:80*2,10.1.0.3:80,10.1.0.4:80*5,10.1.0.5:80"),
        {"hash": "murmur2-envoy", "min-ring-size": 64, "max-ring-size": 100},
        comment="max-ring-size caps the scale: fractions carry in host order")
    add("envoy_ring_leaving", "envoy-ring",
        N("h1.svc,h2.svc@leaving,h3.svc*3,h4.svc"),
        {"min-ring-size": 256}, replication=(3, "node"))
    add("envoy_maglev_17", "envoy-maglev", N("127.0.0.1:91*2,127.0.0.1:90"),
        {"table-size": 17}, comment="Envoy's Weighted test: M = 17, weights 1 and 2")
    add("envoy_maglev_default", "envoy-maglev",
        N("10.2.0.1:443,10.2.0.2:443*3,10.2.0.3:443,10.2.0.4:443*2,10.2.0.5:443@joining"))
    # Cassandra: explicit tokens
    cass = [Node("10.0.0.1", tokens=[-9000000000000000000, -3074457345618258603, 3074457345618258602]),
            Node("10.0.0.2", tokens=[-6148914691236517206, 0, 6148914691236517205]),
            Node("10.0.0.3", tokens=[-4611686018427387904, 4611686018427387904, 9223372036854775807]),
            Node("10.0.0.4", tokens=[-1, 1, -9223372036854775807])]
    add("cassandra_tokens", "cassandra", cass,
        comment="tokens are signed; the ring is in signed order")
    cass2 = [Node("10.0.1.1", where="dc1/rack1", tokens=[-100, 5000000000000000000]),
             Node("10.0.1.2", where="dc1/rack2", tokens=[-7000000000000000000, 2000000000000000000]),
             Node("10.0.1.3", where="dc1/rack1", tokens=[-2000000000000000000, 7000000000000000000]),
             Node("10.0.1.4", where="dc1/rack2", state="joining",
                  tokens=[-4500000000000000000, 100, 8000000000000000000])]
    add("cassandra_joining", "cassandra", cass2, replication=(3, "node"),
        comment="10.0.1.4 bootstraps with three tokens")
    # Redis Cluster
    add("redis_slots", "redis",
        [Node("127.0.0.1:7000", slots=[(0, 5460)]),
         Node("127.0.0.1:7001", slots=[(5461, 10922)]),
         Node("127.0.0.1:7002", slots=[(10923, 16383)])],
        comment="redis-cli --cluster create's ranges for three masters")
    add("redis_slots_split", "redis",
        [Node("e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca", slots=[(0, 99), (8000, 16383)]),
         Node("67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1", slots=[(100, 4000)]),
         Node("292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f", slots=[(4001, 7999)])],
        comment="40-hex node names, one node with two ranges")
    add("redis_even4", "redis", N("127.0.0.1:7003,127.0.0.1:7000,127.0.0.1:7002,127.0.0.1:7001"),
        comment="no slots: the even split by id, 4096 slots each")
    # chosen tokens
    add("tokens_three", "tokens",
        [Node("t-b", points=[5000000000000000000]),
         Node("t-a", points=[100, 9000000000000000000]),
         Node("t-c", points=[15000000000000000000, 18446744073709551615])],
        comment="unsigned points, node order as given; the top point 2^64-1")
    add("tokens_joining", "tokens",
        [Node("t-a", points=[100, 9000000000000000000]),
         Node("t-b", points=[5000000000000000000]),
         Node("t-d", state="joining", points=[12000000000000000000, 3000000000000000000])],
        replication=(2, "node"))
    # listed partition tables
    add("partitions_q8", "partitions",
        [Node("p-c", partitions=[(6, 7, 0)]), Node("p-a", partitions=[(0, 2, 0)]),
         Node("p-b", partitions=[(3, 5, 0)])],
        {"partitions": 8}, comment="keys by the top 3 bits of XXH3")
    add("partitions_q4_n2_rack", "partitions",
        [Node("p-a", where="eu/z1/r1", partitions=[(0, 1, 0), (2, 2, 1)]),
         Node("p-b", where="eu/z1/r2", partitions=[(2, 3, 0), (0, 0, 1)]),
         Node("p-c", where="eu/z2/r3", partitions=[(1, 1, 1), (3, 3, 1)])],
        {"partitions": 4, "replicas": 2, "spread": "rack"}, replication=(2, "rack"),
        comment="every rank is in the fingerprint: p0 a,b; p1 a,c; p2 b,a; p3 b,c")
    return C


def location_cases():
    """Encoding 2 only: snapshots that differ in nothing but where a node is, and
    whose copies therefore differ (encoding 1 gave each pair one fingerprint)."""
    C = []

    def add(name, strategy, nodes, params=None, replication=(0, "node"), comment=None):
        C.append((name, strategy, params or {}, replication, nodes, comment))

    add("ring_zone_d_in_z1", "ring", N("a~eu/z1,b~eu/z2,c~eu/z3,d~eu/z1"), replication=(3, "zone"),
        comment="d shares zone z1 with a")
    add("ring_zone_d_in_z2", "ring", N("a~eu/z1,b~eu/z2,c~eu/z3,d~eu/z2"), replication=(3, "zone"),
        comment="the same but d in z2: other copies, another fingerprint")
    add("ring_zone_renamed", "ring", N("a~eu/zone-x,b~eu/zone-y,c~eu/zone-z,d~eu/zone-x"),
        replication=(3, "zone"), comment="ring_zone_d_in_z1 with other zone names: the same copies, its fingerprint")
    add("ring_rack_same_name_two_zones", "ring", N("a~eu/z1/r1,b~eu/z2/r1,c~eu/z1/r2,d~eu/z2/r2"),
        replication=(2, "rack"), comment="rack r1 of z1 and rack r1 of z2 are two racks")
    add("maglev_region", "maglev", N("m1~eu,m2~us,m3~eu,m4~ap"), {"table-size": 251},
        replication=(2, "region"), comment="a location with the region alone")
    return C


def strategy_cases():
    """Encoding 2 only: strategies a snapshot holds since fingerprint encoding 2
    (documents stating encoding 1 were written before they could)."""
    C = []

    def add(name, strategy, nodes, params=None, replication=(0, "node"), comment=None):
        C.append((name, strategy, params or {}, replication, nodes, comment))

    add("multiprobe_default", "multiprobe", N("mp-c,mp-a,mp-b,mp-d"),
        comment="probes omitted: the default 21 is in the fingerprint")
    add("multiprobe_k5_joining", "multiprobe", N("n2,n10,n1,n3@joining"), {"probes": 5},
        comment="current n1,n10,n2; pending with n3; nodes in id order")
    add("multiprobe_replicas2_zone", "multiprobe", N("a~eu/z1,b~eu/z2,c~eu/z1,d~eu/z2,e~eu/z3"),
        {"probes": 41}, replication=(2, "zone"), comment="copies from the preference order, spread over zones")
    add("multiprobe_leaving_left", "multiprobe", N("s1,s2@leaving,s3,s4@left"), {"probes": 1},
        comment="K = 1: the successor of the key point alone")
    add("anchor_default", "anchor", N("a-c,a-a,a-b,a-d"),
        comment="capacity 0: the 4 nodes; removed omitted: none; buckets in the order given")
    add("anchor_cap8_joining", "anchor", N("n2,n10,n1,n3@joining"), {"capacity": 8},
        comment="now R = [7,6,5,4,3]; n3 takes bucket 3 (the top of R) after the transition")
    add("anchor_cap8_history", "anchor", N("b0,b2,b4,b5,b7"), {"capacity": 8, "removed": [6, 1, 3]},
        comment="removed stack bottom first: 6, then 1, then 3; working 0,2,4,5,7")
    add("anchor_leaving_joining_left", "anchor", N("s1,s2@leaving,s3,s4@left,s5@joining"),
        {"capacity": 6, "removed": [5, 4, 3]},
        comment="s2 (bucket 1) leaves, then s5 takes bucket 1 back (LIFO); s4 a tombstone")
    add("memento_plain", "memento", N("m0,m1,m2,m3,m4"),
        comment="nothing removed: jump over 5 buckets")
    add("memento_history", "memento", N("m0,m2,m3,m5,m6"), {"removed": [4, 1]},
        comment="n = 7; bucket 4 removed first (replacer 6), then 1 (replacer 5)")
    add("memento_leaving_last_joining", "memento", N("k0,k1,k2@leaving,k3@joining,k9@left"),
        comment="k2 holds the last bucket: it leaves by shrinking the table, and k3 appends bucket 2")
    add("memento_leaving_middle", "memento", N("k0,k1@leaving,k2,k3"), {"removed": []},
        comment="k1 leaves: bucket 1 joins the memento with replacer 3")
    add("jumpback_ten", "jumpback", N(",".join(f"shard-{i}" for i in (3, 1, 4, 0, 5, 9, 2, 6, 8, 7))),
        comment="JumpBackHash: buckets in the order given, not id order")
    add("jumpback_joining", "jumpback", N("s0,s1,s2,s3,s4@joining"), comment="push_back of s4")
    add("jumpback_leaving", "jumpback", N("s0,s1,s2,s3@leaving"), comment="pop_back of s3")
    add("jumpback_seventy", "jumpback", N(",".join(f"node-{i}" for i in range(70))),
        comment="bucket ranges past 64")
    add("mpchash_default", "mpchash", N("shard-3,shard-1,shard-4,shard-2"),
        comment="go-mpchash: SipHash-2-4 points, buckets in the order given; probes omitted: 21")
    add("mpchash_k5_joining", "mpchash", N("g2,g10,g1,g3@joining"), {"probes": 5},
        comment="current g2,g10,g1; pending with g3 appended")
    add("mpchash_replicas2_zone", "mpchash", N("a~eu/z1,b~eu/z2,c~eu/z1,d~eu/z2,e~eu/z3"),
        {"probes": 41}, replication=(2, "zone"), comment="the replication header and the location block")
    add("mpchash_leaving_left", "mpchash", N("s1,s2@leaving,s3,s4@left"), {"probes": 1},
        comment="K = 1: the successor of H(key, 1) alone")
    return C


def read_only_cases():
    """Encoding 2 only: read-only nodes (draining: they own keys now and none after, as
    leaving ones do, and take no new values), whose ids the fingerprint appends."""
    C = []

    def add(name, strategy, nodes, params=None, replication=(0, "node"), comment=None):
        C.append((name, strategy, params or {}, replication, nodes, comment))

    add("ring_read_only", "ring", N("cache-b,cache-a,cache-c@read_only"),
        comment="current cache-a,b,c; pending cache-a,b; ring_leaving's placements, another fingerprint")
    add("ring_leaving", "ring", N("cache-b,cache-a,cache-c@leaving"),
        comment="the same placements with cache-c leaving")
    add("rendezvous_read_only_sorted", "rendezvous", N("r-z@read_only,r-b,r-y@read_only,r-a@joining"),
        comment="two read-only ids, hashed in bytewise order (r-y, r-z), beside a joining node")
    add("anchor_read_only", "anchor", N("a-a,a-b@read_only,a-c,a-d"),
        comment="pending removes a-b's bucket as for a leaving node")
    add("maglev_read_only_replicated", "maglev", N("m-a~eu/z1,m-b~eu/z2,m-c~eu/z3,m-d@read_only~eu/z1"),
        {"table-size": 251}, replication=(2, "zone"), comment="with copies over zones")
    return C


def contract_cases():
    """Encoding 2 only: partition tables under claim contract 2 (README, "Chosen
    points": a partitions document states "contract": 2 among its parameters; one
    that states none, or states 1, is contract 1 and its parameters, hashed, do not
    hold it). A listed table is the placement either way: the contract enters the
    fingerprint as a parameter, and decides the claims that derive later tables."""
    C = []

    def add(name, strategy, nodes, params=None, replication=(0, "node"), comment=None):
        C.append((name, strategy, params or {}, replication, nodes, comment))

    add("partitions_q8_contract2", "partitions",
        [Node("p-c", partitions=[(6, 7, 0)]), Node("p-a", partitions=[(0, 2, 0)]),
         Node("p-b", partitions=[(3, 5, 0)])],
        {"partitions": 8, "contract": 2},
        comment="partitions_q8 under contract 2: the same probe, another fingerprint")
    add("partitions_q4_n2_rack_contract2", "partitions",
        [Node("p-a", where="eu/z1/r1", partitions=[(0, 1, 0), (2, 2, 1)]),
         Node("p-b", where="eu/z1/r2", partitions=[(2, 3, 0), (0, 0, 1)]),
         Node("p-c", where="eu/z2/r3", partitions=[(1, 1, 1), (3, 3, 1)])],
        {"partitions": 4, "replicas": 2, "spread": "rack", "contract": 2}, replication=(2, "rack"),
        comment="partitions_q4_n2_rack under contract 2")
    add("partitions_q8_contract1_stated", "partitions",
        [Node("p-c", partitions=[(6, 7, 0)]), Node("p-a", partitions=[(0, 2, 0)]),
         Node("p-b", partitions=[(3, 5, 0)])],
        {"partitions": 8, "contract": 1},
        comment="contract 1 stated is contract 1 left out: partitions_q8's fingerprint")
    return C


def override_cases():
    """Cases with overrides: (name, strategy, params, replication, nodes, overrides, comment)."""
    C = []

    def add(name, strategy, nodes, overrides, params=None, replication=(0, "node"), comment=None):
        C.append((name, strategy, params or {}, replication, nodes, overrides, comment))

    add("ring_override", "ring", N("cache-b,cache-a,cache-c"), [("hot:celebrity", "cache-b")],
        comment="ring_default with one override: another fingerprint, the same probe")
    add("ring_overrides_unsorted", "ring", N("cache-b,cache-a,cache-c"),
        [("user:9", "cache-c"), ("hot:celebrity", "cache-b"), ("hot:celeb", "cache-a")],
        comment="given out of key order; hashed in bytewise order (hot:celeb < hot:celebrity < user:9)")
    add("ring_override_probe_key", "ring", N("cache-b,cache-a,cache-c"), [("keyplace.probe.0", "cache-a")],
        comment="an override of a probe key leaves the probe digest as it is")
    add("rendezvous_override_joining", "rendezvous", N("r-a,r-b,r-c@joining"), [("hot:1", "r-a")],
        comment="current r-a,r-b; pending r-a,r-b,r-c; the override names an active node")
    add("maglev_override_replicated", "maglev", N("m-a~eu/z1,m-b~eu/z2,m-c~eu/z3"), [("hot:2", "m-c")],
        {"table-size": 251}, replication=(2, "zone"), comment="with copies: the override node first")
    return C


# --- self-tests against the systems' own vectors ------------------------------

def read_lines(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        return [ln.rstrip("\n") for ln in f if ln.strip() and not ln.startswith("#")]


def check_jump_vectors():
    for ln in read_lines("guava_jump_31.1.txt"):
        _, k, b, r = ln.split()
        assert jump_guava(int(k), int(b)) == int(r), ln
    for ln in read_lines("jump_paper.txt"):
        _, k, b, r = ln.split()
        assert jump_paper(int(k), int(b)) == int(r), ln


def check_jumpback_vectors():
    """hash4j 0.30.0's own values (Hash4jJumpBackVectors.java), the pairs of its
    checksum loop included."""
    n = 0
    for ln in read_lines("jumpback_hash4j_0.30.0.txt"):
        f = ln.split()
        if f[0] == "jumpback":
            assert jumpback_hash(int(f[1]), int(f[2])) == int(f[3]), ln
            n += 1
        elif f[0] == "checksum_head":
            assert jumpback_hash(int(f[3]), int(f[2])) == int(f[4]), ln
    assert n > 4000, n


def check_node_hashring(name, cls, servers, weights, limit=20000):
    """node-hashring's 100000-key fixtures: key = decimal i."""
    digits = []
    for ln in read_lines(os.path.join("ketama", name)):
        if ln.startswith(("servers ", "md5 ")):
            continue
        digits.append(ln)
    digits = "".join(digits)
    nodes = [Node(s, float(w)) for s, w in zip(servers, weights)]
    p = cls(nodes, {})
    for i in range(limit):
        want = servers[int(digits[i]) - 1]
        assert p.owner_of(str(i).encode()).id == want, (name, i)


def check_libmemcached_fixture(name, cls):
    servers = [f"10.0.1.{i}" for i in range(1, 9)]
    weights = [600, 300, 200, 350, 1000, 800, 950, 100]
    p = cls([Node(s, float(w)) for s, w in zip(servers, weights)], {})
    for ln in read_lines(os.path.join("ketama", name)):
        key, khash, _point, server = ln.split(" ")
        assert p.key_hash(key.encode()) == int(khash), ln
        assert p.owner_of(key.encode()).id == server, (name, ln)


def check_mpchash():
    """SipHash-2-4 on its authors' 64 vectors, then go-mpchash's compat.out:
    New(shard-1 .. shard-6000, siphash64seed, {1, 2}, 21), line i the owner of
    shard-(i+1)."""
    key = bytes(range(16))
    k0, k1 = int.from_bytes(key[:8], "little"), int.from_bytes(key[8:], "little")
    n = 0
    for ln in read_lines("siphash24_vectors.txt"):
        i, want = ln.split()
        assert siphash24(k0, k1, bytes(range(int(i)))) == int(want, 16), ln
        n += 1
    assert n == 64, n
    want = read_lines(os.path.join("mpchash", "compat.out"))
    assert len(want) == 6000
    p = Mpchash(N(",".join(f"shard-{i}" for i in range(1, 6001))), {"probes": 21})
    for i, w in enumerate(want):
        assert p.owner_of(f"shard-{i + 1}".encode()).id == w, (i, w)


def self_test():
    # digests and hex order
    assert hex128(xxh3_128(b"abc")) == "06b05ab6733a618578af5f94892f3950"  # xxhsum -H2
    assert xxhash.xxh3_128_hexdigest(b"abc") == hex128(xxh3_128(b"abc"))
    assert len(b"keyplace.fingerprint/1") == 22 and len(b"keyplace.snapshot/1") == 19
    # jump: the paper's function and Guava's, against the stored tables
    check_jump_vectors()
    check_jumpback_vectors()
    check_mpchash()
    # ketama dialects: the counts the README names, then the fixtures
    assert libmemcached_points_per_server(1, 25, 25) == 156
    assert libmemcached_points_per_server(1, 10, 10) == 160
    assert [libmemcached_points_per_server(1, n, n) for n in (47, 50, 55, 61, 71, 94, 100)] == [156] * 7
    short = [libmemcached_points_per_server(w, 190, 19) for w in range(1, 20)]
    assert short[14] < 15 * 160 * 19 // 190 and all(
        short[i] == (i + 1) * 16 for i in range(19) if i != 14), short
    hr = HashRing(N("s218,s714"), {})
    shared = [e for e in hr.pts if e[0] == 1697340005]
    assert len(hr.pts) == 240 and len(shared) == 2, shared
    assert all(hr.nodes[s].id == "s714" for _, s in shared)
    assert hr.key_hash(b"k265") == 1682463378 and hr.owner_of(b"k265").id == "s714"
    lk = LibKetama([Node(f"s{i}") for i in range(61)], {})
    assert len(lk.pts) == 61 * 39 * 4
    check_node_hashring("node_hashring_hash_ring.txt", HashRing,
                        [f"0.0.0.{i}" for i in range(1, 6)], range(1, 6))
    check_node_hashring("node_hashring_ketama.txt", LibKetama,
                        [f"0.0.0.{i}" for i in range(1, 6)], range(1, 6))
    check_node_hashring("node_hashring_pylibmc.txt", KetamaWeighted,
                        ["0.0.0.1:11211", "0.0.0.2:11211", "0.0.0.3",
                         "0.0.0.4:11213", "0.0.0.5:11212"], [1] * 5)
    check_libmemcached_fixture("libmemcached_weighted.txt", KetamaWeighted)
    check_libmemcached_fixture("libmemcached_spy.txt", KetamaSpy)
    # Envoy: Basic ring (min ring 12), weighted tiny ring, ring sizes, Maglev tables
    ports = lambda a, b: [Node(f"127.0.0.1:{p}") for p in range(a, b + 1)]
    basic = EnvoyRing(ports(90, 95), {"hash": "xxh64", "min-ring-size": 12,
                                      "max-ring-size": 8388608})
    assert [h for h, _ in basic.ring][:3] == [833437586790550860, 928266305478181108,
                                              1033482794131418490]
    assert [n.id[-2:] for _, n in basic.ring] == "94 92 90 95 93 91 91 93 95 92 94 90".split()
    mm = EnvoyRing(ports(80, 85), {"hash": "murmur2-envoy", "min-ring-size": 12,
                                   "max-ring-size": 8388608})
    assert [h for h, _ in mm.ring][:2] == [1358027074129602068, 4361834613929391114]
    tiny = ports(90, 92)
    for n, w in zip(tiny, (1, 2, 3)):
        n.weight = float(w)
    t = EnvoyRing(tiny, {"hash": "xxh64", "min-ring-size": 6, "max-ring-size": 6})
    assert [(h, n.id[-1]) for h, n in t.ring] == [
        (928266305478181108, "2"), (4443673547860492590, "2"), (5583722120771150861, "1"),
        (6311230543546372928, "1"), (13444792449719432967, "2"), (16117243373044804889, "0")]
    for n, size in ((3, 1026), (7, 1029), (12, 1032), (100, 1100)):
        r = EnvoyRing([Node(f"10.0.0.1:{i}") for i in range(n)],
                      {"hash": "xxh64", "min-ring-size": 1024, "max-ring-size": 8388608})
        assert len(r.ring) == size, (n, len(r.ring))
    four = EnvoyRing(ports(90, 93), {"hash": "xxh64", "min-ring-size": 6, "max-ring-size": 6})
    assert [sorted(n.id for _, n in four.ring).count(f"127.0.0.1:{p}")
            for p in range(90, 94)] == [2, 1, 2, 1]
    g = EnvoyMaglev(ports(90, 95), {"table-size": 7})
    assert [int(n.id[-1]) for n in g.table] == [2, 4, 0, 1, 5, 0, 3]
    wn = ports(90, 91)
    wn[1].weight = 2.0
    g = EnvoyMaglev(wn, {"table-size": 17})
    assert [int(n.id[-1]) for n in g.table] == [1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1]
    # Cassandra: Java tail, text tokens
    assert to_signed64(murmur3_x64_128(b"\xff")[0]) == -4442228696663692417
    assert murmur3_x64_128(b"\xff", java_tail=False)[0] == 5177511712917721324
    for k, tok in (("a", -8839064797231613815), ("abc", -5434086359492102041),
                   ("hello", -3758069500696749310), ("cassandra", 356242581507269238),
                   ("0123456789abcde", -6472281833689111727),
                   ("0123456789abcdef", 5467490433528156583),
                   ("this is a longer test key for murmur3 hashing", -7889617755374116647)):
        assert cassandra_token(k.encode()) == tok, k
    assert cassandra_token(bytes(range(0x80, 0x8a))) == -7623170703309721106
    assert cassandra_token(bytes([0xff, 0xfe])) == -2002833339314343643
    # Redis
    assert crc16_xmodem(b"123456789") == 0x31C3
    for k, s in (("somekey", 11058), ("foo{hash_tag}", 2515), ("foo", 12182),
                 ("foo{}{bar}", 8363), ("foo{{bar}}zap", 4015), ("foo{bar}{zap}", 5061),
                 ("{user1000}.following", 3443), ("", 0)):
        assert redis_slot(k.encode()) == s, k


# --- output ---------------------------------------------------------------------

HEADER = """\
# keyplace snapshot digests, contract version 1: golden values
# generated by tests/golden/generate_snapshot_digests.py (independent Python
# reference written from the README: "Snapshots" -> "Fingerprint" and
# "Probe digest", the contract sections and "Compatibility modes").
#
# One line per snapshot, fields separated by one space:
#   case NAME strategy=S params=P replication=COUNT/SPREAD nodes=NODES fingerprint=HEX probe=HEX
# S       a snapshot strategy name (ring, rendezvous, jump, jump-guava, maglev,
#         modulo, envoy-ring, envoy-maglev, ketama, ketama-spy,
#         ketama-unweighted, libketama, hash-ring, cassandra, redis, tokens,
#         partitions).
# P       "-" (none given), or NAME:VALUE pairs separated by ','; a VALUE of
#         decimal digits is a number, anything else a name. Parameters left out
#         take their defaults, which the fingerprint includes.
# COUNT   replication count; SPREAD node, rack, zone or region.
# NODES   node entries separated by ',', in the description's order (jump's
#         buckets, the compat rings' server index, Envoy's ring host order):
#           ID[*WEIGHT][@STATE][~REGION/ZONE/RACK][#TOKEN;TOKEN...][$FIRST-LAST;...]
#             [%POINT;POINT...][^FIRST-LAST[:RANK];...]
#         WEIGHT a decimal double (default 1.0); STATE joining, active (default),
#         leaving or left; ~ the location (trailing parts may be absent);
#         # Cassandra tokens, signed decimal; $ Redis slot ranges, inclusive;
#         % the chosen points of "tokens", unsigned decimal; ^ partition spans,
#         inclusive, at RANK (default 0).
#         Ids contain none of , * @ ~ # $ % ^ or white space.
# HEX     32 lowercase hex digits, the high half first (xxhsum -H2): the
#         snapshot's fingerprint() (over current() and pending()) and its
#         probe_digest() (current()'s owners of keyplace.probe.0 .. 4095).
# The cluster, epoch, addresses and metadata are not in either digest.
# Lines starting with '#' are comments; "# NAME: ..." notes precede a case."""

OVERRIDES_HEADER = """\
# Cases with overrides (README, "Overrides") have one more field, before fingerprint:
#   overrides=KEY>ID;KEY>ID...  each KEY placed on node ID, in the order given (the
#         fingerprint takes them in bytewise order of key); keys and ids contain
#         none of ; > or white space. The probe digest does not see overrides."""


def params_text(params):
    """P of a golden line: NAME:VALUE pairs; a list of numbers is [A;B;...]."""
    def value(v):
        return "[" + ";".join(str(x) for x in v) + "]" if isinstance(v, list) else str(v)
    return ",".join(f"{k}:{value(v)}" for k, v in params.items()) if params else "-"


def main():
    encoding = 2
    if sys.argv[1:] == ["--encoding", "1"]:
        encoding = 1
    elif sys.argv[1:]:
        sys.exit("usage: generate_snapshot_digests.py [--encoding 1]")
    header = HEADER if encoding == 1 else HEADER.replace(
        "# keyplace snapshot digests, contract version 1: golden values",
        "# keyplace snapshot digests, contract version 1, fingerprint encoding 2:\n# golden values").replace(
        "#         partitions).", "#         partitions, multiprobe, anchor, memento,\n#         jumpback, mpchash).").replace(
        "#         decimal digits is a number, anything else a name.",
        "#         decimal digits is a number, [A;B;...] a list of numbers, anything\n#         else a name.").replace(
        "#         leaving or left; ~ the location", "#         leaving, read_only or left; ~ the location")
    out = [header, f"keyplace-snapshot-digests {encoding}"]
    plain = cases() + (location_cases() + strategy_cases() + contract_cases() + read_only_cases()
                       if encoding >= 2 else [])
    for name, strategy, params, (count, spread), nodes, comment in plain:
        fp, probe = snapshot_digests(strategy, params, count, spread, nodes, encoding=encoding)
        ptxt = params_text(params)
        if comment:
            out.append(f"# {name}: {comment}")
        out.append(f"case {name} strategy={strategy} params={ptxt} "
                   f"replication={count}/{spread} "
                   f"nodes={','.join(n.spec() for n in nodes)} "
                   f"fingerprint={hex128(fp)} probe={hex128(probe)}")
    out.append(OVERRIDES_HEADER)
    for name, strategy, params, (count, spread), nodes, overrides, comment in override_cases():
        fp, probe = snapshot_digests(strategy, params, count, spread, nodes, overrides, encoding)
        ptxt = params_text(params)
        if comment:
            out.append(f"# {name}: {comment}")
        out.append(f"case {name} strategy={strategy} params={ptxt} "
                   f"replication={count}/{spread} "
                   f"nodes={','.join(n.spec() for n in nodes)} "
                   f"overrides={';'.join(f'{k}>{n}' for k, n in overrides)} "
                   f"fingerprint={hex128(fp)} probe={hex128(probe)}")
    text = "\n".join(out) + "\n"
    text.encode("ascii")
    sys.stdout.buffer.write(text.encode("ascii"))


if __name__ == "__main__":
    self_test()
    main()
