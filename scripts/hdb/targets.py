"""The GPU targets of docs/performance.md judged from one run's results: for each target the
measured figure, the goal, and whether it is met. Every figure is a ratio taken within the same
run (% of the ceiling that run measured for the case's access pattern, the device copy where it
measured no other, of the PCIe link's theoretical rate, or one
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


def _pct_target(rows, name, goal, benchmark, test, variants=None, prefer="tuned", backend="cuda", min_moved=0,
                min_moved_why=""):
    """% of the case's ceiling (by declared minimum bytes moved; the ceiling of its access pattern,
    throughput.ceiling_pattern, or the device copy in a document without pattern ceilings) at the
    largest size >= 256 MB:
    the `prefer` variant where it exists, else the best; the least favourable parameter set, from
    sorted input where the test has the choice. With `min_moved`, only the cases whose declared
    minimum bytes moved are at least that many are judged (`min_moved_why` says why in the detail,
    with how many cases it left out); without it, every case."""
    # The operator's own speed: cases from unsorted input (ra's input=unsorted) time a sort with it.
    cand = [r for r in _ok(rows, benchmark=benchmark, backend=backend, test=test)
            if (variants is None or r["variant"] in variants) and r["params"].get("input") != "unsorted"]
    small = []
    if min_moved:
        small = [r for r in cand if r["size_bytes"] >= LARGE and (r["min_moved_bytes"] or 0) < min_moved]
        cand = [r for r in cand if (r["min_moved_bytes"] or 0) >= min_moved]
    scope = (f"; {min_moved_why}: {len(small)} case{'s' if len(small) != 1 else ''} at >= 256M left out"
             if min_moved else "")
    cand = _largest(cand, LARGE)
    if not cand:
        what = f"{benchmark}-{backend} {test} at >= 256M" + (f" moving >= {_size(min_moved)}" if min_moved else "")
        res = _missing(name, goal, "%", what)
        res["detail"] += scope
        return _left_out(res, rows, benchmark=benchmark, backend=backend, test=test)
    names = sorted({r["variant"] for r in cand})
    if prefer in names:
        chosen = prefer
    else:
        chosen = max(names, key=lambda v: min(r["pct_of_peak"] or 0 for r in cand if r["variant"] == v))
    worst = min((r for r in cand if r["variant"] == chosen), key=lambda r: r["pct_of_peak"] or 0)
    detail = (f"{chosen} at {_size(worst['size_bytes'])}: {worst['kernel_median_s'] * 1e3:.1f} ms, "
              f"{worst['moved_gbps']:.0f} GB/s moved"
              + (f" against the {worst['ceiling_pattern']} ceiling" if worst.get("ceiling_pattern") else "")
              + (f" [{worst['params_text']}]" if worst["params_text"] else "") + scope)
    return _left_out(_result(name, worst["pct_of_peak"], goal, "%", detail), rows, benchmark=benchmark,
                     backend=backend, test=test)


def ra_targets(rows: Sequence[Row]) -> list[Target]:
    out = [_pct_target(rows, f"ra {t}, % of its ceiling", 75, "ra", t)
           for t in ("select", "project", "reduce", "add", "subtract", "multiply", "unique")]
    out.append(_pct_target(rows, "ra join, % of its ceiling", 50, "ra", "join"))
    return out


def device_l2_bytes(docs: Iterable[Document], benchmark: str) -> int:
    """The L2 of the CUDA device that ran `benchmark` (context.device.l2_cache_bytes of its cuda
    document; another cuda document's of the run where that one states none), 0 when unknown."""
    cuda = [d for d in results.processor_docs(docs) if d["backend"] == "cuda"]
    for d in sorted(cuda, key=lambda d: d["benchmark"] != benchmark):
        l2, _ = plausibility.cache_bytes(d)
        if l2:
            return l2
    return 0


def _beyond_l2_target(rows, docs, name, goal, benchmark, test, note="", **kw):
    """_pct_target on the cases whose declared minimum bytes moved are at least twice the device's
    L2: a case that fits the cache times launches and the L2, not the pass over memory. Where the L2
    is unknown, every case at >= 256M, as the detail says."""
    l2 = device_l2_bytes(docs, benchmark)
    if l2:
        res = _pct_target(rows, name, goal, benchmark, test, min_moved=2 * l2,
                          min_moved_why=f"judged on cases moving >= {_size(2 * l2)} (2x the {_size(l2)} L2)", **kw)
    else:
        res = _pct_target(rows, name, goal, benchmark, test, **kw)
        res["detail"] += "; the device's L2 is unknown: every case at >= 256M judged, those inside the cache too"
    res["detail"] += note
    return res


def _duplicate_removal(rows):
    """merge 1a (delta_dict, u32): keys/s of each variant's least favourable case among those with the
    most keys, the variant whose least favourable is the fastest judged (the paper's thrust and the
    tuned radix-sorted pairs alike), its most favourable and the other variants' beside it."""
    name, goal = "duplicate removal (sort + unique, u32), G keys/s", 30
    cand = [r for r in _ok(rows, benchmark="merge", backend="cuda", test="delta_dict")
            if r["params"].get("type") == "u32"]
    if not cand:
        res = _missing(name, goal, "G keys/s", "merge-cuda delta_dict with u32 values")
    else:
        def eps(r):
            return r["elements_per_s"] or 0
        top = max(r["elements"] for r in cand)
        by_variant: dict[str, list[Row]] = {}
        for r in cand:
            if r["elements"] == top:
                by_variant.setdefault(r["variant"], []).append(r)
        worst_of = {v: min(rs, key=eps) for v, rs in by_variant.items()}
        judged = max(worst_of, key=lambda v: eps(worst_of[v]))
        worst, best = worst_of[judged], max(by_variant[judged], key=eps)
        detail = f"{worst['variant']}, {top:,} keys [{worst['params_text']}]"
        if best is not worst:
            detail += (f"; most favourable {eps(best) / 1e9:.1f} G keys/s "
                       f"({best['variant']} [{best['params_text']}])")
        else:
            detail += "; the only case with that many keys"
        others = [f"{v} {eps(r) / 1e9:.1f}" for v, r in sorted(worst_of.items()) if v != judged]
        if others:
            detail += "; the other variants' least favourable: " + ", ".join(others) + " G keys/s"
        res = _result(name, eps(worst) / 1e9, goal, "G keys/s", detail)
    return _left_out(res, rows, benchmark="merge", backend="cuda", test="delta_dict")


def merge_targets(rows: Sequence[Row], docs: Iterable[Document] = ()) -> list[Target]:
    docs = list(docs)
    out = [
        _beyond_l2_target(rows, docs, "merge 1b merge path, % of its ceiling", 60, "merge", "dict_merge",
                          variants={"merge_path", "tuned"}),  # both merge paths: tuned where it ran
        _beyond_l2_target(rows, docs, "merge 2b re-encode, % of its ceiling", 60, "merge", "reencode",
                          prefer="tuned",
                          note="; its lookups against the gather ceiling where the run measured one (issue 46), else "
                               "against the copy ceiling"),
        _duplicate_removal(rows),
    ]
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


def _fused_vs_best(rows, test, goal=2):
    """Kernel time of the fastest non-fused plan (operator, ra-paper, ra-tuned, ...) over fused's, per
    parameter set and size; the largest size both have, the least favourable parameter set; the
    detail names the plan that was fastest there."""
    name = f"tpch {test} fused vs best non-fused plan"
    plans: dict[Any, list[Row]] = {}
    fused = {}
    for r in _ok(rows, benchmark="tpch", backend="cuda", test=test):
        if not r["kernel_median_s"]:
            continue
        key = (results.params_key(r["params"]), r["size_bytes"])
        if r["variant"] == "fused":
            fused[key] = r
        else:
            plans.setdefault(key, []).append(r)
    common = [k for k in fused if k in plans]
    if not common:
        res = _missing(name, goal, "x", f"tpch {test} fused and another plan on equal inputs")
    else:
        top = max(k[1] for k in common)
        ratio, k, other = min(((p["kernel_median_s"] / fused[k]["kernel_median_s"], k, p)
                               for k in common if k[1] == top
                               for p in [min(plans[k], key=lambda r: r["kernel_median_s"])]),
                              key=lambda x: x[0])
        params = fused[k]["params_text"]
        n = len(plans[k])
        which = f"fastest of {n} non-fused plans" if n > 1 else "the only non-fused plan"
        res = _result(name, ratio, goal, "x", f"{other['variant']} ({which}) / fused at {_size(k[1])}"
                      + (f" [{params}]" if params else ""))
    return _left_out(res, rows, benchmark="tpch", backend="cuda", test=test)


def tpch_targets(rows: Sequence[Row]) -> list[Target]:
    return [_fused_vs_best(rows, k) for k in ("A", "B", "C")]


# The cuda executable's `baseline` is the common code's host search: no GPU variant.
NGRAM_HOST_VARIANTS = {"baseline"}


def _ngram_speedup(rows, name, goal, gpu_variants=None, cpu_variants=None):
    """Total time (with transfers) of the fastest of `cpu_variants` (cpu search; None: every one) over
    the fastest of `gpu_variants` (cuda search; None: every GPU one), per error level k and size: the
    geometric mean over the error levels at the largest size both sides have. The detail names the
    variants that were fastest."""
    def best(backend, variants):
        out: dict[Any, Row] = {}
        for r in _ok(rows, benchmark="ngram", backend=backend, test="search"):
            if not r["total_median_s"]:
                continue
            if variants is not None and r["variant"] not in variants:
                continue
            if variants is None and backend == "cuda" and r["variant"] in NGRAM_HOST_VARIANTS:
                continue
            k = (r["params"].get("k"), r["size_bytes"])
            if k not in out or r["total_median_s"] < out[k]["total_median_s"]:
                out[k] = r
        return out
    gpu, cpu = best("cuda", gpu_variants), best("cpu", cpu_variants)
    common = [k for k in gpu if k in cpu]
    if not common:
        gpu_text = "a cuda GPU variant" if gpu_variants is None else "cuda " + "/".join(sorted(gpu_variants))
        cpu_text = "a cpu variant" if cpu_variants is None else "cpu " + "/".join(sorted(cpu_variants))
        res = _missing(name, goal, "x", f"ngram search: {gpu_text} and {cpu_text} on equal text")
    else:
        top = max(k[1] for k in common)
        keys = sorted((k for k in common if k[1] == top), key=lambda k: str(k[0]))
        ratios = [cpu[k]["total_median_s"] / gpu[k]["total_median_s"] for k in keys]
        mean = math.exp(sum(math.log(x) for x in ratios) / len(ratios))

        def fastest(side):
            names = [side[k]["variant"] for k in keys]
            return ", ".join(f"{v} ({names.count(v)} of {len(keys)})" if len(set(names)) > 1 else v
                             for v in sorted(set(names), key=names.index))
        detail = (f"{len(ratios)} error levels at {_size(top)} of text, range {min(ratios):.2g}..{max(ratios):.2g}x, "
                  "with transfers")
        if gpu_variants is None or len(gpu_variants) > 1:
            detail += f"; fastest GPU: {fastest(gpu)}"
        if cpu_variants is None or len(cpu_variants) > 1:
            detail += f"; fastest CPU: {fastest(cpu)}"
        res = _result(name, mean, goal, "x", detail)
    for backend, variants in (("cuda", gpu_variants), ("cpu", cpu_variants)):
        for v in sorted(variants or {""}):
            _left_out(res, rows, benchmark="ngram", backend=backend, test="search", **({"variant": v} if v else {}))
    return res


def ngram_targets(rows: Sequence[Row]) -> list[Target]:
    out = [_ngram_speedup(rows, "ngram best GPU vs best CPU (geometric mean over k)", 5),
           _ngram_speedup(rows, "ngram gpu vs cpu baseline, the paper's (geometric mean over k)", 20,
                          gpu_variants={"gpu"}, cpu_variants={"baseline"})]
    batch = _ok(rows, benchmark="ngram", backend="cuda", test="batch")
    if batch:
        best = max(batch, key=lambda r: r["elements_per_s"] or 0)
        out.append({"target": "ngram batched queries/s (reported)", "figure": best["elements_per_s"], "goal": None,
                    "unit": "queries/s", "met": None,
                    "detail": f"{best['variant']} [{best['params_text']}] at {_size(best['size_bytes'])}"})
    return out


def evaluate(rows: Sequence[Row], docs: Iterable[Document]) -> list[Target]:
    docs = list(docs)
    return (bus_targets(rows, docs) + ra_targets(rows) + merge_targets(rows, docs) + tpch_targets(rows)
            + ngram_targets(rows))


def format_table(targets: Iterable[Target]) -> str:
    lines = ["| target | measured | goal | met | how |", "|---|---|---|---|---|"]
    for t in targets:
        fig = "-" if t["figure"] is None else (f"{t['figure']:.3g}" if t["figure"] < 1e6 else f"{t['figure']:.3e}")
        goal = "-" if t["goal"] is None else f">= {t['goal']:g}"
        met = {True: "yes", False: "NO", None: "-"}[t["met"]]
        lines.append(f"| {t['target']} | {fig} {t['unit']} | {goal} | {met} | {t['detail']} |")
    return "\n".join(lines)
