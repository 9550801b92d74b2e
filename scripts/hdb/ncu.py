"""Nsight Compute's counters beside host execution's traffic profile (issue 48, item 5; docs/cuda.md,
"What the kernels ask of memory"): what the GPU counted for one pass of a case against what
`hdb-<bench>-cuda-host --traffic` counted for the same case id, and where they disagree, by how much.

    python -m hdb.ncu NCU_DIR TRAFFIC_DIR

NCU_DIR holds `ncu-<name>.csv` (scripts/gpu-check's ncu stage: `ncu --csv --page details
--print-units base`, one pass of one case, every kernel it launched); TRAFFIC_DIR holds
`traffic-<name>.json` (a hetdb-bench/2 document of that case with its `traffic` object). Prints a
Markdown table: per case the kernels ncu saw, their global-load and -store sectors and requests
(l1tex__t_{sectors,requests}_pipe_lsu_mem_global_op_{ld,st}.sum), DRAM bytes (dram__bytes_{read,
write}.sum), summed kernel time, the busiest kernel's memory and DRAM throughput (% of peak,
SpeedOfLight) and its warps' top stall reason; then the traffic profile's figures and the ratio ncu / profile."""
from __future__ import annotations

import csv
import json
import sys
from collections import OrderedDict
from pathlib import Path
from typing import Any

SECTORS = ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")
REQUESTS = ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")
DRAM = ("dram__bytes_read.sum", "dram__bytes_write.sum")
DURATION = "gpu__time_duration.sum"
SOL_SECTION = "GPU Speed Of Light Throughput"
MEMORY_SOL = "Memory Throughput"  # SpeedOfLight's, % of the peak of the busiest memory unit (the Memory
#                                   Workload section has a metric of that name too, in bytes/s)
DRAM_SOL = "DRAM Throughput"      # SpeedOfLight's, % of the DRAM's peak
# Cycles a warp waits per issued instruction, per reason (scripts/gpu-check asks for them).
STALL_PREFIX, STALL_SUFFIX = "smsp__average_warps_issue_stalled_", "_per_issue_active.ratio"


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def read_ncu(path: Path) -> list[dict[str, Any]]:
    """The kernels of one ncu CSV in launch order: {id, name, metrics: {name: value}, sol: SpeedOfLight's
    {MEMORY_SOL, DRAM_SOL: %}, stalls: {reason: cycles per issued instruction}}."""
    kernels: OrderedDict[str, dict[str, Any]] = OrderedDict()
    lines = [ln for ln in path.read_text(errors="replace").splitlines() if ln.startswith('"')]
    for row in csv.DictReader(lines):
        kid = row.get("ID")
        if kid is None or row.get("Metric Name") is None:
            continue
        k = kernels.setdefault(kid, {"id": kid, "name": row.get("Kernel Name", "?"), "metrics": {}, "sol": {},
                                     "stalls": {}})
        value = _number(row.get("Metric Value", ""))
        if value is None:
            continue
        name = row["Metric Name"]
        if name in (MEMORY_SOL, DRAM_SOL):
            if row.get("Section Name") == SOL_SECTION:
                k["sol"][name] = value
            continue
        k["metrics"][name] = value
        if name.startswith(STALL_PREFIX) and name.endswith(STALL_SUFFIX):
            k["stalls"][name[len(STALL_PREFIX):-len(STALL_SUFFIX)]] = value
    return list(kernels.values())


def qualified_name(kernel: str) -> str:
    """A kernel's qualified name without its return type, parameters and template arguments: 'void
    hdb::<unnamed>::join_partition<1>(...)' -> 'hdb::<unnamed>::join_partition'."""
    head = kernel.split("(")[0].removeprefix("void ").replace("<unnamed>", "{anon}")
    return head.split("<")[0].replace("{anon}", "<unnamed>")


def is_own(kernel: str) -> bool:
    """The suite's own kernel (namespace hdb or a .cu file's anonymous one, which ncu prints as
    'unnamed>::'), not CUB's or Thrust's: host execution profiles only these (docs/cuda.md)."""
    return qualified_name(kernel).startswith(("hdb::", "unnamed>::", "<unnamed>::"))


def short_name(kernel: str) -> str:
    return qualified_name(kernel).split("::")[-1]


def ncu_totals(kernels: list[dict[str, Any]]) -> dict[str, Any]:
    """Sums over the suite's own kernels (what the traffic profile sees); `library` counts the others. A
    case that is all library (select/tuned: CUB's DeviceSelect) is summed over those, and says so."""
    own = [k for k in kernels if is_own(k["name"])]
    summed = own or kernels

    def total(names):
        return sum(k["metrics"].get(n, 0.0) for k in summed for n in names)

    busiest = max(summed, key=lambda k: k["metrics"].get(DURATION, 0.0), default=None)
    stall = ""
    if busiest and busiest["stalls"]:
        reason, cycles = max(busiest["stalls"].items(), key=lambda kv: kv[1])
        stall = f"{reason} ({cycles:.1f})"
    return {"kernels": len(own), "library": len(kernels) - len(own), "library_only": not own,
            "sectors": total(SECTORS),
            "requests": total(REQUESTS), "dram": total(DRAM),
            "ms": total((DURATION,)) / 1e6, "busiest": short_name(busiest["name"]) if busiest else "",
            "memory_sol": busiest["sol"].get(MEMORY_SOL) if busiest else None,
            "dram_sol": busiest["sol"].get(DRAM_SOL) if busiest else None, "stall": stall}


def traffic_of(path: Path) -> tuple[str, dict[str, Any]]:
    doc = json.loads(path.read_text())
    for r in doc["results"]:
        if r.get("traffic"):
            return r["id"], r["traffic"]
    raise ValueError(f"{path}: no result with a traffic object")


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "-"


def _mib(b: float) -> str:
    return f"{b / 2**20:.0f} MiB"


def table(ncu_dir: Path, traffic_dir: Path) -> str:
    """One row per ncu-<name>.csv. The ratios (ncu / profile) only where ncu saw every launch the
    profile counted (its --launch-count can stop it first: then the counts say so)."""
    head = ("| case | own kernels ncu / profile (+ library) | sectors ncu | sectors profile | ratio | requests ncu | "
            "requests profile | ratio | DRAM ncu | DRAM model | ratio | kernel ms (ncu) | model ms | busiest kernel: "
            "memory % of peak, DRAM % of peak, top stall (cycles per issued instruction) |")
    out = [head, "|" + "---|" * (head.count("|") - 1)]
    for csv_path in sorted(ncu_dir.glob("ncu-*.csv")):
        name = csv_path.stem[len("ncu-"):]
        n = ncu_totals(read_ncu(csv_path))
        tpath = traffic_dir / f"traffic-{name}.json"
        case, t = traffic_of(tpath) if tpath.exists() else (name, None)
        sol = f"{n['memory_sol']:.0f} %" if n["memory_sol"] is not None else "-"
        dram = f"{n['dram_sol']:.0f} %" if n["dram_sol"] is not None else "-"
        busy = f"{n['busiest']}: {sol}, {dram}, {n['stall'] or '-'}" if n["busiest"] else "-"
        lib = f" (+ {n['library']}{', summed' if n['library_only'] else ''})" if n["library"] else ""
        if t is None:
            cells = [case, f"{n['kernels']} / -{lib}", f"{n['sectors']:.0f}", "-", "-", f"{n['requests']:.0f}", "-",
                     "-", _mib(n["dram"]), "-", "-", f"{n['ms']:.3f}", "-", busy]
        else:
            sectors, requests = t["sectors_ld"] + t["sectors_st"], t["requests_ld"] + t["requests_st"]
            whole = n["kernels"] == t["launches"]
            ratio = _ratio if whole else (lambda a, b: "-")
            cells = [case, f"{n['kernels']} / {t['launches']}{lib}", f"{n['sectors']:.0f}", f"{sectors}",
                     ratio(n["sectors"], sectors), f"{n['requests']:.0f}", f"{requests}",
                     ratio(n["requests"], requests),
                     _mib(n["dram"]), _mib(t["dram_bytes_model"]), ratio(n["dram"], t["dram_bytes_model"]),
                     f"{n['ms']:.3f}", f"{t['model_ms']:.3f}" if t.get("model_ms") else "-", busy]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m hdb.ncu NCU_DIR TRAFFIC_DIR", file=sys.stderr)
        return 2
    ncu_dir, traffic_dir = Path(args[0]), Path(args[1])
    if not any(ncu_dir.glob("ncu-*.csv")):
        print(f"hdb.ncu: error: no ncu-*.csv in {ncu_dir}", file=sys.stderr)
        return 2
    print(table(ncu_dir, traffic_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
