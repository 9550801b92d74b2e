"""scripts/compare RUN_A RUN_B: results matched by benchmark, backend and result id (rank 0's), side by
side, with the speed-up of B over A and a flag where the difference exceeds the runs' noise. Results
measured without verification (--no-verify) take part only with --include-unverified. Results of
host execution (cuda-host: the CUDA sources run on the CPU) are never compared: their times are an
emulation's; they are counted under "Not compared" instead. A pair where either result has a figure
above the physical ceiling of its run (plausibility.py) is listed with the verdict "above ceiling",
never called faster or slower, and left out of the figures."""
import csv
import io
import math
import sys
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TextIO

from . import contract, plausibility, plots, results
from .report import Doc, _ms
from .util import StrPath, UsageError, absolute_path, write_atomically

Row = dict[str, Any]     # one result as results.py flattens it
Key = tuple[Any, ...]    # results.match_key: (benchmark, backend, rank, id)
Pair = dict[str, Any]    # a matched result, as match() returns it

NOISE_SIGMAS = 2.0   # a difference counts when it exceeds this many combined standard deviations
NOISE_FLOOR = 0.01   # ...and at least 1%: medians of very steady runs still wander that much
ABOVE = "above ceiling"  # the verdict of a pair with a figure above the physical ceiling of its run


def noise_bound(cv_a: float | None, cv_b: float | None) -> float:
    """Relative difference the two runs' noise explains: 2 sigma of the ratio of two medians whose
    relative spreads are the cases' CVs (they add in quadrature), never below the floor."""
    return max(NOISE_SIGMAS * math.sqrt((cv_a or 0) ** 2 + (cv_b or 0) ** 2), NOISE_FLOOR)


def _index(rows: Iterable[Row], include_unverified: bool) -> OrderedDict[Key, Row]:
    return OrderedDict((results.match_key(r), r) for r in results.processor_rows(rows)
                       if r["rank"] == 0 and (r["checked"] or include_unverified))


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
          include_unverified: bool = False) -> tuple[list[Pair], list[Key], list[Key]]:
    """-> (pairs, only_a, only_b). A pair holds both rows, the speed-up of B over A (time A / time B),
    the noise bound and the verdict: 'faster', 'slower', '' (within noise) or 'above ceiling' (a result
    of the pair has a figure above the physical ceiling of its run: 'above_ceiling' says in which run,
    A, B or 'A and B'). only_a / only_b are
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
        speedup = ta / tb
        bound = noise_bound(cva, cvb)
        verdict = "" if abs(math.log(speedup)) <= math.log1p(bound) else ("faster" if speedup > 1 else "slower")
        # A time behind a figure above the run's ceiling cannot be true: it judges nothing.
        above = " and ".join(run for run, r in (("A", ra), ("B", rb)) if plausibility.above_ceiling(r))
        if above:
            verdict = ABOVE
        pairs.append({"key": key, "a": dict(ra, _t=ta, _cv=cva), "b": dict(rb, _t=tb, _cv=cvb), "speedup": speedup,
                      "noise": bound, "verdict": verdict, "above_ceiling": above})
    ok_a = {k for k, r in a.items() if r["status"] == "ok"}
    ok_b = {k for k, r in b.items() if r["status"] == "ok"}
    return pairs, sorted(ok_a - ok_b), sorted(ok_b - ok_a)


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
                              "result (above 1: B faster); filled dots mark differences larger than the runs' noise.",
                              bench)
        figs.append(plots._finish(fig, out_dir, figure, f"{bench}: {names[1]} (B) vs {names[0]} (A); dots: beyond "
                                  "noise", machine))
    return figs


def _csv(pairs: Iterable[Pair]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["id", "benchmark", "backend", "test", "variant", "params", "transfer", "size_bytes", "a_median_s",
                "a_cv", "b_median_s", "b_cv", "speedup_b_over_a", "noise_bound", "verdict"])
    for p in pairs:
        r = p["b"]
        w.writerow([r["id"], r["benchmark"], r["backend"], r["test"], r["variant"], r["params_text"], r["transfer"],
                    r["size_bytes"], p["a"]["_t"], p["a"]["_cv"], p["b"]["_t"], p["b"]["_cv"], p["speedup"],
                    p["noise"], p["verdict"] + (f" in {p['above_ceiling']}" if p["above_ceiling"] else "")])
    return buf.getvalue()


def main(run_a: StrPath, run_b: StrPath, out: StrPath | None = None, metric: str = "kernel",
         stream: TextIO = sys.stdout, include_unverified: bool = False) -> int:
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
    for m in foreign + broken:
        print(f"compare: error: {m}", file=sys.stderr)
    if not docs_a or not docs_b:
        raise UsageError(f"{run_a if not docs_a else run_b}: no usable results JSON under raw/")
    names = (absolute_path(run_a).name, absolute_path(run_b).name)
    out_dir = Path(out) if out else absolute_path(run_b).parent / f"compare-{names[0]}-vs-{names[1]}"
    out_dir.mkdir(parents=True, exist_ok=True)
    rows_a, rows_b = results.all_rows(docs_a), results.all_rows(docs_b)
    pairs, only_a, only_b = match(rows_a, rows_b, metric, include_unverified)
    unchecked = sum(1 for r in rows_a + rows_b if r["rank"] == 0 and r["status"] == "ok" and not r["checked"])

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
    n_f = sum(p["verdict"] == "faster" for p in pairs)
    n_s = sum(p["verdict"] == "slower" for p in pairs)
    above = [p for p in pairs if p["above_ceiling"]]
    bus_note = " (a bus copy without kernel time: its transfer time)" if metric == "kernel" else ""
    doc.p(f"{len(pairs)} results matched on benchmark, backend and result id (test, variant, parameters, transfer "
          f"mode and size); compared by median {metric} time{bus_note}. B is faster in {n_f} and slower in {n_s} "
          f"beyond noise (|ln(speed-up)| > ln(1 + max({NOISE_SIGMAS:g} x sqrt(cv_A^2 + cv_B^2), "
          f"{NOISE_FLOOR:.0%}))); {len(pairs) - n_f - n_s - len(above)} within noise"
          + (f"; {len(above)} not judged: above the physical ceiling of their run." if above else "."))
    if unchecked:
        doc.p(f"{unchecked} results of the two runs were measured without verification (--no-verify): "
              + ("compared, as --include-unverified asks." if include_unverified else
                 "left out (--include-unverified compares them)."))
    if above:
        doc.warn(f"{len(above)} matched results have a figure above the physical ceiling of their run (A, B or both: "
                 "scripts/report lists them and why): such a time cannot be true, so these pairs are marked "
                 f"'{ABOVE}', never called faster or slower, and left out of the figures.")
        doc.table(["result", "above the ceiling in", "figures"],
                  [[_name(p["key"]), p["above_ceiling"], "; ".join(
                      f"{run}: {plausibility.figures_text(p[run.lower()])}" for run in ("A", "B")
                      if plausibility.above_ceiling(p[run.lower()]))] for p in above])
    doc.table(["result", "A ms", "A cv %", "B ms", "B cv %", "speed-up B/A", "noise ±%", "verdict"],
              [[_name(p["key"]), _ms(p["a"]["_t"]), f"{(p['a']['_cv'] or 0) * 100:.1f}", _ms(p["b"]["_t"]),
                f"{(p['b']['_cv'] or 0) * 100:.1f}", f"{p['speedup']:.3f}", f"{p['noise'] * 100:.1f}",
                p["verdict"] + (f" in {p['above_ceiling']}" if p["above_ceiling"] else "") if p["verdict"] else "-"]
               for p in pairs])
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
    if only_a or only_b:
        doc.h(2, "Unmatched results")
        doc.items([f"only in A: {_name(k)}" for k in only_a] + [f"only in B: {_name(k)}" for k in only_b])
    if foreign or broken:
        doc.h(2, "Problems")
        doc.items(foreign + broken)
    write_atomically(out_dir / "compare.md", doc.markdown())
    write_atomically(out_dir / "compare.html", doc.html(str(out_dir / "plots"), title))
    write_atomically(out_dir / "compare.csv", _csv(pairs))

    n_host = (sum(host[0].values()), sum(host[1].values()))
    print(f"compare: {len(pairs)} matched, {n_f} faster in B, {n_s} slower in B beyond noise, "
          f"{len(only_a)} only in A, {len(only_b)} only in B"
          + (f"; {len(above)} above the physical ceiling of their run (not judged)" if above else "")
          + (f"; host execution (cuda-host) not compared: {n_host[0]} results in A, {n_host[1]} in B"
             if any(n_host) else ""), file=stream)
    for p in sorted((p for p in pairs if p["verdict"] in ("faster", "slower")),
                    key=lambda p: -abs(math.log(p["speedup"])))[:25]:
        print(f"  {p['verdict']:<6} x{p['speedup']:.3f} (noise ±{p['noise'] * 100:.1f}%)  {_name(p['key'])}",
              file=stream)
    print(f"compare: -> {out_dir / 'compare.html'}", file=stream)
    return contract.EXIT_USAGE if foreign else contract.EXIT_FAILED if broken else contract.EXIT_OK
