"""keyplace: which node owns a key, from a membership snapshot.

The placement is the C++ library's own (the module runs its headers), so a key placed here lands
where a C++ service, keyplace-cli or the WebAssembly module places it.

    import keyplace
    s = keyplace.build("ring", ["cache-a", "cache-b", "cache-c"], copies=2)
    s.owner("user:42")            # 'cache-a', as keyplace-cli and C++ place it
    s.copies("user:42")           # ['cache-a', 'cache-c']
    s.locate_many(keys)           # NumPy uint32 array: indices into s.node_ids
"""

from __future__ import annotations

import json as _json
from typing import Any, Iterable, Mapping, Sequence

from . import _keyplace

__version__ = _keyplace.version()
SNAPSHOT_FORMAT = "keyplace.snapshot/1"


class Error(Exception):
    """A refusal from the library: code (its number), reason (the code's meaning), the message
    naming the offending value (str(e)), and where (the document field, or "")."""

    def __init__(self, code: int, reason: str, message: str, where: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.where = where

    def __reduce__(self):  # so that an Error survives pickling (multiprocessing)
        return (Error, (self.code, self.reason, str(self), self.where))


def _call(f, *args):
    try:
        return f(*args)
    except _keyplace.Error as e:  # the extension raises (code, reason, message, where)
        raise Error(*e.args) from None


def strategies() -> list[dict[str, Any]]:
    """The strategy table: one dict per strategy a snapshot can hold, with its parameters."""
    return _json.loads(_keyplace.strategies_json())


class Snapshot:
    """A built snapshot: a membership, its strategy and replication, both digests."""

    __slots__ = ("_s", "_doc", "_ids")

    def __init__(self, document: str | bytes | Mapping[str, Any]) -> None:
        """From a snapshot document: its JSON text, or the dict it parses to."""
        if isinstance(document, Mapping):
            document = _json.dumps(document)
        elif isinstance(document, bytes):
            document = document.decode("utf-8")
        elif not isinstance(document, str):
            raise TypeError(f"a snapshot document is str, bytes or a dict, not {type(document).__name__}")
        self._s = _call(_keyplace.Snapshot.load, document)
        self._doc: dict[str, Any] | None = None
        self._ids = [self._s.node_id(i) for i in range(len(self._s))]

    @classmethod
    def from_file(cls, path: str) -> "Snapshot":
        with open(path, encoding="utf-8") as f:
            return cls(f.read())

    # What it is.
    @property
    def document(self) -> dict[str, Any]:
        """The canonical document: every parameter filled in, both digests."""
        if self._doc is None:
            self._doc = _json.loads(self._s.document())
        return self._doc

    def to_json(self) -> str:
        return self._s.document()

    @property
    def node_ids(self) -> list[str]:
        """The document's node ids, in its order: what the indices of locate_many name."""
        return list(self._ids)

    @property
    def fingerprint(self) -> str:
        return self._s.fingerprint

    @property
    def probe(self) -> str:
        return self._s.probe

    @property
    def in_transition(self) -> bool:
        return self._s.in_transition

    def __repr__(self) -> str:
        d = self.document
        return f"<keyplace.Snapshot {d['cluster']} epoch {d['epoch']} {d['strategy']['name']}, {len(self._ids)} nodes>"

    # Lookups: a key is str (its UTF-8 bytes) or bytes.
    def owner(self, key: str | bytes) -> str:
        """The node that owns the key now (an override first)."""
        return self._s.owner(key)

    def copies(self, key: str | bytes) -> list[str]:
        """The key's replicas now, owner first: the snapshot's replication (count and spread
        across zones, racks or regions), or the owner alone."""
        return self._s.copies(key)

    def locate_n(self, key: str | bytes, n: int) -> list[str]:
        """The first n distinct nodes of the key's preference order (no spread rule)."""
        return _call(self._s.locate_n, key, n)

    def write_set(self, key: str | bytes) -> list[str]:
        """Every node a write must reach while a transition is open."""
        return self._s.write_set(key)

    def point_of(self, key: str | bytes) -> int:
        """The key's 64-bit point under the strategy's key hash."""
        return self._s.point_of(key)

    def owner_at(self, point: int) -> str:
        """The owner of a 64-bit point (refused where the strategy places a key by its bytes)."""
        return _call(self._s.owner_at, point)

    def copies_at(self, point: int) -> list[str]:
        return _call(self._s.copies_at, point)

    def locate_many(self, keys: Sequence[str | bytes] | Any):
        """Each key's owner as an index into node_ids, a NumPy uint32 array. keys: a sequence of
        str or bytes, or a NumPy array of bytes ('S'), str ('U') or uint64 points. The lookups
        run without the interpreter lock. Points are refused where the strategy places a key by
        its bytes (mpchash)."""
        return _call(self._s.locate_many, keys)

    def locate(self, keys: Iterable[str | bytes]) -> list[str]:
        """Each key's owner id (locate_many, named)."""
        ids = self._ids
        return [ids[i] for i in _call(self._s.locate_many, list(keys))]

    def owners_across(self, n: int):
        """The owners (indices) at n evenly spaced points of the strategy's hash space (a
        table's residues, a ring's points of their width): a picture of it."""
        return self._s.owners_across(n)

    def position_of(self, key: str | bytes) -> float:
        """Where the key falls in owners_across's picture, in [0, 1) (-1: placed by its bytes)."""
        return self._s.position_of(key)

    # Reports.
    def ownership(self) -> dict[str, Any]:
        """Each member's share of the key space now: exact where the strategy has regions."""
        return _json.loads(self._s.ownership_json())

    def coownership(self) -> dict[str, Any]:
        """Distinct copy sets and the node pairs that share one, over the sample points."""
        return _json.loads(self._s.coownership_json())


def movement(before: Snapshot, after: Snapshot) -> dict[str, Any]:
    """What moves between two snapshots' current placements, beside the least any placement must
    move (keyplace-cli snapshot diff's figures)."""
    return _json.loads(_keyplace.movement_json(before._s, after._s))


def plan(before: Snapshot, after: Snapshot) -> dict[str, Any]:
    """The transfer plan: the ranges whose copies change, from whom to whom."""
    return _json.loads(_keyplace.plan_json(before._s, after._s))


def document(strategy: str, nodes: Iterable[str | Mapping[str, Any]], *, params: Mapping[str, Any] | None = None,
             copies: int = 0, spread: str = "node", cluster: str = "keyplace", epoch: int = 1) -> dict[str, Any]:
    """A snapshot document: nodes are ids or dicts with "id" and any of "weight", "state",
    "region", "zone", "rack", "tokens", "slots", "points", "partitions"."""
    return {
        "format": SNAPSHOT_FORMAT,
        "cluster": cluster,
        "epoch": epoch,
        "strategy": {"name": strategy, "contract": 1, "params": dict(params or {})},
        "replication": {"count": copies, "spread": spread},
        "nodes": [{"id": n} if isinstance(n, str) else dict(n) for n in nodes],
    }


def build(strategy: str, nodes: Iterable[str | Mapping[str, Any]], **kw: Any) -> Snapshot:
    """A snapshot built from a strategy name (see strategies()) and nodes: document(...), built."""
    return Snapshot(document(strategy, nodes, **kw))


__all__ = ["Error", "Snapshot", "build", "document", "movement", "plan", "strategies", "SNAPSHOT_FORMAT"]
