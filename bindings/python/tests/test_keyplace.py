"""The Python module: documents in, placements out, equal to the library's (the golden digests are
an independent Python reference's), every bad input refused with its code and value."""

import json
import os
import threading

import numpy as np
import pytest

import keyplace

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "golden", "snapshot_digests_v2.txt")


def golden_digest(name):
    """(strategy, nodes, copies, fingerprint, probe) of a case of the golden digest table."""
    with open(GOLDEN, encoding="utf-8") as f:
        for line in f:
            if line.startswith(f"case {name} "):
                fields = dict(part.split("=", 1) for part in line.split()[2:])
                return (fields["strategy"], fields["nodes"].split(","), int(fields["replication"].split("/")[0]),
                        fields["fingerprint"], fields["probe"])
    raise KeyError(name)


@pytest.mark.parametrize("case", ["ring_default", "rendezvous_replicas3", "jump_ten"])
def test_digests_equal_the_independent_reference(case):
    strategy, nodes, copies, fingerprint, probe = golden_digest(case)
    s = keyplace.build(strategy, nodes, copies=copies)
    assert (s.fingerprint, s.probe) == (fingerprint, probe)
    # The canonical document reads back as the same snapshot.
    again = keyplace.Snapshot(s.to_json())
    assert (again.fingerprint, again.probe) == (fingerprint, probe)
    assert s.document["fingerprint"] == fingerprint


def zones(n=9):
    return [{"id": f"n{i}", "zone": f"z{i % 3}", "region": "eu"} for i in range(n)]


def test_every_key_form_places_alike():
    s = keyplace.build("ring", zones(), copies=3, spread="zone")
    keys = [f"user:{i}" for i in range(20000)] + ["", "ключ", "a\x00b"]
    want = np.array([s.node_ids.index(s.owner(k)) for k in keys], dtype=np.uint32)
    assert (s.locate_many(keys) == want).all()
    assert (s.locate_many([k.encode() for k in keys]) == want).all()
    assert (s.locate_many(np.array(keys, dtype=object)) == want).all()
    assert (s.locate_many(np.array(keys)) == want).all()  # 'U': str, an inner NUL kept
    assert (s.locate_many(np.array([k.encode() for k in keys])) == want).all()  # 'S'
    # NumPy drops an item's trailing NULs when it reads it back: so do the batches.
    assert s.locate_many(np.array(["ab\x00"]))[0] == s.node_ids.index(s.owner("ab"))
    assert s.locate_many(np.array([b"ab\x00"]))[0] == s.node_ids.index(s.owner("ab"))
    with pytest.raises(ValueError) as e:
        s.locate_many(np.array(["ok", "\ud800"]))
    assert "key 1" in str(e.value) and "55296" in str(e.value)
    assert s.locate(keys[:5]) == [s.owner(k) for k in keys[:5]]
    points = np.array([s.point_of(k) for k in keys[:1000]], dtype=np.uint64)
    assert (s.locate_many(points) == want[:1000]).all()
    assert all(s.owner_at(int(p)) == s.owner(k) for p, k in zip(points[:100], keys))


@pytest.mark.parametrize("strategy, space", [("ketama", 1 << 32), ("redis", 16384), ("maglev", 65537),
                                             ("ring", 1 << 64)])
def test_pictures_span_the_strategy_s_own_space(strategy, space):
    # ketama's continuum is 32-bit, Redis places by 16,384 slots, Maglev by 65,537 entries.
    s = keyplace.build(strategy, [f"10.0.0.{i}:11211" for i in range(3)])
    n = 512
    across = s.owners_across(n)
    assert len(set(across.tolist())) == 3
    for i in range(0, n, 17):
        assert s.node_ids[across[i]] == s.owner_at(i * space // n)
    p = s.point_of("user:42")
    assert s.position_of("user:42") == pytest.approx((p % space) / space, abs=1e-12)


def test_copies_follow_the_replication():
    s = keyplace.build("ring", zones(), copies=3, spread="zone")
    zone = {n["id"]: n["zone"] for n in zones()}
    for i in range(2000):
        c = s.copies(f"k{i}")
        assert len(c) == 3 and c[0] == s.owner(f"k{i}")
        assert len({zone[x] for x in c}) == 3, c  # one copy per zone
        assert s.copies_at(s.point_of(f"k{i}")) == c
    assert s.write_set("k1") == s.copies("k1")  # no transition: the copies


def test_locate_n_is_the_preference_order():
    s = keyplace.build("rendezvous", [f"n{i}" for i in range(8)])
    for i in range(500):
        five = s.locate_n(f"k{i}", 5)
        assert len(set(five)) == 5 and five[0] == s.owner(f"k{i}")
        assert s.locate_n(f"k{i}", 3) == five[:3]
    assert len(s.locate_n("k", 20)) == 8  # at most the nodes
    jump = keyplace.build("jump", ["a", "b", "c"])
    assert jump.locate_n("k", 1) == [jump.owner("k")]
    with pytest.raises(keyplace.Error) as e:
        jump.locate_n("k", 2)
    assert "no preference order" in str(e.value) and "2" in str(e.value)


def test_a_join_moves_only_to_the_joiner():
    before = keyplace.build("ring", [f"n{i}" for i in range(5)])
    after = keyplace.build("ring", [f"n{i}" for i in range(6)])
    m = keyplace.movement(before, after)
    assert m["exact"]
    share = {n["id"]: n["share"] for n in after.ownership()["nodes"]}
    # Minimal change: what moves is exactly what the joiner owns, and the least any placement moves.
    assert m["moved"] == pytest.approx(share["n5"], abs=1e-12)
    assert m["moved"] == pytest.approx(m["minimum"], abs=1e-12)
    plan = keyplace.plan(before, after)
    assert plan["totals"] and all(t["to"] == "n5" for t in plan["totals"])
    assert sum(t["fraction"] for t in plan["totals"]) == pytest.approx(m["moved"], abs=1e-12)
    # Over keys: the keys that changed owner all went to n5; about the share (10^5 keys, 5 sigma).
    keys = [f"key-{i}" for i in range(100000)]
    a, b = before.locate(keys), after.locate(keys)
    moved = [(x, y) for x, y in zip(a, b) if x != y]
    assert all(y == "n5" for _, y in moved)
    sigma = (m["moved"] * (1 - m["moved"]) / len(keys)) ** 0.5
    assert abs(len(moved) / len(keys) - m["moved"]) < 5 * sigma


def test_ownership_and_coownership():
    jump = keyplace.build("jump", [f"b{i}" for i in range(7)])
    o = jump.ownership()
    assert o["method"] == "expected" and all(n["share"] == pytest.approx(1 / 7) for n in o["nodes"])
    ring = keyplace.build("ring", [f"n{i}" for i in range(4)], copies=3)
    assert sum(n["share"] for n in ring.ownership()["nodes"]) == pytest.approx(1)
    c = ring.coownership()
    # Four nodes, three copies: at most C(4,3) = 4 copy sets, and every pair shares one.
    assert 1 <= c["copysets"] <= 4 and c["pairs"] == 6 and c["pair_fraction"] == 1


def test_the_strategy_table():
    rows = {r["name"]: r for r in keyplace.strategies()}
    assert {"ring", "rendezvous", "jump", "maglev", "anchor", "memento", "partitions", "mpchash"} <= set(rows)
    ring_vnodes = next(p for p in rows["ring"]["params"] if p["name"] == "vnodes")
    assert ring_vnodes["default"] == 160
    # Every row builds from the table's own defaults (where its nodes need no per-node data).
    for name, row in rows.items():
        if row["perNode"] in ("none", "partitions", "slots"):
            nodes = [{"id": f"n{i}", "weight": 1.0} for i in range(4)]
            s = keyplace.build(name, nodes, params={"table-size": 13} if "maglev" in name else None)
            assert s.owner("k") in s.node_ids, name


def doc(**over):
    d = keyplace.document("ring", ["a", "b"])
    d.update(over)
    return d


@pytest.mark.parametrize("bad, code, words", [
    ("{", 29, "invalid JSON at byte 2"),
    ({"format": "keyplace.snapshot/1", "cluster": "c", "epoch": 1}, 29, "strategy"),
    (keyplace.document("ring", ["a"], params={"vnodes": 0}), 5, "0"),
    (keyplace.document("maglev", ["a"], params={"table-size": 100}), 10, "100"),
    (keyplace.document("rings", ["a"]), 30, "rings"),
    (keyplace.document("ring", ["a", "a"]), 3, "a"),
    (keyplace.document("ring", [{"id": "a", "weight": -1}]), 4, "-1"),
    (doc(fingerprint="0" * 32), 28, "fingerprint"),
    (keyplace.document("ring", ["a"], copies=2), 21, "2"),
])
def test_bad_documents_are_refused_by_name(bad, code, words):
    with pytest.raises(keyplace.Error) as e:
        keyplace.Snapshot(bad)
    assert e.value.code == code, (e.value.code, str(e.value))
    assert words in str(e.value)
    assert e.value.reason  # the code's meaning
    assert len(str(e.value)) < 1000


def test_bad_arguments_raise_python_errors():
    s = keyplace.build("ring", ["a", "b"])
    with pytest.raises(TypeError):
        s.owner(42)
    with pytest.raises(TypeError):
        keyplace.Snapshot(42)
    with pytest.raises(TypeError):
        s.locate_many(np.array([1.5, 2.5]))
    with pytest.raises(ValueError):
        s.locate_many(np.zeros((2, 2), dtype=np.uint64))
    with pytest.raises(TypeError):
        s.locate_many(["a", 3])
    with pytest.raises(TypeError):  # a point is an unsigned 64-bit integer
        s.owner_at(-1)
    with pytest.raises(TypeError):
        s.owner_at(1 << 64)
    with pytest.raises(IndexError):
        s._s.node_id(2)


def test_a_list_changed_during_a_batch_is_read_as_it_was():
    # The lookups run without the interpreter lock: the batch reads a tuple of the keys taken
    # when it starts, so a thread replacing the list's items (each by an equal, new str) frees
    # none of the bytes it reads, and every owner is the key's. Reading freed strings, a first
    # version got some 16,000 of 300,000 owners wrong.
    s = keyplace.build("ring", [f"n{i}" for i in range(10)])
    keys = [f"ключ-{i}" for i in range(300000)]  # not ASCII: bytes in each str's UTF-8 cache
    want = s.locate_many(list(keys))
    stop = threading.Event()

    def churn():
        i = 0
        while not stop.is_set():
            j = i % len(keys)
            keys[j] = "".join(["ключ-", str(j)])  # equal, but a new object: the old one is freed
            i += 1

    t = threading.Thread(target=churn)
    t.start()
    try:
        for _ in range(3):
            assert (s.locate_many(keys) == want).all()
    finally:
        stop.set()
        t.join()


def test_big_endian_str_arrays_place_as_native_ones():
    s = keyplace.build("ring", [f"n{i}" for i in range(10)])
    keys = ["a", "ключ", "\U00010000x"]
    want = s.locate_many(np.array(keys, dtype="<U6"))
    assert (s.locate_many(np.array(keys, dtype=">U6")) == want).all()
    assert want.tolist() == [s.node_ids.index(s.owner(k)) for k in keys]


def test_points_are_refused_where_keys_are_placed_by_their_bytes():
    s = keyplace.build("mpchash", ["a", "b", "c"])
    for f in (lambda: s.owner_at(5), lambda: s.copies_at(5),
              lambda: s.locate_many(np.array([5], dtype=np.uint64))):
        with pytest.raises(keyplace.Error) as e:
            f()
        assert e.value.code == 8 and "places a key by its bytes" in str(e.value)


def test_batches_from_several_threads():
    # The lookups run without the interpreter lock: four threads at once place as one does.
    s = keyplace.build("maglev", zones(), params={"table-size": 65537})
    keys = np.array([f"k{i}".encode() for i in range(200000)])
    want = s.locate_many(keys)
    got = [None] * 4

    def work(i):
        got[i] = s.locate_many(keys)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all((g == want).all() for g in got)


def test_errors_pickle():
    import pickle

    with pytest.raises(keyplace.Error) as e:
        keyplace.Snapshot(keyplace.document("rings", ["a"]))
    again = pickle.loads(pickle.dumps(e.value))
    assert (again.code, str(again), again.where) == (e.value.code, str(e.value), e.value.where)


def test_the_readme_session_places_alike():
    # README's keyplace-cli session (which the tests run): user:42 -> cache-a, user:44 -> cache-c.
    s = keyplace.build("ring", ["cache-a", "cache-b", "cache-c"], copies=2)
    assert s.locate(["user:42", "user:44"]) == ["cache-a", "cache-c"]
    assert s.copies("user:42") == ["cache-a", "cache-c"]  # the module docstring's example
