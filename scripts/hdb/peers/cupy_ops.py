"""The suite's RA primitives as a CuPy user writes them (docs/peers.md, "CuPy"): NumPy-style array
calls on the GPU, no kernel of the user's own. Every function takes the array module `xp` (cupy; numpy
for the CPU stand-in the tests run where no GPU is), the relations as lists of columns (key first,
then the values) and the case's args, and returns the answer's columns in the suite's column order.

What each operation uses, the way CuPy offers it:
- project: a copy of the chosen columns; select: a boolean mask and boolean indexing;
- sort: argsort (CuPy's is stable, a radix sort) and a gather per column;
- unique: per key the first tuple in input order: the stable argsort's first index of each run of
  equal keys; reduce: sum (64-bit) / min / max per value column;
- reduce_by_key: the runs of the stable argsort numbered, then cupy.add.at / minimum.at / maximum.at
  into one slot per key (sums wrap modulo 2^32 as the suite's; CuPy 13 deprecates the cupyx.scatter_*
  spelling of the same operations, which the first CuPy run used);
- join: the right side sorted, searchsorted for each left key's range of matches, the pairs made by a
  searchsorted over the running count of matches (no host loop, no data-dependent Python);
- product: repeat (left) and tile (right); add / subtract / multiply: element-wise on the 32-bit
  words, which wrap as the suite's do.
The set operations (multiset union, intersection, difference of tuples) have no CuPy counterpart:
union1d and friends are set operations on 1-D arrays; they are skipped, saying so (NoOp)."""
from __future__ import annotations

from typing import Any

Columns = list[Any]


class NoOp(ValueError):
    """An operation CuPy offers nothing for: its cases are recorded as skipped with this reason."""


class Ops:
    """The array module and its unbuffered in-place folds (ufunc.at: cupy.add.at, minimum.at, maximum.at
    on a GPU; NumPy's in the stand-in)."""

    def __init__(self, xp: Any) -> None:
        self.xp = xp
        self.scatter = {"sum": xp.add.at, "min": xp.minimum.at, "max": xp.maximum.at}


def _runs(xp, keys):
    """(order, first): the stable argsort of keys and, in sorted order, True where a run of equal keys begins."""
    order = xp.argsort(keys, kind="stable")
    ks = keys[order]
    first = xp.ones(len(ks), dtype=bool)
    if len(ks) > 1:
        first[1:] = ks[1:] != ks[:-1]
    return order, first


def project(ops, rels, args):
    return [rels[0][c].copy() for c in args["columns"]]


def select(ops, rels, args):
    c = rels[0][args["attribute"]]
    mask = (c >= args["lo"]) & (c <= args["hi"])
    return [col[mask] for col in rels[0]]


def sort(ops, rels, args):
    order = ops.xp.argsort(rels[0][0], kind="stable")
    return [col[order] for col in rels[0]]


def unique(ops, rels, args):
    order, first = _runs(ops.xp, rels[0][0])
    keep = order[first]
    return [col[keep] for col in rels[0]]


# A fold's identity, which an empty relation's reduce answers (the suite's: 0, 0xffffffff, 0).
IDENTITY = {"sum": 0, "min": 0xFFFFFFFF, "max": 0}


def reduce(ops, rels, args):
    xp, fold = ops.xp, args["op"]
    out = []
    for v in rels[0][1:]:
        if len(v) == 0:
            x = xp.asarray([IDENTITY[fold]], dtype=xp.uint64)
        elif fold == "sum":
            x = v.sum(dtype=xp.uint64).reshape(1)
        else:
            x = (v.min() if fold == "min" else v.max()).astype(xp.uint64).reshape(1)
        out.append(x)
    return out


def reduce_by_key(ops, rels, args):
    xp, fold = ops.xp, args["op"]
    keys = rels[0][0]
    order, first = _runs(xp, keys)
    slot = xp.cumsum(first) - 1  # the key's slot, in sorted order
    out = [keys[order[first]]]
    for v in rels[0][1:]:
        acc = xp.full(int(first.sum()), IDENTITY[fold], dtype=v.dtype) if fold != "sum" else \
            xp.zeros(int(first.sum()), dtype=v.dtype)
        ops.scatter[fold](acc, slot, v[order])
        out.append(acc)
    return out


def join(ops, rels, args):
    xp = ops.xp
    a, b = rels
    order = xp.argsort(b[0], kind="stable")
    bk = b[0][order]
    lo = xp.searchsorted(bk, a[0], side="left")
    count = xp.searchsorted(bk, a[0], side="right") - lo
    ends = xp.cumsum(count)
    total = int(ends[-1]) if len(ends) else 0
    pos = xp.arange(total, dtype=ends.dtype)
    ai = xp.searchsorted(ends, pos, side="right")  # the left row of each output pair
    bi = order[lo[ai] + pos - (ends[ai] - count[ai])]
    return [a[0][ai]] + [v[ai] for v in a[1:]] + [v[bi] for v in b[1:]]


def product(ops, rels, args):
    xp = ops.xp
    a, b = rels
    na, nb = len(a[0]), len(b[0])
    return [xp.repeat(c, nb) for c in a] + [xp.tile(c, na) for c in b]


def _arith(fn):
    def run(ops, rels, args):
        a, b = rels
        return [a[0].copy()] + [fn(x, y) for x, y in zip(a[1:], b[1:], strict=True)]
    return run


OPS = {"project": project, "select": select, "sort": sort, "unique": unique, "reduce": reduce,
       "reduce_by_key": reduce_by_key, "join": join, "product": product,
       "add": _arith(lambda x, y: x + y), "subtract": _arith(lambda x, y: x - y),
       "multiply": _arith(lambda x, y: x * y)}
NO_OP = {"set_union", "set_intersection", "set_difference"}


def operation(op):
    """The function of an RA operation; NoOp when CuPy has nothing for it."""
    if op in OPS:
        return OPS[op]
    if op in NO_OP:
        raise NoOp(f"CuPy has no multiset {op.split('_', 1)[1]} of tuples (union1d, intersect1d and setdiff1d are "
                   "set operations on 1-D arrays)")
    raise NoOp(f"no CuPy mapping for the RA operation '{op}'")
