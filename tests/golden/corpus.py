#!/usr/bin/env python3
"""The golden vectors of tests/golden/ as one corpus of snapshot documents, in JSON Lines.

Usage: python3 tests/golden/corpus.py [OUT] [--golden-dir DIR]

Every runtime (C++, the Python bindings, the WebAssembly bindings) can only build snapshots and
ask them for owners and copies, so each golden case becomes a snapshot document with the queries
it answers:

  {"kind":"placement","source":F,"case":C,"document":{...},"queries":[Q, ...]}
      Q is {"key":HEX,"owner":ID[,"copies":[ID,...]]} (the key's bytes, hashed by the runtime)
      or {"point":"DECIMAL","owner":ID[,"copies":[...]]} (a 64-bit point: a string, as
      JavaScript numbers cannot hold it), answered by the current placement's pick/copies.
  {"kind":"digest","source":F,"case":C,"document":{...},"fingerprint":HEX,"probe":HEX}
  {"kind":"summary","cases":N,"queries":Q,"digests":D,"skipped":[...],"not_covered":[...]}

What a snapshot cannot answer (a hash function's vectors, a table's internals, a load tracker's
requests) is named in the summary's not_covered list; cases left out, with why, in skipped.
Standard library only; the output depends only on the golden files.
"""

import argparse
import hashlib
import json
import os
import re
import sys
from collections import OrderedDict

FORMAT = "keyplace.snapshot/1"
CLUSTER = "golden"

# A jump-family vector needs a document with as many nodes as it has buckets (up to 2^31 - 1).
# Per source file, bucket counts are taken smallest first while their nodes sum to at most this;
# the rest are listed in skipped. 2^17 keeps every count of the fixed sections up to 65536 of
# jump_paper.txt and guava_jump_31.1.txt, and jumpback's counts up to about a thousand.
MAX_BUCKET_NODES_PER_FILE = 1 << 17


# ---- documents and queries ---------------------------------------------------------------------

def node(node_id, weight=1.0, **extra):
    """A document node: id, weight (a double), then the optional fields given (in doc order)."""
    n = {"id": node_id, "weight": float(weight)}
    for field in ("state", "region", "zone", "rack", "tokens", "slots", "points", "partitions"):
        if extra.get(field) not in (None, "", []):
            n[field] = extra[field]
    return n


def document(strategy, nodes, params=None, copies=0, spread="node", overrides=None, stated=None):
    """A snapshot document (doc/snapshots.md, "JSON"); stated: digests the document asserts."""
    d = {
        "format": FORMAT,
        "cluster": CLUSTER,
        "epoch": 1,
        "strategy": {"name": strategy, "contract": 1, "params": dict(params or {})},
        "replication": {"count": copies, "spread": spread},
        "nodes": nodes,
    }
    if overrides:
        d["overrides"] = [{"key": k, "node": n} for k, n in overrides]
    if stated:
        d.update(stated)
    return d


def key_hex(field):
    """A golden file's key field: lowercase hex, '-' for the empty key."""
    return "" if field == "-" else field.lower()


def key_query(hex_key, owner, copies=None):
    q = {"key": hex_key, "owner": owner}
    if copies is not None:
        q["copies"] = copies
    return q


def point_query(point, owner, copies=None):
    point = int(point)
    if not 0 <= point < 1 << 64:
        raise ValueError(f"point {point} is not an unsigned 64-bit value")
    q = {"point": str(point), "owner": owner}
    if copies is not None:
        q["copies"] = copies
    return q


def copy_count(queries, where):
    """The replication count a case's ranked queries state (0 when none states copies)."""
    counts = {len(q["copies"]) if "copies" in q else 0 for q in queries}
    if len(counts) > 1:
        raise ValueError(f"{where}: queries state different numbers of copies {sorted(counts)}")
    for q in queries:
        if "copies" in q and q["copies"][0] != q["owner"]:
            raise ValueError(f"{where}: copies {q['copies']} do not start with the owner {q['owner']}")
    return counts.pop()


def records(path):
    """The whitespace-split fields of each line that is not blank or a '#' comment."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                yield line.split()


def comments(path):
    with open(path, encoding="utf-8") as f:
        return [line for line in f if line.startswith("#")]


# ---- the corpus --------------------------------------------------------------------------------

class Corpus:
    def __init__(self, golden_dir, out):
        self.dir = golden_dir
        self.out = out
        self.cases = 0
        self.queries = 0
        self.digests = 0
        self.skipped = []
        self.not_covered = []

    def path(self, name):
        return os.path.join(self.dir, name)

    def emit(self, obj):
        self.out.write(json.dumps(obj, separators=(",", ":")) + "\n")

    def placement(self, source, case, doc, queries):
        if not queries:
            raise ValueError(f"{source} {case}: no queries")
        self.cases += 1
        self.queries += len(queries)
        self.emit({"kind": "placement", "source": source, "case": case, "document": doc, "queries": queries})

    def digest(self, source, case, doc, fingerprint, probe):
        self.digests += 1
        self.emit({"kind": "digest", "source": source, "case": case, "document": doc,
                   "fingerprint": fingerprint, "probe": probe})

    def skip(self, source, case, reason):
        self.skipped.append({"source": source, "case": case, "reason": reason})

    def uncovered(self, source, reason):
        self.not_covered.append({"source": source, "reason": reason})

    def summary(self):
        self.emit({"kind": "summary", "cases": self.cases, "queries": self.queries, "digests": self.digests,
                   "skipped": self.skipped, "not_covered": self.not_covered})


# ---- native tables with key and query lines: ring, multiprobe, maglev, rendezvous ---------------

def ranked_query(f):
    """key HEX POINT OWNER RANKED | query POINT OWNER RANKED (check_golden_query)."""
    if f[0] == "key":
        return key_query(key_hex(f[1]), f[3], f[4].split(","))
    return point_query(f[1], f[2], f[3].split(","))


def native_cases(c, source, header, strategy, on_case, on_line=None):
    """The case ... end blocks of a native file. on_case(fields) gives (name, params);
    on_line(state, fields) takes a file-specific line: it returns the queries it states (None
    for a line it does not know)."""
    state = None

    def finish():
        where = f"{source} {state['name']}"
        count = copy_count(state["queries"], where)
        doc = document(strategy, state["nodes"], state["params"], copies=count)
        c.placement(source, state["name"], doc, state["queries"])
        # Owner-only queries of a case whose others state copies: their own case, without copies,
        # so every case's queries state the same number of copies.
        if state["owners_only"]:
            doc = document(strategy, state["nodes"], state["params"])
            c.placement(source, f"{state['name']} (owners only)", doc, state["owners_only"])

    for f in records(c.path(source)):
        kind = f[0]
        if kind == header:
            continue
        if kind == "case":
            name, params = on_case(f)
            state = {"name": name, "params": params, "nodes": [], "queries": [], "owners_only": [], "index": {}}
        elif state is None:
            if on_line is None or on_line(None, f) is None:
                raise ValueError(f"{source}: unexpected line outside a case: {' '.join(f)}")
        elif kind == "node":
            state["nodes"].append(node(f[1], float(f[2]) if len(f) > 2 else 1.0))
        elif kind in ("key", "query"):
            state["queries"].append(ranked_query(f))
        elif kind == "end":
            finish()
            state = None
        else:
            got = on_line(state, f) if on_line else None
            if got is None:
                raise ValueError(f"{source}: unknown line {' '.join(f)}")
            state["queries"].extend(got)


def ring(c):
    src = "ring_native_v1.txt"
    native_cases(c, src, "keyplace-ring-golden", "ring",
                 lambda f: (f[1], {"vnodes": int(f[3])}),
                 lambda s, f: [] if f[0] == "point" else None)
    c.uncovered(src, "point lines (each ring entry's position and owner) are the ring's internal table; "
                     "its owners are what the file's key and query lines check")


def multiprobe(c):
    src = "multiprobe_native_v1.txt"
    native_cases(c, src, "keyplace-multiprobe-golden", "multiprobe",
                 lambda f: (f[1], {"probes": int(f[2])}),
                 lambda s, f: [] if f[0] in ("point", "probes") else None)
    c.uncovered(src, "point lines (each node's point) and probes lines (a key point's probe start and step) "
                     "are internal; a snapshot answers only owners and copies")


def maglev(c):
    src = "maglev_native_v1.txt"

    def line(s, f):
        # perm i id: node i of the table's id-sorted node list, whose indices slot and entries name.
        if f[0] == "perm":
            s["index"][int(f[1])] = f[2]
            return []
        # pick(point) is entry[point mod M]: slot i, and entry i of a small table, are point i's
        # owner (no copies stated: a case of their own).
        if f[0] == "slot":
            s["owners_only"].append(point_query(f[1], s["index"][int(f[2])]))
            return []
        if f[0] == "entries":
            s["owners_only"].extend(point_query(i, s["index"][int(e)]) for i, e in enumerate(f[1].split(",")))
            return []
        if f[0] in ("table_xxh3", "count"):
            return []
        return None

    native_cases(c, src, "keyplace-maglev-golden", "maglev", lambda f: (f[1], {"table-size": int(f[3])}), line)
    c.uncovered(src, "perm lines (a node's offset and skip), table_xxh3 (a digest of the whole table) and count "
                     "lines (entries a node owns) are the table's internals; slot and entries lines are kept as "
                     "point queries, since pick(point) is entry[point mod M]")


def rendezvous(c):
    src = "rendezvous_native_v1.txt"

    def line(s, f):
        if s is None:  # the log2 table vectors precede the cases
            return [] if f[0] in ("table", "table_xxh3", "log2fix") else None
        return [] if f[0] == "seed" else None

    native_cases(c, src, "keyplace-rendezvous-golden", "rendezvous", lambda f: (f[1], {}), line)
    c.uncovered(src, "table, table_xxh3 and log2fix lines test the fixed-point log2 table and function, and seed "
                     "lines each node's seed and quantized weight: internals of the score, not placements")


# ---- bucket tables with a history: anchor, memento ---------------------------------------------

def bucket_history(c, source, header, strategy):
    """Each state of a case (its start, then after each 'without ID' or 'with ID') as one document:
    the removed buckets as the file states them, the nodes in ascending bucket order (the
    snapshot's i-th node takes the i-th working bucket)."""
    family = None
    state = None

    def finish():
        if state is None:
            return
        owners = state["owners"]
        nodes = [node(owners[b]) for b in sorted(owners)]
        removed = state["removed"]
        name = f"{family['label']}/{family['step']} {state['label']}"
        if strategy == "anchor":
            size = family["capacity"]
            params = {"capacity": size, "removed": removed}
        else:
            size = state["table"]
            params = {"removed": removed}
        if len(nodes) + len(removed) != size or sorted(list(owners) + removed) != list(range(size)):
            raise ValueError(f"{source} {name}: buckets and removed buckets do not make the table of {size}")
        c.placement(source, name, document(strategy, nodes, params), state["queries"])
        family["step"] += 1

    def new_state(label):
        return {"label": label, "owners": {}, "removed": None, "table": None, "queries": []}

    for f in records(c.path(source)):
        kind = f[0]
        if kind == header:
            continue
        if kind == "case":
            if strategy == "anchor":  # case CAPACITY IDS...
                family = {"capacity": int(f[1]), "label": f"capacity {f[1]}, {len(f) - 2} nodes", "step": 0}
            else:  # case IDS...
                family = {"label": f"{len(f) - 1} nodes", "step": 0}
            state = new_state("start")
        elif kind in ("without", "with"):
            finish()
            state = new_state(f"{kind} {f[1]}")
        elif kind == "removed":
            state["removed"] = [int(x) for x in f[1:]]
        elif kind == "table":
            state["table"] = int(f[1])
        elif kind == "owner":  # owner BUCKET ID
            state["owners"][int(f[1])] = f[2]
        elif kind == "point":  # point POINT BUCKET ID
            state["queries"].append(point_query(f[1], f[3]))
        elif kind == "key":  # key HEX POINT ID
            state["queries"].append(key_query(key_hex(f[1]), f[3]))
        elif kind in ("A", "K"):
            pass
        elif kind == "end":
            finish()
            state = None
        else:
            raise ValueError(f"{source}: unknown line {' '.join(f)}")


def anchor(c):
    src = "anchor_native_v1.txt"
    bucket_history(c, src, "keyplace-anchor-golden", "anchor")
    c.uncovered(src, "A and K lines (AnchorHash's anchor and replacement arrays) are internal state; each state's "
                     "capacity, removed stack and owner lines are its document, its point and key lines its queries")


def memento(c):
    bucket_history(c, "memento_native_v1.txt", "keyplace-memento-golden", "memento")


# ---- jump-family vectors: (point, bucket count) -> bucket ---------------------------------------

def jump_family(c, source, strategy, rows):
    """rows: (point, buckets, bucket). One document per bucket count, buckets b0 .. b(n-1) in order
    (node order is the bucket order for these strategies), smallest counts first within the budget."""
    by_count = OrderedDict()
    for point, buckets, bucket in rows:
        if not 0 <= bucket < buckets:
            raise ValueError(f"{source}: bucket {bucket} outside {buckets}")
        by_count.setdefault(buckets, []).append(point_query(point, f"b{bucket}"))
    used = 0
    left = []
    for buckets in sorted(by_count):
        if used + buckets > MAX_BUCKET_NODES_PER_FILE:
            left.append(buckets)
            continue
        used += buckets
        nodes = [node(f"b{i}") for i in range(buckets)]
        c.placement(source, f"buckets {buckets}", document(strategy, nodes), by_count[buckets])
    if left:
        vectors = sum(len(by_count[b]) for b in left)
        c.skip(source, f"buckets {min(left)} to {max(left)}",
               f"{vectors} vectors over {len(left)} bucket counts: a document needs one node per bucket, and these "
               f"counts would take the file past the corpus's {MAX_BUCKET_NODES_PER_FILE} nodes (smallest counts "
               f"first; {used} nodes used); expressible, left out for size")


def jump_paper(c):
    src = "jump_paper.txt"
    jump_family(c, src, "jump", [(int(f[1]), int(f[2]), int(f[3])) for f in records(c.path(src)) if f[0] == "paper"])


def guava_jump(c):
    src = "guava_jump_31.1.txt"
    jump_family(c, src, "jump-guava",
                [(int(f[1]), int(f[2]), int(f[3])) for f in records(c.path(src)) if f[0] == "guava"])


def jumpback(c):
    src = "jumpback_hash4j_0.30.0.txt"
    rows = []
    for f in records(c.path(src)):
        if f[0] == "jumpback":  # jumpback HASH BUCKETS BUCKET
            rows.append((int(f[1]), int(f[2]), int(f[3])))
        elif f[0] == "checksum_head":  # checksum_head CALL BUCKETS HASH BUCKET: the same function
            rows.append((int(f[3]), int(f[2]), int(f[4])))
        elif f[0] != "checksum":
            raise ValueError(f"{src}: unknown line {' '.join(f)}")
    jump_family(c, src, "jumpback", rows)
    c.uncovered(src, "the checksum line (komihash and FNV-1a over 10^6 generated calls, each with its own bucket "
                     "count) is an aggregate of a random stream, not a placement a document can state; its first "
                     "32 calls (checksum_head) are kept as point queries")


# ---- compatibility rings: ketama dialects, go-mpchash ------------------------------------------

def libmemcached_table(c, source, strategy):
    """Columns: key, MD5 key hash, continuum point, host; servers and weights from the header."""
    head = "".join(comments(c.path(source)))
    m = re.search(r"Servers (\d+\.\d+\.\d+\.)(\d+) \.\. \1(\d+), port (\d+), weights ([\d ]+)\.", head)
    prefix, first, last, port = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
    weights = [int(w) for w in m.group(5).split()]
    hosts = [f"{prefix}{i}" for i in range(first, last + 1)]
    if len(hosts) != len(weights):
        raise ValueError(f"{source}: {len(hosts)} servers, {len(weights)} weights")
    nodes = [node(f"{h}:{port}", w) for h, w in zip(hosts, weights)]
    # The owner column is a host; the server's id is host:port (ketama_test.cpp).
    queries = [key_query(f[0].encode("utf-8").hex(), f"{f[3]}:{port}") for f in records(c.path(source))]
    c.placement(source, "ketama_test_cases" + ("_spy" if strategy == "ketama-spy" else ""),
                document(strategy, nodes), queries)


def node_hashring(c, source, strategy, weights):
    servers = None
    digits = []
    md5 = None
    for f in records(c.path(source)):
        if f[0] == "servers":
            servers = f[1:]
        elif f[0] == "md5":
            md5 = f[1]
        else:
            digits.append(f[0])
    digits = "".join(digits)
    # The stored digits must expand to the published fixture (as ketama_test.cpp checks).
    whole = hashlib.md5()
    for i, d in enumerate(digits):
        whole.update(f"{i} {servers[int(d) - 1]}\n".encode())
    if whole.hexdigest() != md5:
        raise ValueError(f"{source}: the expanded fixture's MD5 is not {md5}")
    nodes = [node(s, w) for s, w in zip(servers, weights)]
    queries = [key_query(str(i).encode().hex(), servers[int(d) - 1]) for i, d in enumerate(digits)]
    c.placement(source, "node-hashring fixture", document(strategy, nodes), queries)


def ketama(c):
    libmemcached_table(c, "ketama/libmemcached_weighted.txt", "ketama")
    libmemcached_table(c, "ketama/libmemcached_spy.txt", "ketama-spy")
    c.uncovered("ketama/libmemcached_weighted.txt",
                "the MD5 key hash and continuum point columns are the hash and the ring's internal point; "
                "the host column is checked as each key's owner")
    c.uncovered("ketama/libmemcached_spy.txt",
                "the MD5 key hash column is the key hash; the point column is a copy of the weighted table's "
                "(the file says it is not asserted); the host column is checked as each key's owner")
    # Dialects and weights as ketama_test.cpp builds them (the files' headers name the writers).
    node_hashring(c, "ketama/node_hashring_ketama.txt", "libketama", [1, 2, 3, 4, 5])
    node_hashring(c, "ketama/node_hashring_hash_ring.txt", "hash-ring", [1, 2, 3, 4, 5])
    node_hashring(c, "ketama/node_hashring_pylibmc.txt", "ketama", [1, 1, 1, 1, 1])


def mpchash(c):
    src = "mpchash/compat.out"
    with open(c.path(src), encoding="utf-8") as f:
        want = [line.rstrip("\n") for line in f if line.strip()]
    # go-mpchash's compat_test.go: buckets shard-1 .. shard-N in order, K = 21; line i owns "shard-(i+1)".
    nodes = [node(f"shard-{i}") for i in range(1, len(want) + 1)]
    queries = [key_query(f"shard-{i + 1}".encode().hex(), owner) for i, owner in enumerate(want)]
    c.placement(src, "compat_test", document("mpchash", nodes, {"probes": 21}), queries)


# ---- snapshot digests --------------------------------------------------------------------------

def parse_digest_node(entry):
    """ID[*WEIGHT][@STATE][~REGION/ZONE/RACK][#TOKEN;...][$FIRST-LAST;...][%POINT;...][^FIRST-LAST[:RANK];...]"""
    parts = re.split(r"([*@~#$%^])", entry)
    node_id, fields = parts[0], {}
    weight = 1.0
    for sigil, value in zip(parts[1::2], parts[2::2]):
        if sigil == "*":
            weight = float(value)
        elif sigil == "@":
            fields["state"] = value
        elif sigil == "~":
            where = value.split("/")
            for name, part in zip(("region", "zone", "rack"), where):
                fields[name] = part
        elif sigil == "#":
            fields["tokens"] = [int(t) for t in value.split(";")]
        elif sigil == "$":
            fields["slots"] = [[int(x) for x in r.split("-")] for r in value.split(";")]
        elif sigil == "%":
            fields["points"] = [int(p) for p in value.split(";")]
        else:  # '^': FIRST-LAST[:RANK]; the rank is written only when not 0
            spans = []
            for r in value.split(";"):
                ends, _, rank = r.partition(":")
                first, last = (int(x) for x in ends.split("-"))
                spans.append([first, last] + ([int(rank)] if rank and int(rank) != 0 else []))
            fields["partitions"] = spans
    return node(node_id, weight, **fields)


def parse_params(text):
    """'-', or NAME:VALUE pairs: digits a number, [A;B;...] a list of numbers, else a name."""
    params = {}
    if text == "-":
        return params
    for pair in text.split(","):
        name, _, value = pair.partition(":")
        if value.isdigit():
            params[name] = int(value)
        elif value.startswith("[") and value.endswith("]"):
            params[name] = [int(x) for x in value[1:-1].split(";") if x]
        else:
            params[name] = value
    return params


def digest_table(path):
    """{case name: (document fields, fingerprint, probe)} of a snapshot_digests file, in file order."""
    cases = OrderedDict()
    for f in records(path):
        if f[0] == "keyplace-snapshot-digests":
            continue
        if f[0] != "case":
            raise ValueError(f"{path}: unknown record {f[0]}")
        fields = dict(x.split("=", 1) for x in f[2:])
        known = {"strategy", "params", "replication", "nodes", "overrides", "fingerprint", "probe"}
        if set(fields) - known:
            raise ValueError(f"{path} {f[1]}: unknown fields {sorted(set(fields) - known)}")
        count, spread = fields["replication"].split("/")
        overrides = [tuple(o.split(">")) for o in fields["overrides"].split(";")] if "overrides" in fields else None
        doc = {"strategy": fields["strategy"], "params": parse_params(fields["params"]), "copies": int(count),
               "spread": spread, "nodes": [parse_digest_node(e) for e in fields["nodes"].split(",")],
               "overrides": overrides}
        cases[f[1]] = (doc, fields["fingerprint"], fields["probe"])
    return cases


def digests(c):
    v2 = digest_table(c.path("snapshot_digests_v2.txt"))
    for name, (d, fingerprint, probe) in v2.items():
        c.digest("snapshot_digests_v2.txt", name,
                 document(d["strategy"], d["nodes"], d["params"], d["copies"], d["spread"], d["overrides"]),
                 fingerprint, probe)
    # Encoding 1's fingerprints are what older documents state, and a document stating one still
    # builds (snapshot_digest_test.cpp): the document states the v1 digests, so loading it checks
    # them; the build then reports the current encoding's fingerprint, the v2 case of that name
    # (it differs only where copies spread over racks, zones or regions).
    src = "snapshot_digests_v1.txt"
    for name, (d, fingerprint, probe) in digest_table(c.path(src)).items():
        if name not in v2:
            raise ValueError(f"{src} {name}: no case of that name in snapshot_digests_v2.txt")
        now_fingerprint, now_probe = v2[name][1], v2[name][2]
        if now_probe != probe:
            raise ValueError(f"{src} {name}: the probe differs from v2's")
        c.digest(src, name,
                 document(d["strategy"], d["nodes"], d["params"], d["copies"], d["spread"], d["overrides"],
                          stated={"fingerprint": fingerprint, "probe": probe}),
                 now_fingerprint, probe)


# ---- what no snapshot answers ------------------------------------------------------------------

def not_snapshot_level(c):
    c.uncovered("siphash24_vectors.txt",
                "SipHash-2-4 reference outputs (a hash function's vectors); a snapshot exposes no hash")
    c.uncovered("guava_hashcode_31.1.txt",
                "Guava consistentHash(HashCode, int): the HashCode's bytes padded to a long (padToLong); a "
                "snapshot places key bytes by their XXH3 point or a given point, never a HashCode")
    c.uncovered("bounded_native_v1.txt",
                "bounded loads: each request's owner depends on the loads held by the requests before it, "
                "which needs a live load tracker, not a snapshot's owner or copies")
    c.uncovered("spread_native_v1.txt",
                "hot-key spreading: index lines are spread_index(point, salt, M) and pick lines "
                "locate_spread(strategy, key, K, salt), a salted choice among a key's first K nodes that a "
                "snapshot's owner and copies do not offer")
    c.uncovered("token_allocation_v1.txt",
                "token allocation: each line is the tokens allocate_tokens proposes for the next node joining, "
                "an allocator's output; the file states no key or point owner to query")


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", help="the corpus file (default: stdout)")
    ap.add_argument("--golden-dir", default=here, help="the golden vector files (default: this script's directory)")
    args = ap.parse_args(argv)
    out = open(args.out, "w", encoding="utf-8", newline="\n") if args.out else sys.stdout
    try:
        c = Corpus(args.golden_dir, out)
        for part in (ring, multiprobe, maglev, rendezvous, anchor, memento, jump_paper, guava_jump, jumpback,
                     ketama, mpchash, digests, not_snapshot_level):
            part(c)
        c.summary()
    finally:
        if out is not sys.stdout:
            out.close()


if __name__ == "__main__":
    main()
