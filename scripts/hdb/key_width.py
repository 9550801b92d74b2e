"""32- vs 64-bit keys side by side: the cases a run measured at both key widths (the typed `key`
parameter of ra and tpch), paired on everything else, compared per tuple. An input of a given size
holds fewer 64-bit-key tuples than 32-bit ones (12 against 8 bytes with one value), so GB/s alone
would flatter the wider key: the comparison is in tuples per second and time per tuple."""
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

from . import plausibility, results
from .util import Row, size_text

KEY_PARAM = "key"
WIDTHS = (32, 64)


def case_label(r: Row) -> str:
    """The id without key and size: 'select/parallel[dist=uniform,selectivity=0.5]'."""
    return results.variant_label(r, drop=(KEY_PARAM,), with_test=True, with_backend=False)


def pairs(rows: Iterable[Row]) -> list[tuple[Row, Row]]:
    """[(row at 32 bits, row at 64 bits)]: verified, kernel-timed rank-0 results that differ only in
    the key width, one pair per series at the largest size both widths ran; in the rows' order.
    Host execution (cuda-host) is left out: its times are no processor's; so is a result with a figure
    above the physical ceiling of its run (plausibility.py)."""
    series: OrderedDict[tuple[Any, ...], dict[int, dict[int, Row]]] = OrderedDict()
    for r in plausibility.plausible(results.processor_rows(rows)):
        k = r["params"].get(KEY_PARAM)
        if r["status"] != "ok" or r["rank"] != 0 or not r["kernel_median_s"] or not r["elements"] or k not in WIDTHS:
            continue
        rest = {p: v for p, v in r["params"].items() if p != KEY_PARAM}
        key = (r["benchmark"], r["backend"], r["test"], r["variant"], r["transfer"], results.params_key(rest))
        series.setdefault(key, {}).setdefault(r["size_bytes"], {})[k] = r
    out = []
    for sizes in series.values():
        both = [s for s, d in sizes.items() if all(w in d for w in WIDTHS)]
        if both:
            d = sizes[max(both)]
            out.append((d[32], d[64]))
    return out


def tuples_per_s(r: Row) -> float:
    return r["elements"] / r["kernel_median_s"]


def time_per_tuple_ratio(r32: Row, r64: Row) -> float:
    """How much longer a 64-bit-key tuple takes than a 32-bit one (1.5: 50 % longer)."""
    return tuples_per_s(r32) / tuples_per_s(r64)


def table(ps: Sequence[tuple[Row, Row]]) -> tuple[list[str], list[list[str]]]:
    header = ["benchmark", "backend", "case", "size", "Mtuples/s 32-bit", "Mtuples/s 64-bit", "GB/s 32-bit",
              "GB/s 64-bit", "time per tuple 64/32"]
    body = []
    for r32, r64 in ps:
        body.append([r32["benchmark"], r32["backend"], case_label(r32), size_text(r32["size_bytes"]),
                     f"{tuples_per_s(r32) / 1e6:.3g}", f"{tuples_per_s(r64) / 1e6:.3g}",
                     f"{r32['kernel_gbps']:.3g}" if r32["kernel_gbps"] else "-",
                     f"{r64['kernel_gbps']:.3g}" if r64["kernel_gbps"] else "-",
                     f"{time_per_tuple_ratio(r32, r64):.2f}x"])
    return header, body
