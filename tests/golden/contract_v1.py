"""Primitives of the keyplace placement contract v1 shared by the golden generators.

Written from the contract text (doc/contract.md, "Guarantees and the placement contract"), not from the C++ sources.
"""

import math
import struct
from fractions import Fraction

import xxhash

U64_MAX = (1 << 64) - 1


def xxh3(data: bytes) -> int:
    """XXH3-64 with seed 0, as an unsigned 64-bit integer."""
    return xxhash.xxh3_64_intdigest(data, seed=0)


def le32(x: int) -> bytes:
    return struct.pack("<I", x)


def le64(x: int) -> bytes:
    return struct.pack("<Q", x)


def llround(x: float) -> int:
    """C llround: nearest integer, halves rounded away from zero (exact)."""
    f = Fraction(x)  # exact value of the binary64 number
    mag = math.floor(abs(f) + Fraction(1, 2))
    return mag if f >= 0 else -mag


def quantize(w: float) -> int:
    """q(w) = llround(w * 65536); one exact binary64 multiplication."""
    q = llround(w * 65536.0)
    assert 1 <= q <= (1 << 53), f"weight {w!r} out of range"
    return q


def node_hash(node_id: bytes, j: int) -> int:
    """P_j(id) = XXH3(LE32(len(id)) || id || LE32(j))."""
    return xxh3(le32(len(node_id)) + node_id + le32(j))
