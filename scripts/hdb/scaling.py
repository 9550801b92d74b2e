"""Scaling across MPI rank counts: `run-all --mpi 1,2,4` makes one run per rank count; this module
matches their results (the 'ranks' parameter of TP cases aside) and writes scaling.md, scaling.csv
and a figure of time and speed-up against ranks. For strong scaling (fixed global size) the ratio
t(first)/t(N) is the speed-up; for weak scaling (fixed size per rank, dist --weak) it is the
efficiency, ideally 1. For TP cases that exchange data (the dist benchmark's `exchange` phase) the
table adds, per rank count, the exchange's share of the case's time and the bytes each rank sent
(the busiest rank's, and how many of all bytes sent crossed between nodes): the network's share."""
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from . import plots, results
from .util import Row, StrPath, size_text, write_atomically

Key = tuple[Any, ...]  # _key: a case but its 'ranks' parameter


def _key(row: Row) -> Key:
    """Everything that identifies a case but the TP benchmark's 'ranks' parameter (read by name),
    which differs between the runs by design; the parameters are written out for display."""
    params = {k: v for k, v in row["params"].items() if k != "ranks"}
    return (row["benchmark"], row["backend"], row["test"], row["variant"], results.params_text(params),
            row["transfer"], row["size_bytes"])


def collect(runs: Sequence[tuple[int, StrPath]],
            exchange: dict[Key, dict[int, dict[str, Any]]] | None = None) -> OrderedDict[Key, dict[int, float]]:
    """runs: [(ranks, run_dir)] -> OrderedDict key -> {ranks: median kernel seconds} (rank 0's view:
    the mean over ranks for EP documents, the collective time for TP). `exchange`, a dict, receives
    key -> {ranks: exchange_figures(row)} for the cases that exchange data."""
    table: OrderedDict[Key, dict[int, float]] = OrderedDict()
    for ranks, run_dir in runs:
        for row in results.all_rows(results.load_docs(run_dir)):
            if row["rank"] != 0 or row["status"] != "ok" or not row["checked"] or not row["kernel_median_s"] \
                    or results.host_execution(row) or row.get("above_ceiling") or row.get("contradicted_by"):
                # cuda-host: an emulation's times scale like no processor; a figure above the run's
                # physical ceiling (plausibility.py) is no time to scale
                continue
            t = (row["across_ranks"] or {}).get("mean") or row["kernel_median_s"]
            table.setdefault(_key(row), {})[ranks] = t
            x = exchange_figures(row)
            if x and exchange is not None:
                exchange.setdefault(_key(row), {})[ranks] = x
    return OrderedDict((k, v) for k, v in table.items() if len(v) > 1)


def exchange_figures(row: Row) -> dict[str, Any] | None:
    """The network's share of a TP case, read by name: the median `exchange` phase over the median
    total time, the bytes each rank sent to other ranks (extra.sent_bytes_per_rank) and the bytes that
    crossed between nodes (extra.off_node_bytes). None for a case without an exchange phase."""
    ex = (row.get("phases_median_s") or {}).get("exchange")
    if ex is None:
        return None
    extra = row.get("extra") or {}
    sent = extra.get("sent_bytes_per_rank") or []
    total = row.get("total_median_s")
    return {"share": ex / total if total else None, "exchange_s": ex,
            "sent_max": max(sent) if sent else extra.get("exchanged_bytes"),
            "sent_total": extra.get("exchanged_bytes"), "off_node": extra.get("off_node_bytes"),
            "nodes": extra.get("nodes")}


def _bytes_text(n):
    """12288 -> '12.0 KiB'."""
    for unit, name in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if n >= unit:
            return f"{n / unit:.1f} {name}"
    return f"{n} B"


def _exchange_text(x):
    """'41% · 12.0 KiB (67% off-node)': the exchange's share of the time, the busiest rank's bytes
    sent, and the share of all bytes sent that crossed between nodes."""
    if not x:
        return ""
    share = f"{x['share'] * 100:.0f}%" if x["share"] is not None else "?"
    sent = _bytes_text(x["sent_max"]) if x["sent_max"] is not None else "?"
    off = ""
    if x["off_node"] is not None and x["sent_total"]:
        off = f" ({x['off_node'] / x['sent_total'] * 100:.0f}% off-node)"
    return f"{share} · {sent}{off}"


def _hosts_text(run_dir: StrPath) -> str:
    """'hdb-node-a: 0,2; hdb-node-b: 1,3': where the ranks of a run ran (run.json, from the merged
    documents), or '' for a run on one host or without that record."""
    manifest = results.read_manifest(run_dir)[0] or {}
    for e in manifest.get("entries", []):
        hosts = e.get("mpi_hosts")
        if isinstance(hosts, list) and len(hosts) > 1:
            return "; ".join(f"{h.get('host')}: {','.join(str(r) for r in h.get('ranks', []))}" for h in hosts)
    return ""


def write(runs: Sequence[tuple[int, StrPath]], out_dir: StrPath,
          stream: TextIO | None = None) -> OrderedDict[Key, dict[int, float]]:
    exchange: dict[Key, dict[int, dict[str, Any]]] = {}
    table = collect(runs, exchange)
    counts = [n for n, _ in runs]
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    head = ["benchmark", "backend", "test", "variant", "params", "transfer", "size"]
    with_x = any(k in exchange for k in table)
    csv = [",".join(head + [f"kernel_s_np{n}" for n in counts] + [f"ratio_np{n}" for n in counts] +
                    ([f"{c}_np{n}" for n in counts for c in ("exchange_share", "sent_bytes_max_rank",
                                                                "off_node_bytes")] if with_x else []))]
    hosts = [(n, _hosts_text(d)) for n, d in runs]
    md = ["# Scaling across MPI ranks", "",
          "Median kernel time per rank count (rank 0's view: the mean over ranks for EP runs, the "
          "collective time for TP cases), and t(first)/t(N): the speed-up under strong scaling, the "
          "efficiency under weak scaling (`scaling=weak`)." +
          (" For cases that exchange data, `exchange N` is the exchange phase's share of the case's "
           "median total time, the bytes the busiest rank sent to other ranks, and the share of all "
           "bytes sent that crossed between nodes (off-node): the network's share." if with_x else ""), "",
          "Runs: " + ", ".join(f"{n} ranks: `{Path(d).name}`" for n, d in runs), ""]
    md += [f"Hosts ({n} ranks): {h}" for n, h in hosts if h] + ([""] if any(h for _, h in hosts) else [])
    cols = head + [f"{n} ranks (ms)" for n in counts] + [f"ratio {n}" for n in counts] + \
        ([f"exchange {n}: share · sent per rank" for n in counts] if with_x else [])
    md += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for key, times in table.items():
        first = times[min(times)]
        cells = list(key[:-1]) + [size_text(key[-1])]
        ms = [f"{times[n] * 1e3:.4f}" if n in times else "" for n in counts]
        ratio = [f"{first / times[n]:.2f}" if n in times else "" for n in counts]
        x = exchange.get(key, {})
        xs = [_exchange_text(x.get(n)) for n in counts] if with_x else []
        md.append("| " + " | ".join(cells + ms + ratio + xs) + " |")
        xcsv: list[str] = []
        for n in counts if with_x else []:
            f = x.get(n) or {}
            xcsv += ["" if f.get(c) is None else f"{f[c]:.6g}" for c in ("share", "sent_max", "off_node")]
        csv.append(",".join(f'"{c}"' for c in cells) + "," + ",".join(
            [f"{times[n]:.9g}" if n in times else "" for n in counts] +
            [f"{first / times[n]:.6g}" if n in times else "" for n in counts] + xcsv))
    figure = _plot(table, counts, out_dir)
    if figure:
        md += ["", f"![{figure}](plots/{figure}.png)"]
    write_atomically(Path(out_dir) / "scaling.md", "\n".join(md) + "\n")
    write_atomically(Path(out_dir) / "scaling.csv", "\n".join(csv) + "\n")
    if stream:
        print(f"scaling: {len(table)} cases across {counts} ranks -> {out_dir}/scaling.md", file=stream)
    return table


def _plot(table: OrderedDict[Key, dict[int, float]], counts: Sequence[int], out_dir: StrPath) -> str | None:
    """One panel per benchmark/backend: t(first)/t(N) against ranks at each case's largest size."""
    if not plots.available() or not table:
        return None
    plt = plots.plt
    largest: dict[Key, int] = {}
    for key in table:
        series = key[:-1]
        if key[-1] >= largest.get(series, 0):
            largest[series] = key[-1]
    panels: OrderedDict[Key, list[tuple[Key, int]]] = OrderedDict()
    for series, size in largest.items():
        panels.setdefault(series[:2], []).append((series, size))
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.5), squeeze=False)
    for ax, ((bench, backend), items) in zip(axes[0], panels.items(), strict=True):
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
    (Path(out_dir) / "plots").mkdir(parents=True, exist_ok=True)
    for ext in ("png", "svg"):
        fig.savefig(Path(out_dir) / "plots" / f"scaling.{ext}", dpi=110)
    plt.close(fig)
    return "scaling"
