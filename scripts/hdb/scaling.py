"""Scaling across MPI rank counts: `run-all --mpi 1,2,4` makes one run per rank count; this module
matches their results (the 'ranks' parameter of TP cases aside) and writes scaling.md, scaling.csv
and a figure of time and speed-up against ranks. For strong scaling (fixed global size) the ratio
t(first)/t(N) is the speed-up; for weak scaling (fixed size per rank, dist --weak) it is the
efficiency, ideally 1."""
import os
from collections import OrderedDict

from . import plots, results
from .util import size_text, write_atomically


def _key(row):
    """Everything that identifies a case but the TP benchmark's 'ranks' parameter (read by name),
    which differs between the runs by design; the parameters are written out for display."""
    params = {k: v for k, v in row["params"].items() if k != "ranks"}
    return (row["benchmark"], row["backend"], row["test"], row["variant"], results.params_text(params),
            row["transfer"], row["size_bytes"])


def collect(runs):
    """runs: [(ranks, run_dir)] -> OrderedDict key -> {ranks: median kernel seconds} (rank 0's view:
    the mean over ranks for EP documents, the collective time for TP)."""
    table = OrderedDict()
    for ranks, run_dir in runs:
        for row in results.all_rows(results.load_docs(run_dir)):
            if row["rank"] != 0 or row["status"] != "ok" or not row["checked"] or not row["kernel_median_s"]:
                continue
            t = (row["across_ranks"] or {}).get("mean") or row["kernel_median_s"]
            table.setdefault(_key(row), {})[ranks] = t
    return OrderedDict((k, v) for k, v in table.items() if len(v) > 1)


def write(runs, out_dir, stream=None):
    table = collect(runs)
    counts = [n for n, _ in runs]
    os.makedirs(out_dir, exist_ok=True)
    head = ["benchmark", "backend", "test", "variant", "params", "transfer", "size"]
    csv = [",".join(head + [f"kernel_s_np{n}" for n in counts] + [f"ratio_np{n}" for n in counts])]
    md = ["# Scaling across MPI ranks", "",
          "Median kernel time per rank count (rank 0's view: the mean over ranks for EP runs, the "
          "collective time for TP cases), and t(first)/t(N): the speed-up under strong scaling, the "
          "efficiency under weak scaling (`scaling=weak`).", "",
          "Runs: " + ", ".join(f"{n} ranks: `{os.path.basename(d)}`" for n, d in runs), "",
          "| " + " | ".join(head + [f"{n} ranks (ms)" for n in counts] + [f"ratio {n}" for n in counts]) + " |",
          "|" + "---|" * (len(head) + 2 * len(counts))]
    for key, times in table.items():
        first = times[min(times)]
        cells = list(key[:-1]) + [size_text(key[-1])]
        ms = [f"{times[n] * 1e3:.4f}" if n in times else "" for n in counts]
        ratio = [f"{first / times[n]:.2f}" if n in times else "" for n in counts]
        md.append("| " + " | ".join(cells + ms + ratio) + " |")
        csv.append(",".join(f'"{c}"' for c in cells) + "," + ",".join(
            [f"{times[n]:.9g}" if n in times else "" for n in counts] +
            [f"{first / times[n]:.6g}" if n in times else "" for n in counts]))
    figure = _plot(table, counts, out_dir)
    if figure:
        md += ["", f"![{figure}](plots/{figure}.png)"]
    write_atomically(os.path.join(out_dir, "scaling.md"), "\n".join(md) + "\n")
    write_atomically(os.path.join(out_dir, "scaling.csv"), "\n".join(csv) + "\n")
    if stream:
        print(f"scaling: {len(table)} cases across {counts} ranks -> {out_dir}/scaling.md", file=stream)
    return table


def _plot(table, counts, out_dir):
    """One panel per benchmark/backend: t(first)/t(N) against ranks at each case's largest size."""
    if not plots.available() or not table:
        return None
    plt = plots.plt
    largest = {}
    for key in table:
        series = key[:-1]
        if key[-1] >= largest.get(series, 0):
            largest[series] = key[-1]
    panels = OrderedDict()
    for series, size in largest.items():
        panels.setdefault(series[:2], []).append((series, size))
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.5), squeeze=False)
    for ax, ((bench, backend), items) in zip(axes[0], panels.items()):
        for series, size in items[:plots.MAX_SERIES]:
            times = table[series + (size,)]
            ns = sorted(times)
            ax.plot(ns, [times[ns[0]] / times[n] for n in ns], marker="o",
                    label=f"{series[2]}/{series[3]} {series[4]} @{size_text(size)}"[:70])
        ax.plot(counts, [n / counts[0] for n in counts], ls=":", color="grey", label="ideal strong scaling")
        ax.axhline(1.0, ls="--", lw=0.8, color="black")
        ax.set_xscale("log", base=2)
        ax.set_xticks(counts)
        ax.set_xticklabels([str(n) for n in counts])
        ax.set_xlabel("MPI ranks")
        ax.set_ylabel("t(first) / t(ranks)  (speed-up; efficiency if weak)")
        ax.set_title(f"hdb-{bench}-{backend}", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    fig.suptitle("Scaling across MPI ranks", fontsize=11)
    fig.tight_layout()
    os.makedirs(os.path.join(out_dir, "plots"), exist_ok=True)
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(out_dir, "plots", f"scaling.{ext}"), dpi=110)
    plt.close(fig)
    return "scaling"
