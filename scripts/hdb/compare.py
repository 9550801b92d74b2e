"""scripts/compare RUN_A RUN_B: results matched by benchmark, backend and result id (rank 0's), side by
side, with the speed-up of B over A and a decision per pair: a difference is marked only where a
Mann-Whitney U test over the two results' trials rejects "same" (two-sided, p adjusted for the number
of tests by Benjamini-Hochberg unless asked otherwise) and the medians differ by at least a stated
minimum effect; a pair with too few trials for the test ever to reject says so (docs/statistics.md). Results
measured without verification (--no-verify) take part only with --include-unverified; results a
peer contradicts (results.contradict) never, and are named. Results of
host execution (cuda-host: the CUDA sources run on the CPU) are never compared: their times are an
emulation's; they are counted under "Not compared" instead. A pair where either result has a figure
above the physical ceiling of its run (plausibility.py) is listed with the verdict "above ceiling",
never called faster or slower, and left out of the figures. An executable of either run whose copy
ceiling moved by more than results.CEILING_SPREAD_WARN during its run is named in one line, in
compare.md and on the console (a memory-bound case's time follows the machine's bandwidth)."""
import csv
import io
import math
import sys
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from scipy import stats

from . import contract, plausibility, plots, results
from .report import Doc, _ms
from .util import StrPath, UsageError, absolute_path, write_atomically

Row = dict[str, Any]     # one result as results.py flattens it
Key = tuple[Any, ...]    # results.match_key: (benchmark, backend, rank, id)
Pair = dict[str, Any]    # a matched result, as match() returns it

ALPHA = 0.05        # a pair differs only where the rank test's (adjusted) p is below this...
MIN_EFFECT = 0.05   # ...and the slower median is at least this share above the faster one (effect_size())
CORRECTIONS = {"bh": "Benjamini-Hochberg", "none": "no correction"}  # --correction: p over the tests
PERMUTATIONS = 9999  # the permutation test's resamples where ties in small samples rule out the exact U test
SEED = 29           # ...and its seed: a comparison prints the same p every time
ABOVE = "above ceiling"  # the verdict of a pair with a figure above the physical ceiling of its run
SAME = "same"


def below_min_text(min_effect: float) -> str:
    """The decision of a pair the test tells apart by less than the minimum effect."""
    return f"same (below the {min_effect * 100:g}% minimum effect)"


def trial_times(row: Row, metric: str) -> list[float]:
    """The seconds of each timed pass behind measured(): kernel_s or total_s, and h2d_s + d2h_s for a
    result that is all bus transfer under 'kernel'."""
    trials = row.get("trials") or []
    if metric == "kernel" and results.transfer_only(row):
        return [float(t.get("h2d_s", 0.0)) + float(t.get("d2h_s", 0.0)) for t in trials]
    return [float(t.get(f"{metric}_s", 0.0)) for t in trials]


def min_p(n_a: int, n_b: int) -> float:
    """The smallest two-sided p a Mann-Whitney U test can reach with n_a and n_b trials: every trial of
    one run below every trial of the other, 2 / C(n_a + n_b, n_a) (3 and 3 trials: 0.1); 1 without trials."""
    return min(1.0, 2 / math.comb(n_a + n_b, n_a)) if n_a and n_b else 1.0


def rank_test(xa: Sequence[float], xb: Sequence[float]) -> float:
    """Two-sided p of scipy's Mann-Whitney U test of the trials of A against those of B: the exact
    distribution for small samples without ties, a permutation test (exact where the permutations are
    few, else PERMUTATIONS of them, seeded) for small samples with ties, the normal approximation with
    its tie correction otherwise. Samples that are all one value (nothing to rank) give 1."""
    ties = len(set(xa) | set(xb)) < len(xa) + len(xb)
    method: Any = "auto"
    if ties and min(len(xa), len(xb)) <= 8:
        method = stats.PermutationMethod(n_resamples=PERMUTATIONS, rng=np.random.default_rng(SEED))
    p = float(stats.mannwhitneyu(xa, xb, alternative="two-sided", method=method).pvalue)
    return 1.0 if math.isnan(p) else min(p, 1.0)


def effect_size(effect: float) -> float:
    """How much slower the slower median of a pair is than the faster, as a share: 0.25 for time B /
    time A = 1.25 and for 0.8 alike, so that swapping A and B changes no decision."""
    return max(effect, 1 / effect) - 1


def too_few_text(n_a: int, n_b: int) -> str:
    return f"too few trials to decide (n={n_a},{n_b}; min p={min_p(n_a, n_b):.2g})"


def decide(pairs: Sequence[Pair], alpha: float = ALPHA, min_effect: float = MIN_EFFECT,
           correction: str = "bh") -> int:
    """Sets each pair's p_adjusted, decision and verdict; returns the number of tests. The tests are
    the pairs the rank test could decide: not above the ceiling, with trials enough that p < alpha is
    possible at all. Their p are adjusted together (correction 'bh': Benjamini-Hochberg, scipy's
    false_discovery_control; 'none': as they are). A pair is 'faster' or 'slower' when its adjusted
    p < alpha and effect_size(effect) >= min_effect; 'same' otherwise."""
    if correction not in CORRECTIONS:
        raise ValueError(f"correction: {correction!r} is not one of {', '.join(CORRECTIONS)}")
    tested = [p for p in pairs if not p["above_ceiling"] and min_p(p["n_a"], p["n_b"]) < alpha]
    ps = [p["p_value"] for p in tested]
    adjusted = [float(q) for q in stats.false_discovery_control(ps, method="bh")] if correction == "bh" and ps \
        else ps
    for p in pairs:
        p["p_adjusted"] = None
        if p["above_ceiling"]:
            p["verdict"], p["decision"] = ABOVE, f"{ABOVE} in {p['above_ceiling']}"
        else:
            p["verdict"], p["decision"] = "", too_few_text(p["n_a"], p["n_b"])
    for p, q in zip(tested, adjusted, strict=True):
        p["p_adjusted"] = q
        if q >= alpha:
            p["decision"] = SAME
        elif effect_size(p["effect"]) < min_effect:
            p["decision"] = below_min_text(min_effect)
        else:
            p["verdict"] = p["decision"] = "faster" if p["effect"] < 1 else "slower"
    return len(tested)


def _index(rows: Iterable[Row], include_unverified: bool) -> OrderedDict[Key, Row]:
    return OrderedDict((results.match_key(r), r) for r in results.processor_rows(rows)
                       if r["rank"] == 0 and (r["checked"] or include_unverified) and not r.get("contradicted_by"))


def host_execution_counts(rows: Iterable[Row]) -> OrderedDict[str, int]:
    """{'benchmark-backend': results} of host execution (rank 0), which compare leaves out."""
    out: OrderedDict[str, int] = OrderedDict()
    for r in rows:
        if r["rank"] == 0 and results.host_execution(r):
            name = f"{r['benchmark']}-{r['backend']}"
            out[name] = out.get(name, 0) + 1
    return out


def measured(row: Row, metric: str) -> tuple[Any, Any]:
    """(median seconds, cv) compared under `metric`: kernel or total time; a result that is all bus
    transfer (bus h2d/d2h, no kernel time) is compared by its transfer time under 'kernel'."""
    if metric == "kernel" and results.transfer_only(row):
        return (row["h2d_median_s"] or 0) + (row["d2h_median_s"] or 0), results.headline_cv(row)
    return row[f"{metric}_median_s"], row[f"{metric}_cv"]


def match(rows_a: Iterable[Row], rows_b: Iterable[Row], metric: str = "kernel",
          include_unverified: bool = False, alpha: float = ALPHA, min_effect: float = MIN_EFFECT,
          correction: str = "bh") -> tuple[list[Pair], list[Key], list[Key]]:
    """-> (pairs, only_a, only_b). A pair holds both rows, the speed-up of B over A (time A / time B),
    the effect (time B / time A, of the medians), the trial counts n_a and n_b, the rank test's p and
    p_adjusted (decide()), the decision ('faster', 'slower', 'same', 'same (below the 5% minimum effect)',
    'too few trials to decide (...)', 'above ceiling in ...') and the verdict: 'faster', 'slower', ''
    (not shown to differ) or 'above ceiling' (a result of the pair has a figure above the physical
    ceiling of its run: 'above_ceiling' says in which run, A, B or 'A and B'). only_a / only_b are
    the match keys (benchmark, backend, rank, id) of ok results found in one run only."""
    a, b = _index(rows_a, include_unverified), _index(rows_b, include_unverified)
    pairs = []
    for key, ra in a.items():
        rb = b.get(key)
        if rb is None or ra["status"] != "ok" or rb["status"] != "ok":
            continue
        (ta, cva), (tb, cvb) = measured(ra, metric), measured(rb, metric)
        if not ta or not tb:
            continue
        xa, xb = trial_times(ra, metric), trial_times(rb, metric)
        # A time behind a figure above the run's ceiling cannot be true: it judges nothing.
        above = " and ".join(run for run, r in (("A", ra), ("B", rb)) if plausibility.above_ceiling(r))
        pairs.append({"key": key, "a": dict(ra, _t=ta, _cv=cva), "b": dict(rb, _t=tb, _cv=cvb), "speedup": ta / tb,
                      "effect": tb / ta, "n_a": len(xa), "n_b": len(xb),
                      "p_value": rank_test(xa, xb) if xa and xb else None, "above_ceiling": above})
    decide(pairs, alpha, min_effect, correction)
    ok_a = {k for k, r in a.items() if r["status"] == "ok"}
    ok_b = {k for k, r in b.items() if r["status"] == "ok"}
    return pairs, sorted(ok_a - ok_b), sorted(ok_b - ok_a)


def untimed(rows_a: Iterable[Row], rows_b: Iterable[Row], metric: str = "kernel",
            include_unverified: bool = False) -> list[Key]:
    """The keys of results ok in both runs that match() cannot compare: one of them has no `metric`
    time (0 or absent: a result without a kernel time under 'kernel', that is no bus transfer). Named
    in the comparison, never dropped unsaid."""
    a, b = _index(rows_a, include_unverified), _index(rows_b, include_unverified)
    return [k for k, ra in a.items() if k in b and ra["status"] == "ok" and b[k]["status"] == "ok"
            and not (measured(ra, metric)[0] and measured(b[k], metric)[0])]


def _name(key: Key) -> str:
    bench, backend, _rank, rid = key
    return f"{bench}-{backend} {rid}"


def _ratio_figures(pairs: list[Pair], out_dir: str, machine: str, names: Sequence[str]) -> list[Any]:
    if not plots.available() or not pairs:
        return []
    plt = plots.plt
    by_bench: OrderedDict[str, list[Pair]] = OrderedDict()
    for p in pairs:
        if p["b"]["size_bytes"] > 0 and not p["above_ceiling"]:  # no size axis for a case outside the sweep
            by_bench.setdefault(p["b"]["benchmark"], []).append(p)
    figs = []
    for bench, ps in by_bench.items():
        series: OrderedDict[Any, list[Pair]] = OrderedDict()
        for p in sorted(ps, key=lambda p: (p["b"]["backend"], p["b"]["test"], p["b"]["variant"],
                                           p["b"]["params_text"], p["b"]["transfer"], p["b"]["size_bytes"])):
            series.setdefault(results.series_key(p["b"]), []).append(p)
        fig, ax = plt.subplots(figsize=(10, 5.5))
        for sp in series.values():
            b0 = sp[0]["b"]
            label = results.series_label(b0)
            xs = [p["b"]["size_bytes"] for p in sp]
            line, = ax.plot(xs, [p["speedup"] for p in sp], lw=1, label=label)
            flagged = [p for p in sp if p["verdict"] in ("faster", "slower")]
            ax.plot([p["b"]["size_bytes"] for p in flagged], [p["speedup"] for p in flagged], "o", ms=5,
                    color=line.get_color())
        ax.axhline(1, color="k", lw=0.8)
        plots._size_axis(ax, [p["b"]["size_bytes"] for p in ps])
        plots._log_y(ax)
        ax.set_ylabel("speed-up of B over A (time A / time B)")
        ax.grid(True, which="both", alpha=0.3)
        plots._legend(ax, len(series))
        figure = plots.Figure(f"ratio-{bench}", f"{bench}: B vs A", "Speed-up of run B over run A per matched "
                              "result (above 1: B faster); filled dots mark the differences the rank test over the "
                              "trials decides and that exceed the minimum effect.", bench)
        figs.append(plots._finish(fig, out_dir, figure, f"{bench}: {names[1]} (B) vs {names[0]} (A); dots: decided "
                                  "differences", machine))
    return figs


def _csv(pairs: Iterable[Pair]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["id", "benchmark", "backend", "test", "variant", "params", "transfer", "size_bytes", "a_median_s",
                "a_cv", "a_trials", "b_median_s", "b_cv", "b_trials", "speedup_b_over_a", "effect", "p_value",
                "p_adjusted", "decision", "verdict"])
    for p in pairs:
        r = p["b"]
        w.writerow([r["id"], r["benchmark"], r["backend"], r["test"], r["variant"], r["params_text"], r["transfer"],
                    r["size_bytes"], p["a"]["_t"], p["a"]["_cv"], p["n_a"], p["b"]["_t"], p["b"]["_cv"], p["n_b"],
                    p["speedup"], p["effect"], "" if p["p_value"] is None else p["p_value"],
                    "" if p["p_adjusted"] is None else p["p_adjusted"], p["decision"],
                    p["verdict"] + (f" in {p['above_ceiling']}" if p["above_ceiling"] else "")])
    return buf.getvalue()


def _p(v: float | None) -> str:
    return "-" if v is None else f"{v:.2g}"


def _effect(p: Pair) -> str:
    """The change of the median time from A to B: '+12.3%' (B slower), '-4.0%' (B faster)."""
    return f"{(p['effect'] - 1) * 100:+.1f}%"


def rule_text(alpha: float, min_effect: float, correction: str, tests: int) -> str:
    """The decision rule in one sentence, with the number of tests."""
    adjust = (f"p adjusted by {CORRECTIONS[correction]} over the {tests} tests" if correction != "none"
              else f"p not adjusted for the {tests} tests")
    return (f"A pair is marked faster or slower only when a two-sided Mann-Whitney U test over the two results' "
            f"trials rejects 'same' at alpha {alpha:g} ({adjust}) and the median times differ by at least the "
            f"minimum effect, {min_effect:.1%} (the slower median at least {1 + min_effect:g} times the faster); the "
            "table gives p and the effect of every pair. A pair whose trial counts cannot reach p < alpha even when "
            "every trial of one run beats every trial of the other is 'too few trials to decide', not 'same' "
            "(docs/statistics.md).")


def moving_ceiling_line(docs_a: Iterable[Any], docs_b: Iterable[Any]) -> str:
    """One line naming the executables of either run whose copy ceiling moved by more than
    results.CEILING_SPREAD_WARN during the run, '' when none: their times were taken while the
    machine's memory bandwidth changed, which a memory-bound case's time follows."""
    moving = [f"{run}: {c['name']} {c['spread']:.1%}" for run, docs in (("A", docs_a), ("B", docs_b))
              for c in results.moving_ceilings(results.processor_docs(docs))]
    if not moving:
        return ""
    return (f"the copy ceiling moved by more than {results.CEILING_SPREAD_WARN:.0%} during a run ((max - min) / median "
            f"of its samples: {', '.join(moving)}); a memory-bound case's time follows the machine's bandwidth, so a "
            "difference there may be the machine's, not the code's.")


def main(run_a: StrPath, run_b: StrPath, out: StrPath | None = None, metric: str = "kernel",
         stream: TextIO = sys.stdout, include_unverified: bool = False, alpha: float = ALPHA,
         min_effect: float = MIN_EFFECT, correction: str = "bh") -> int:
    for d in (run_a, run_b):
        results.check_run_dir(d)
    if out is not None:  # compare writes a folder of its own: never over a file, never into a run
        if Path(out).exists() and not Path(out).is_dir():
            raise UsageError(f"--out {out}: is a file, not a folder for the comparison")
        if Path(out).is_dir() and not results.not_a_run(out):
            raise UsageError(f"--out {out}: is a run directory; the comparison goes into a folder of its own")
    # One unusable file leaves its own results out, not the comparison (named under Problems).
    (docs_a, broken_a, foreign_a), (docs_b, broken_b, foreign_b) = (results.load_docs_tolerant(run_a),
                                                                    results.load_docs_tolerant(run_b))

    def left_out(run: str, ms: Iterable[str]) -> list[str]:
        return [f"{run}: " + m.replace(": its results are not in this report", ": left out of the comparison")
                for m in ms]

    broken = left_out("A", broken_a) + left_out("B", broken_b)
    foreign = left_out("A", foreign_a) + left_out("B", foreign_b)
    # A figure that cannot be used (results.check_figures): its case is out of the run's rows, named here.
    bad = [f"{run}: a figure that cannot be used: "
           + m.replace("; the case is left out", "; left out of the comparison")
           for run, docs, d in (("A", docs_a, run_a), ("B", docs_b, run_b)) for m in results.bad_figure_lines(docs, d)]
    for m in foreign + broken + bad:
        print(f"compare: error: {m}", file=sys.stderr)
    if not docs_a or not docs_b:
        raise UsageError(f"{run_a if not docs_a else run_b}: no usable results JSON under raw/")
    names = (absolute_path(run_a).name, absolute_path(run_b).name)
    out_dir = Path(out) if out else absolute_path(run_b).parent / f"compare-{names[0]}-vs-{names[1]}"
    out_dir.mkdir(parents=True, exist_ok=True)
    rows_a, rows_b = results.all_rows(docs_a), results.all_rows(docs_b)
    pairs, only_a, only_b = match(rows_a, rows_b, metric, include_unverified, alpha, min_effect, correction)
    # A case left out of one run for a bad figure is named under Problems, not as found in the other run only.
    spoilt = {(d["benchmark"], d["backend"], rid) for d in docs_a + docs_b for rid, *_ in d.get("_bad_figures") or []}
    only_a, only_b = ([k for k in keys if (k[0], k[1], k[3]) not in spoilt] for keys in (only_a, only_b))
    tests = sum(p["p_adjusted"] is not None for p in pairs)
    unchecked = sum(1 for r in rows_a + rows_b if r["rank"] == 0 and r["status"] == "ok" and not r["checked"])
    contradicted = [r for r in rows_a + rows_b if r["rank"] == 0 and r.get("contradicted_by")]

    doc = Doc()
    title = f"hetdb-bench comparison: {names[0]} (A) vs {names[1]} (B)"
    doc.h(1, title)
    doc.p(f"A: {results.machine_line(docs_a)}")
    doc.p(f"B: {results.machine_line(docs_b)}")
    impl_a, impl_b = results.opencl_implementations(docs_a), results.opencl_implementations(docs_b)
    if impl_a and impl_b and impl_a != impl_b:
        doc.warn(f"The OpenCL results of A ran on {', '.join(impl_a)} and those of B on {', '.join(impl_b)}: "
                 "their pairs compare two OpenCL implementations (each run's driver is named above), not two runs "
                 "of one.")
    moving = moving_ceiling_line(docs_a, docs_b)
    if moving:
        doc.warn(moving)
    n_f = sum(p["verdict"] == "faster" for p in pairs)
    n_s = sum(p["verdict"] == "slower" for p in pairs)
    above = [p for p in pairs if p["above_ceiling"]]
    n_few = sum(p["decision"].startswith("too few") for p in pairs)
    bus_note = " (a bus copy without kernel time: its transfer time)" if metric == "kernel" else ""
    doc.p(f"{len(pairs)} results matched on benchmark, backend and result id (test, variant, parameters, transfer "
          f"mode and size); compared by their {metric} time{bus_note}, pass by pass. B is faster in {n_f} and slower "
          f"in {n_s}; {tests - n_f - n_s} are the same as far as their trials show"
          + (f"; {n_few} have too few trials to decide" if n_few else "")
          + (f"; {len(above)} not judged: above the physical ceiling of their run." if above else "."))
    doc.p(rule_text(alpha, min_effect, correction, tests))
    if n_few:
        doc.p(f"{n_few} pairs have too few trials for the test ever to reach p < {alpha:g}: two-sided, 3 and 3 trials "
              "reach 0.1 at best, 4 and 4 0.029, 5 and 5 0.0079. Runs meant for comparison want more passes "
              "(--passes 5 or more; the stopping rule takes at least that many: docs/statistics.md).")
    if unchecked:
        doc.p(f"{unchecked} results of the two runs were measured without verification (--no-verify): "
              + ("compared, as --include-unverified asks." if include_unverified else
                 "left out (--include-unverified compares them)."))
    if contradicted:
        doc.warn(f"{len(contradicted)} results of the two runs are left out: a peer answered their case otherwise "
                 "than the reference they were verified against (scripts/report lists them under 'Answers a peer "
                 "contradicts'): " + "; ".join(f"{r['benchmark']}-{r['backend']} {r['id']}" for r in contradicted[:5])
                 + (" ..." if len(contradicted) > 5 else ""))
    if above:
        doc.warn(f"{len(above)} matched results have a figure above the physical ceiling of their run (A, B or both: "
                 "scripts/report lists them and why): such a time cannot be true, so these pairs are marked "
                 f"'{ABOVE}', never called faster or slower, and left out of the figures.")
        doc.table(["result", "above the ceiling in", "figures"],
                  [[_name(p["key"]), p["above_ceiling"], "; ".join(
                      f"{run}: {plausibility.figures_text(p[run.lower()])}" for run in ("A", "B")
                      if plausibility.above_ceiling(p[run.lower()]))] for p in above])
    doc.table(["result", "A ms", "A cv %", "B ms", "B cv %", "trials A,B", "speed-up B/A", "time B vs A", "p",
               "adjusted p", "decision"],
              [[_name(p["key"]), _ms(p["a"]["_t"]), f"{(p['a']['_cv'] or 0) * 100:.1f}", _ms(p["b"]["_t"]),
                f"{(p['b']['_cv'] or 0) * 100:.1f}", f"{p['n_a']},{p['n_b']}", f"{p['speedup']:.3f}", _effect(p),
                _p(p["p_value"]), _p(p["p_adjusted"]), p["decision"]] for p in pairs])
    figs = _ratio_figures(pairs, str(out_dir / "plots"), f"A: {results.machine_line(docs_a)}  ||  "
                          f"B: {results.machine_line(docs_b)}", names)
    for f in figs:
        doc.fig(f)
    host = (host_execution_counts(rows_a), host_execution_counts(rows_b))
    if host[0] or host[1]:
        doc.h(2, "Not compared: host execution")
        doc.p("Host execution runs the CUDA backend's sources on the CPU (cuda-host) to check their answers; its "
              "times are a CPU's emulation of a GPU, not a processor's, so its results are not compared.")
        doc.items([f"{run}: {name}: {n} results" for run, counts in zip("AB", host, strict=True)
                   for name, n in counts.items()])
    no_time = untimed(rows_a, rows_b, metric, include_unverified)
    if no_time:
        doc.h(2, f"Not compared: no {metric} time")
        doc.p(f"Matched results of which one run recorded no {metric} time (0 or absent): there is no speed-up to "
              "give" + (" (--metric total compares their times with transfers)" if metric == "kernel" else "") + ".")
        doc.items([_name(k) for k in no_time])
    if only_a or only_b:
        doc.h(2, "Unmatched results")
        doc.items([f"only in A: {_name(k)}" for k in only_a] + [f"only in B: {_name(k)}" for k in only_b])
    if foreign or broken or bad:
        doc.h(2, "Problems")
        doc.items(foreign + broken + bad)
    write_atomically(out_dir / "compare.md", doc.markdown())
    write_atomically(out_dir / "compare.html", doc.html(str(out_dir / "plots"), title))
    write_atomically(out_dir / "compare.csv", _csv(pairs))

    n_host = (sum(host[0].values()), sum(host[1].values()))
    print(f"compare: {len(pairs)} matched, {tests} tested (Mann-Whitney U over the trials, two-sided; alpha "
          f"{alpha:g}, {CORRECTIONS[correction]}; minimum effect {min_effect:.1%}): {n_f} faster in B, {n_s} "
          f"slower in B, {tests - n_f - n_s} same, {n_few} too few trials to decide; "
          f"{len(only_a)} only in A, {len(only_b)} only in B"
          + (f"; {len(above)} above the physical ceiling of their run (not judged)" if above else "")
          + (f"; {len(no_time)} without a {metric} time in one run (not compared)" if no_time else "")
          + (f"; host execution (cuda-host) not compared: {n_host[0]} results in A, {n_host[1]} in B"
             if any(n_host) else ""), file=stream)
    for p in sorted((p for p in pairs if p["verdict"] in ("faster", "slower")),
                    key=lambda p: -abs(math.log(p["speedup"])))[:25]:
        print(f"  {p['verdict']:<6} x{p['speedup']:.3f} (time {_effect(p)}, p={_p(p['p_value'])}, adjusted "
              f"p={_p(p['p_adjusted'])}, trials {p['n_a']},{p['n_b']})  {_name(p['key'])}", file=stream)
    if moving:
        print(f"compare: note: {moving}", file=stream)
    print(f"compare: -> {out_dir / 'compare.html'}", file=stream)
    return contract.EXIT_USAGE if foreign or bad else contract.EXIT_FAILED if broken else contract.EXIT_OK
