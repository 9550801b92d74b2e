"""The GPU targets of docs/performance.md judged from one run's results: for each target the
measured figure, the goal, and whether it is met. Every figure is a ratio taken within the same
run (% of that run's measured device-copy ceiling, of the PCIe link's theoretical rate, or one
variant's time over another's), so the table says how close the implementations come to the
machine they ran on. A target without the results it needs says so; it is never guessed. A result
with a figure above the physical ceiling of its run (plausibility.py) judges no target: it is left
out, and the target's detail names it ("left out, above the run's ceiling: ...")."""
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from . import plausibility, results
from .contract import format_size
from .util import Document, Row, StrPath

Target = dict[str, Any]  # one judged target: target, figure, goal, unit, met, detail

LARGE = 256 << 20  # the streaming targets are judged beyond the 50-60 MB L2 of a Hopper GPU


def load_rows(folder: StrPath) -> tuple[list[Row], list[Document]]:
    """Rows (results.rows_of) and documents of every result file under `folder`, however nested:
    gpu-check keeps one run-all run per benchmark."""
    docs: list[Document] = []
    for dirpath, _dirs, _files in os.walk(folder):
        if Path(dirpath).name != results.RAW_DIR:
            continue
        docs += results.load_docs(Path(dirpath).parent)
    # Host execution (cuda-host) is no GPU: its times judge no target.
    docs = results.processor_docs(docs)
    rows = [r for _, r in results.checked_pairs(docs)]  # each checked against the run's ceilings
    return rows, docs


def _ok(rows, **match):
    """ok and verified results whose fields equal `match`, read by name (results measured under
    --no-verify judge nothing, nor do those with a figure above the physical ceiling of the run)."""
    return plausibility.plausible(_matching(rows, **match))


def _matching(rows, **match):
    return [r for r in results.processor_rows(rows) if r["status"] == "ok" and r["checked"]
            and not r.get("contradicted_by") and all(r[k] == v for k, v in match.items())]


def _left_out(res, rows, **match):
    """Names in the target's detail the results it would have read that are above the run's ceiling
    (left out by _ok): a target never looks met, or unmeasured, on their account without saying so."""
    above = [r for r in _matching(rows, **match) if plausibility.above_ceiling(r)]
    if above:
        res.setdefault("above_ceiling", []).extend(r["id"] for r in above)
        shown = ", ".join(r["id"] for r in above[:3]) + (f" and {len(above) - 3} more" if len(above) > 3 else "")
        res["detail"] += f"; left out, above the run's ceiling: {shown}"
    return res


def _largest(rows, at_least=0):
    rows = [r for r in rows if r["size_bytes"] >= at_least]
    if not rows:
        return []
    top = max(r["size_bytes"] for r in rows)
    return [r for r in rows if r["size_bytes"] == top]


_size = format_size  # sizes as the ids print them (contract.format_size)


def _result(name, figure, goal, unit, detail, higher_is_better=True):
    met = None if figure is None else (figure >= goal if higher_is_better else figure <= goal)
    return {"target": name, "figure": figure, "goal": goal, "unit": unit, "met": met, "detail": detail}


def _missing(name, goal, unit, what):
    return _result(name, None, goal, unit, f"no results: {what}")


def pcie_link_gbps(docs: Iterable[Document]) -> tuple[float | None, dict[str, Any]]:
    for d in results.processor_docs(docs):
        if d["backend"] == "cuda":
            link = d.get("context", {}).get("device", {}).get("pcie", {})
            if link.get("theoretical_gbps_per_direction"):
                return link["theoretical_gbps_per_direction"], link
    return None, {}


def bus_targets(rows: Sequence[Row], docs: Iterable[Document]) -> list[Target]:
    link, info = pcie_link_gbps(docs)
    out = []
    for test in ("h2d", "d2h"):
        # The host<->device copies are test h2d/d2h, variant copy; their bandwidth is the transfer's.
        name = f"bus {test} pinned, % of PCIe link"
        pinned = _ok(rows, benchmark="bus", backend="cuda", test=test, variant="copy", transfer="pinned")
        if not pinned or not link:
            out.append(_left_out(_missing(name, 75, "%", "bus-cuda pinned copies and the PCIe link (NVML/sysfs)"),
                                 rows, benchmark="bus", backend="cuda", test=test, variant="copy"))
            continue
        best = max(pinned, key=lambda r: r["transfer_gbps"] or 0)
        pageable = _ok(rows, benchmark="bus", backend="cuda", test=test, variant="copy", transfer="pageable")
        pg = max((r["transfer_gbps"] or 0 for r in pageable), default=None)
        detail = (f"{best['transfer_gbps']:.1f} GB/s at {_size(best['size_bytes'])} of {link:.1f} GB/s "
                  f"(gen{info.get('max_gen', '?')} x{info.get('max_width', '?')})")
        if pg is not None:
            detail += f"; pageable {pg:.1f} GB/s"
        out.append(_left_out(_result(name, 100 * (best["transfer_gbps"] or 0) / link, 75, "%", detail), rows,
                             benchmark="bus", backend="cuda", test=test, variant="copy"))
    return out


def _pct_target(rows, name, goal, benchmark, test, variants=None, prefer="tuned", backend="cuda"):
    """% of the device-copy ceiling (by declared minimum bytes moved) at the largest size >= 256 MB:
    the `prefer` variant where it exists, else the best; the least favourable parameter set, from
    sorted input where the test has the choice."""
    # The operator's own speed: cases from unsorted input (ra's input=unsorted) time a sort with it.
    cand = [r for r in _ok(rows, benchmark=benchmark, backend=backend, test=test)
            if (variants is None or r["variant"] in variants) and r["params"].get("input") != "unsorted"]
    cand = _largest(cand, LARGE)
    if not cand:
        return _left_out(_missing(name, goal, "%", f"{benchmark}-{backend} {test} at >= 256M"), rows,
                         benchmark=benchmark, backend=backend, test=test)
    names = sorted({r["variant"] for r in cand})
    if prefer in names:
        chosen = prefer
    else:
        chosen = max(names, key=lambda v: min(r["pct_of_peak"] or 0 for r in cand if r["variant"] == v))
    worst = min((r for r in cand if r["variant"] == chosen), key=lambda r: r["pct_of_peak"] or 0)
    detail = (f"{chosen} at {_size(worst['size_bytes'])}: {worst['kernel_median_s'] * 1e3:.1f} ms, "
              f"{worst['moved_gbps']:.0f} GB/s moved"
              + (f" [{worst['params_text']}]" if worst["params_text"] else ""))
    return _left_out(_result(name, worst["pct_of_peak"], goal, "%", detail), rows, benchmark=benchmark,
                     backend=backend, test=test)


def ra_targets(rows: Sequence[Row]) -> list[Target]:
    out = [_pct_target(rows, f"ra {t}, % of device copy", 75, "ra", t)
           for t in ("select", "project", "reduce", "add", "subtract", "multiply", "unique")]
    out.append(_pct_target(rows, "ra join, % of device copy", 40, "ra", "join"))
    return out


def merge_targets(rows: Sequence[Row]) -> list[Target]:
    out = [
        _pct_target(rows, "merge 1b merge path, % of device copy", 60, "merge", "dict_merge", {"merge_path"}),
        _pct_target(rows, "merge 2b re-encode, % of device copy", 60, "merge", "reencode", prefer="lookup"),
    ]
    name = "duplicate removal (sort + unique, u32), G keys/s"
    cand = [r for r in _ok(rows, benchmark="merge", backend="cuda", test="delta_dict")
            if r["params"].get("type") == "u32"]
    if cand:
        best = max(cand, key=lambda r: (r["elements"], r["elements_per_s"] or 0))
        out.append(_result(name, (best["elements_per_s"] or 0) / 1e9, 20, "G keys/s",
                           f"{best['variant']}, {best['elements']:,} keys [{best['params_text']}]"))
    else:
        out.append(_missing(name, 20, "G keys/s", "merge-cuda delta_dict with u32 values"))
    _left_out(out[-1], rows, benchmark="merge", backend="cuda", test="delta_dict")
    out.append(_speedup(rows, "overlapped chunks vs copy-compute-copy (whole merge)", 1.5, "merge", "merge",
                        slow="inorder", fast="overlap", field="total_median_s", at_least=LARGE,
                        transfer="pinned"))
    return out


def _speedup(rows, name, goal, benchmark, test, slow, fast, field, at_least=0, transfer=None,
             slow_backend="cuda", fast_backend="cuda"):
    """Time of `slow` over time of `fast` for the same parameters and size (the largest both have),
    the least favourable parameter set."""
    def keyed(variant, backend):
        rs = _ok(rows, benchmark=benchmark, backend=backend, test=test, variant=variant)
        if transfer:
            rs = [r for r in rs if r["transfer"] == transfer]
        return {(results.params_key(r["params"]), r["size_bytes"]): r for r in rs if r[field]}
    a, b = keyed(slow, slow_backend), keyed(fast, fast_backend)
    common = [k for k in a if k in b and k[1] >= at_least]
    if not common:
        res = _missing(name, goal, "x", f"{benchmark} {test} {slow} and {fast} on equal inputs")
    else:
        top = max(k[1] for k in common)
        ratio, k = min(((a[k][field] / b[k][field], k) for k in common if k[1] == top), key=lambda x: x[0])
        params = b[k]["params_text"]
        res = _result(name, ratio, goal, "x", f"{slow} / {fast} at {_size(k[1])}" + (f" [{params}]" if params else ""))
    for variant, backend in ((slow, slow_backend), (fast, fast_backend)):
        _left_out(res, rows, benchmark=benchmark, backend=backend, test=test, variant=variant)
    return res


def tpch_targets(rows: Sequence[Row]) -> list[Target]:
    return [_speedup(rows, f"tpch {k} fused vs operator-at-a-time", 2, "tpch", k, slow="operator", fast="fused",
                     field="kernel_median_s") for k in ("A", "B", "C")]


def ngram_targets(rows: Sequence[Row]) -> list[Target]:
    out = []
    for cpu, goal in (("baseline", 20), ("binned", 5)):
        name = f"ngram gpu vs cpu {cpu} (geometric mean over k)"
        gpu = {(r["params"].get("k"), r["size_bytes"]): r
               for r in _ok(rows, benchmark="ngram", backend="cuda", test="search", variant="gpu")}
        ref = {(r["params"].get("k"), r["size_bytes"]): r
               for r in _ok(rows, benchmark="ngram", backend="cpu", test="search", variant=cpu)}
        common = [k for k in gpu if k in ref and gpu[k]["total_median_s"] and ref[k]["total_median_s"]]
        if not common:
            out.append(_missing(name, goal, "x", f"ngram search: cuda gpu and cpu {cpu} on equal text"))
            _left_out(out[-1], rows, benchmark="ngram", backend="cuda", test="search", variant="gpu")
            _left_out(out[-1], rows, benchmark="ngram", backend="cpu", test="search", variant=cpu)
            continue
        top = max(k[1] for k in common)
        ratios = [ref[k]["total_median_s"] / gpu[k]["total_median_s"] for k in common if k[1] == top]
        mean = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        out.append(_result(name, mean, goal, "x", f"{len(ratios)} error levels at {_size(top)} of text, "
                                                  f"range {min(ratios):.1f}..{max(ratios):.1f}x, with transfers"))
        _left_out(out[-1], rows, benchmark="ngram", backend="cuda", test="search", variant="gpu")
        _left_out(out[-1], rows, benchmark="ngram", backend="cpu", test="search", variant=cpu)
    batch = _ok(rows, benchmark="ngram", backend="cuda", test="batch")
    if batch:
        best = max(batch, key=lambda r: r["elements_per_s"] or 0)
        out.append({"target": "ngram batched queries/s (reported)", "figure": best["elements_per_s"], "goal": None,
                    "unit": "queries/s", "met": None,
                    "detail": f"{best['variant']} [{best['params_text']}] at {_size(best['size_bytes'])}"})
    return out


def evaluate(rows: Sequence[Row], docs: Iterable[Document]) -> list[Target]:
    return bus_targets(rows, docs) + ra_targets(rows) + merge_targets(rows) + tpch_targets(rows) + ngram_targets(rows)


def format_table(targets: Iterable[Target]) -> str:
    lines = ["| target | measured | goal | met | how |", "|---|---|---|---|---|"]
    for t in targets:
        fig = "-" if t["figure"] is None else (f"{t['figure']:.3g}" if t["figure"] < 1e6 else f"{t['figure']:.3e}")
        goal = "-" if t["goal"] is None else f">= {t['goal']:g}"
        met = {True: "yes", False: "NO", None: "-"}[t["met"]]
        lines.append(f"| {t['target']} | {fig} {t['unit']} | {goal} | {met} | {t['detail']} |")
    return "\n".join(lines)
