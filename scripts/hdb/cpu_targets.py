"""The CPU targets of docs/performance.md (issue 17: CPU baselines a GPU has to beat) judged from one
run's results, as targets.py judges the GPU ones: each figure a ratio within the same run (% of the
ceiling the executable measured for the case's access pattern, the memcpy where it has none; cycles
per tuple from the clock the run measured; one variant's time over another's). A target without the
results it needs says so; it is never guessed."""
import math
from collections.abc import Iterable, Sequence

from . import targets as t
from .targets import Target
from .util import Document, Row

# Streaming primitives: % of their ceiling by declared minimum bytes moved, cpu `parallel`.
STREAMING = (("select", 70), ("project", 70), ("reduce", 70), ("add", 70), ("subtract", 70), ("multiply", 70),
             ("unique", 50), ("reduce_by_key", 50), ("join", 30), ("set_union", 30), ("set_intersection", 30),
             ("set_difference", 30))
LIBRARY_SORTS = ("tbb", "pstl")


def _pct(rows, test, goal):
    return t._pct_target(rows, f"ra {test} parallel, % of its ceiling", goal, "ra", test, variants={"parallel"},
                         prefer="parallel", backend="cpu")


def _at_most(res, goal):
    """A target whose figure must not exceed goal (a time ratio, cycles)."""
    res["goal"], res["goal_text"] = goal, f"<= {goal:g}"
    res["met"] = None if res["figure"] is None else res["figure"] <= goal
    return res


def _sort(rows):
    name = "ra sort parallel / best library sort (time)"
    out = None
    for lib in LIBRARY_SORTS:
        r = t._speedup(rows, name, 1.5, "ra", "sort", slow="parallel", fast=lib, field="kernel_median_s",
                       at_least=t.LARGE, slow_backend="cpu", fast_backend="cpu")
        if r["figure"] is not None and (out is None or out["figure"] < r["figure"]):
            out = r  # parallel / fastest library = the largest of the ratios
    if out is None:
        out = t._missing(name, 1.5, "x", "ra-cpu sort parallel and tbb or pstl at >= 256M")
    return _at_most(out, 1.5)


def _cycles(rows, docs, test, goal):
    """Cycles per tuple per core of a merge step at 1% unique values, cpu parallel, largest size."""
    name = f"merge {test} parallel, cycles per tuple per core (1% unique)"
    cand = [r for r in t._ok(rows, benchmark="merge", backend="cpu", test=test, variant="parallel")
            if float(r["params"].get("unique", -1)) == 1]
    cand = t._largest(cand)
    # extra.cycles_per_tuple_per_core: the kernel's figure and each phase's (merge.md)
    figs = [((r["extra"].get("cycles_per_tuple_per_core") or {}).get("kernel"), r) for r in cand]
    numbers: list[tuple[float, Row]] = [(c, r) for c, r in figs if isinstance(c, (int, float))]
    if not numbers:
        res = t._missing(name, goal, "cycles", f"merge-cpu {test}/parallel at 1% unique with cycles_per_tuple_per_core")
    else:
        c, r = max(numbers, key=lambda x: x[0])
        res = t._result(name, c, goal if goal is not None else 0, "cycles",
                        f"{t._size(r['size_bytes'])} [{r['params_text']}]: {r['kernel_median_s'] * 1e3:.1f} ms")
    if goal is None:  # reported in the same unit, without a goal
        res["goal"], res["met"] = None, None
        return res
    return _at_most(res, goal)


def _ngram(rows):
    out = []
    name = "ngram binned / baseline on GCIDE (mean of per-query speed-ups, geometric mean over k)"
    binned = [r for r in t._ok(rows, benchmark="ngram", backend="cpu", test="search", variant="binned")
              if r.get("extra", {}).get("speedup_mean_of_queries")]
    binned = t._largest(binned)
    if not binned:
        out.append(t._missing(name, 4, "x", "ngram-cpu search/binned with its speed-ups"))
    else:
        means = [r["extra"]["speedup_mean_of_queries"] for r in binned]
        totals = [r["extra"].get("speedup_ratio_of_totals") or 0 for r in binned]
        geo = math.exp(sum(math.log(x) for x in means) / len(means))
        out.append(t._result(name, geo, 4, "x", f"{len(means)} error levels at {t._size(binned[0]['size_bytes'])}: "
                                                f"mean of ratios {min(means):.2f}..{max(means):.2f}x, "
                                                f"ratio of totals {min(totals):.2f}..{max(totals):.2f}x"))
    par = t._speedup(rows, "ngram search: 1 -> all threads (binned / parallel time)", 0, "ngram", "search",
                     slow="binned", fast="parallel", field="total_median_s", slow_backend="cpu", fast_backend="cpu")
    par["goal"], par["met"] = None, None
    out.append(par)
    return out


def _opencl(rows, test):
    name = f"opencl {test} on PoCL / cpu parallel (time)"
    best: dict[tuple[str, int], Row] = {}
    pocl = [r for r in rows if r["backend"].split("-")[0] == "opencl" and r["implementation"] in ("pocl", "")]
    for r in t._ok(pocl, benchmark="ra", test=test):
        k = (r["params_text"], r["size_bytes"])
        if k not in best or r["kernel_median_s"] < best[k]["kernel_median_s"]:
            best[k] = r
    cpu = {(r["params_text"], r["size_bytes"]): r
           for r in t._ok(rows, benchmark="ra", backend="cpu", test=test, variant="parallel")}
    common = [k for k in best if k in cpu]
    if not common:
        return _at_most(t._missing(name, 3, "x", f"ra {test} on opencl and cpu parallel on equal inputs"), 3)
    top = max(k[1] for k in common)
    ratio, k = max((best[k]["kernel_median_s"] / cpu[k]["kernel_median_s"], k) for k in common if k[1] == top)
    return _at_most(t._result(name, ratio, 3, "x", f"{best[k]['variant']} / parallel at {t._size(top)}"), 3)


def evaluate(rows: Sequence[Row], docs: Iterable[Document]) -> list[Target]:
    out = [_pct(rows, test, goal) for test, goal in STREAMING]
    out.append(_sort(rows))
    out.append(_cycles(rows, docs, "reencode", 2))
    out.append(_cycles(rows, docs, "dict_merge", None))
    out.append(_cycles(rows, docs, "merge", None))
    out += _ngram(rows)
    out += [_opencl(rows, "sort"), _opencl(rows, "join")]
    return out


def format_table(after: Iterable[Target], before: Iterable[Target] | None = None) -> str:
    """Markdown: target, goal, the figure before (when given), after, met, how."""
    prev = {x["target"]: x for x in before or []}
    head = "| target | goal |" + (" before |" if before is not None else "") + " after | met | how (after) |"
    lines = [head, "|---|---|" + ("---|" if before is not None else "") + "---|---|---|"]

    def fig(x: Target | None) -> str:
        if x is None or x["figure"] is None:
            return "-"
        return f"{x['figure']:.3g} {x['unit']}"
    for x in after:
        goal = x.get("goal_text") or ("-" if x["goal"] is None else f">= {x['goal']:g}")
        met = {True: "yes", False: "NO", None: "-"}[x["met"]]
        cells = [x["target"], goal] + ([fig(prev.get(x["target"]))] if before is not None else []) + \
                [fig(x), met, x["detail"]]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
