"""Which figure of a result is checked against which physical ceiling of the same run (issue 31): the
one place that decides whether a figure can be true. A result whose figure is above its ceiling is
*above the ceiling*: the report lists it in a warning on top, leaves it out of the headline, the
figures and the key-width pairs, marks it in the tables and in summary.csv; scripts/compare does not
call it faster or slower; the targets judge nothing with it (docs/driver.md, docs/methodology.md).

The rule, per ok result of a real processor (host execution is no processor's time):

* Memory figures (`moved_gbps`, `kernel_gbps`, `total_gbps`; and `pct_of_peak`, the same bound as a
  percentage of the ceiling that result's pct_of_peak is against: its `throughput.ceiling_gbps`, the
  ceiling of its access pattern or the copy sample measured nearest to it (issues 46 and 51), else
  the document's) against the document's measured memory copy ceiling D (`ceiling.memory_copy_gbps`,
  the median of its samples; a peer, which records none, takes the best of its host's cpu
  documents), or beyond the cache against the result's own pattern ceiling. The bound depends on
  whether the result's working set W fits in the cache C of its processor (the host's
  `context.llc_bytes`, or the LLC its run measured where it did: results.RUN_LLC; a CUDA device's
  `l2_cache_bytes`):
  - in any case at most CACHE_FACTOR x D (a cache delivers less than 8x a DRAM copy on every machine
    measured: 7.5x on the EPYC VM's L1/L2, 1.7x on the H200 host, 2-3x for Hopper's L2; 16 doubles
    it), or CACHE_MARGIN x the best copy the same run's bus measured in the cache on that backend
    and device, whichever is higher;
  - beyond the cache (W > C), at most a fraction C/W of the bytes can come from the cache and the
    rest must cross DRAM, so at most M / (1 - C/W), where M is the DRAM rate the result can reach:
    - for a result whose `throughput.ceiling_pattern` names the ceiling of its own access mix
      (contract.pattern_matched: a measured pattern such as 'read', or an interpolation between two),
      PATTERN_MARGIN x that ceiling, its ceiling_gbps. PATTERN_MARGIN 1.10 is the ceiling's own
      run-to-run noise: each pattern ceiling is the best of a few passes, and the copy samples of one
      run here spread by up to ~5-10 %; the ceiling already matches what the kernel reads and writes,
      so no more room is due.
    - else (a document written before issue 46, a peer's, a result that declares no split of its
      bytes, or a platform that measured only the copy: its figures are against the copy ceiling
      alone) DRAM_MARGIN x D. DRAM_MARGIN 2: a copy counts each byte read and written once, but on a
      write-allocate CPU really moves 3 bytes per 2 counted, so a read-only kernel can reach 1.5x
      the copy rate, and the start-up measurement itself varies (one run's cpu ceilings differed by
      1.7x on a busy 2-core VM).
    A CUDA device that states its theoretical memory rate (`memory_theoretical_gbps`) is held to
    THEORETICAL_MARGIN x that instead when it is lower (never below 1.05 x the measured ceiling M
    stands on: a measurement proves that much).
  W is the smallest working set the record allows: its size per input, or its declared minimum
  bytes moved when fewer (a merge step reads a dictionary, not the column); an unknown cache counts
  as holding it.
* Transfer figures (`transfer_gbps`, bytes over the bus per second of h2d + d2h) against the best
  rate the same run's bus measured for that backend, device and transfer kind (a pageable transfer
  may reach the pinned rate), times TRANSFER_MARGIN, and against the PCIe link's theoretical rate
  per direction (`context.device.pcie`) times PCIE_MARGIN; the lower of those known. The bus's own
  h2d/d2h copies are held to the link's rate.

The bus results are checked first (their own cache bound is CACHE_FACTOR x D only), and only those
within their ceilings count as the run's bus rates.
"""
from collections.abc import Iterable, Sequence
from typing import Any

from . import contract, results
from .util import Document, Row, size_text

Finding = dict[str, Any]  # one figure above its ceiling: benchmark, backend, rank, id, file, figure, value, ...

DRAM_MARGIN = 2.0         # x the memory copy ceiling, beyond the cache, for a result judged against it alone
PATTERN_MARGIN = 1.10     # x the result's own access-pattern ceiling, beyond the cache (its noise)
THEORETICAL_MARGIN = 1.05  # x a device's theoretical memory rate (rounding of clocks and widths)
CACHE_FACTOR = 16.0       # x the memory copy ceiling, the most a cache can add
CACHE_MARGIN = 2.0        # x the best in-cache copy the run's bus measured
TRANSFER_MARGIN = 1.25    # x the best host<->device copy the run's bus measured
PCIE_MARGIN = 1.05        # x the PCIe link's theoretical rate per direction

MEMORY_FIGURES = ("moved_gbps", "kernel_gbps", "total_gbps")
FIGURES = MEMORY_FIGURES + ("pct_of_peak", "transfer_gbps")
FLAG = "above_ceiling"    # the row's key: [finding] (empty: every figure within its ceiling)
BUS = "bus"


def doc_name(doc: Document) -> str:
    """'ra-cpu' (or 'ra-cpu-large'): the result file a ceiling comes from."""
    path = doc.get("_path")
    return results.entry_of(path) if path else f"{doc['benchmark']}-{doc['backend']}"


def _num(v):
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v else 0.0


def _device(doc):
    return (doc.get("context") or {}).get("device") or {}


def cache_bytes(doc: Document) -> tuple[int, str]:
    """(bytes, name) of the cache a result of this document can sit in, or (0, '') when unknown: a
    CUDA device's L2, else the host CPU's last-level cache (cpu, peers, OpenCL on a CPU)."""
    dev = _device(doc)
    if dev.get("kind") == "cuda":
        return int(_num(dev.get("l2_cache_bytes"))), "L2"
    if dev.get("kind") == "opencl" and dev.get("type") not in (None, "cpu"):
        return 0, ""  # an OpenCL GPU states no cache size the suite reads
    measured = int(_num(doc.get(results.RUN_LLC)))
    if measured:
        return measured, "LLC (measured)"
    return int(_num((doc.get("context") or {}).get("llc_bytes"))), "LLC"


def working_set(row: Row) -> int:
    """The smallest working set the record allows: its size per input, or its declared minimum bytes
    moved (else input bytes) when fewer; 0 when it states none."""
    sizes = [int(_num(x)) for x in (row.get("size_bytes"), row.get("min_moved_bytes") or row.get("input_bytes"))]
    sizes = [s for s in sizes if s > 0]
    return min(sizes) if sizes else 0


class Ceilings:
    """The run's ceilings, per document: the memory copy ceiling (a peer's from its host's cpu
    documents) and what the bus measured (in-cache copies, host<->device copies)."""

    def __init__(self, docs: Iterable[Document]) -> None:
        self.host_cpu: dict[Any, tuple[float, str]] = {}
        for d in docs:
            if _device(d).get("kind") == "cpu" and not results.host_execution_doc(d):
                c = _num((d.get("ceiling") or {}).get("memory_copy_gbps"))
                host = (d.get("context") or {}).get("host")
                if c > self.host_cpu.get(host, (0.0, ""))[0]:
                    self.host_cpu[host] = (c, doc_name(d))
        self.bus_cache: dict[tuple[Any, ...], tuple[float, str]] = {}     # (backend, device) -> (GB/s, id)
        self.bus_transfer: dict[tuple[Any, ...], tuple[float, str]] = {}  # (backend, device, transfer) -> (GB/s, id)

    def memory(self, doc: Document) -> tuple[float, str]:
        """(D in GB/s, where it comes from) or (0, '') when the run has none for this document."""
        c = _num((doc.get("ceiling") or {}).get("memory_copy_gbps"))
        if c > 0:
            return c, f"the {c:.4g} GB/s memory copy ceiling of {doc_name(doc)}"
        if _device(doc).get("kind") == "cpu":
            c, name = self.host_cpu.get((doc.get("context") or {}).get("host"), (0.0, ""))
            if c > 0:
                return c, f"the {c:.4g} GB/s memory copy ceiling of {name} (same host; {doc_name(doc)} records none)"
        return 0.0, ""

    def learn_bus(self, row: Row, doc: Document) -> None:
        """Takes a bus result within its ceilings as a rate of the run: an in-cache copy, or a
        host<->device copy by its transfer mode."""
        key = (row["backend"], row["device"])
        if results.transfer_only(row):
            k = key + (row["transfer"],)
            v = _num(row["transfer_gbps"])
            if v > self.bus_transfer.get(k, (0.0, ""))[0]:
                self.bus_transfer[k] = (v, row["id"])
            return
        cache, _ = cache_bytes(doc)
        w = working_set(row)
        if _num(row["moved_gbps"]) > 0 and (not cache or w <= cache) and \
                _num(row["moved_gbps"]) > self.bus_cache.get(key, (0.0, ""))[0]:
            self.bus_cache[key] = (_num(row["moved_gbps"]), row["id"])


def memory_bound(row: Row, doc: Document, ceilings: Ceilings, is_bus: bool) -> tuple[float, str] | None:
    """(GB/s, source) the memory figures of `row` may reach, or None when no ceiling is known."""
    d, d_source = ceilings.memory(doc)
    if d <= 0:
        return None
    cache, cache_name = cache_bytes(doc)
    w = working_set(row)
    bound, source = CACHE_FACTOR * d, f"{CACHE_FACTOR:g} x {d_source}"
    best = None if is_bus else ceilings.bus_cache.get((row["backend"], row["device"]))
    if best and CACHE_MARGIN * best[0] > bound:
        bound, source = CACHE_MARGIN * best[0], \
            f"{CACHE_MARGIN:g} x the best in-cache copy the run's bus measured on {row['backend']} ({best[0]:.4g} " \
            f"GB/s, {best[1]})"
    where = f"working set {size_text(w)}" if w else "working set unknown"
    if not cache or not w or w <= cache:
        return bound, source + (f"; {where} within the {size_text(cache)} {cache_name}" if cache and w else
                                f"; {where}, cache size unknown" if not cache else f"; {where}")
    m, m_source = d, d_source
    dram, dram_source = DRAM_MARGIN * d, f"{DRAM_MARGIN:g} x {d_source}"
    own, pattern = _num(row.get("ceiling_gbps")), row.get("ceiling_pattern")
    if own > 0 and contract.pattern_matched(pattern):  # the ceiling of its own access mix (issue 46)
        m, m_source = own, f"the {own:.4g} GB/s ceiling of its access pattern ({pattern}) in {doc_name(doc)}"
        dram, dram_source = PATTERN_MARGIN * own, f"{PATTERN_MARGIN:g} x {m_source}"
    theo = _num(_device(doc).get("memory_theoretical_gbps"))
    if theo and max(THEORETICAL_MARGIN * theo, 1.05 * m) < dram:
        if THEORETICAL_MARGIN * theo >= 1.05 * m:
            dram, dram_source = THEORETICAL_MARGIN * theo, \
                f"{THEORETICAL_MARGIN:g} x the device's theoretical memory rate {theo:.4g} GB/s"
        else:  # a measured ceiling above the stated rate: the measurement proves that much
            dram, dram_source = 1.05 * m, f"1.05 x {m_source} (above the device's stated {theo:.4g} GB/s)"
    share = cache / w
    beyond = dram / (1 - share)
    if beyond < bound:
        bound, source = beyond, dram_source + f"; {where} beyond the {size_text(cache)} {cache_name}" + \
            (f" (at most {share:.0%} of it cached: / {1 - share:.2f})" if share >= 0.005 else "")
    else:
        source += f"; {where} beyond the {size_text(cache)} {cache_name}, but the cache can hold {share:.0%} of it"
    return bound, source


def transfer_bound(row: Row, doc: Document, ceilings: Ceilings, is_bus: bool) -> tuple[float, str] | None:
    """(GB/s, source) `transfer_gbps` may reach, or None when the run knows no bus rate."""
    out = []
    pcie = _device(doc).get("pcie") or {}
    link = _num(pcie.get("theoretical_gbps_per_direction"))
    if link:
        out.append((PCIE_MARGIN * link, f"{PCIE_MARGIN:g} x the PCIe link's theoretical {link:.4g} GB/s per direction"
                    f" (gen {pcie.get('gen', '?')} x{pcie.get('width', '?')})"))
    if not is_bus:
        modes = (row["transfer"], "pinned") if row["transfer"] == "pageable" else (row["transfer"],)
        known = [ceilings.bus_transfer[k] for k in ((row["backend"], row["device"], m) for m in modes)
                 if k in ceilings.bus_transfer]
        if known:
            v, rid = max(known)
            out.append((TRANSFER_MARGIN * v, f"{TRANSFER_MARGIN:g} x the best host<->device copy the run's bus "
                        f"measured on {row['backend']} ({v:.4g} GB/s, {rid})"))
    return min(out) if out else None


def _finding(row, doc, figure, value, bound, source, unit):
    return {"benchmark": row["benchmark"], "backend": row["backend"], "rank": row["rank"], "id": row["id"],
            "file": doc_name(doc), "figure": figure, "value": value, "ceiling": bound, "unit": unit,
            "source": source}


def own_ceiling(row: Row, doc: Document) -> float:
    """The ceiling the row's pct_of_peak is against, so that its bound is the memory figures' bound
    in the same units: the row's ceiling_gbps (results.py: throughput.ceiling_gbps, the ceiling of
    its access pattern or the copy sample nearest to the case, else the document's), the document's
    memory_copy_gbps for a row made elsewhere; 0 when unknown."""
    c = row.get("ceiling_gbps")
    return _num(c if c is not None else (doc.get("ceiling") or {}).get("memory_copy_gbps"))


def check_row(row: Row, doc: Document, ceilings: Ceilings, is_bus: bool = False) -> list[Finding]:
    """[finding] of one result: every figure above its ceiling."""
    if row["status"] != "ok" or results.host_execution(row):
        return []
    out = []
    mem = memory_bound(row, doc, ceilings, is_bus)
    if mem:
        bound, source = mem
        for f in MEMORY_FIGURES:
            if _num(row.get(f)) > bound:
                out.append(_finding(row, doc, f, _num(row[f]), bound, source, "GB/s"))
        pct = _num(row.get("pct_of_peak"))
        own = own_ceiling(row, doc)
        if own > 0 and pct > 100 * bound / own:
            out.append(_finding(row, doc, "pct_of_peak", pct, 100 * bound / own, source, "%"))
    if _num(row.get("transfer_gbps")) > 0:
        tb = transfer_bound(row, doc, ceilings, is_bus)
        if tb and _num(row["transfer_gbps"]) > tb[0]:
            out.append(_finding(row, doc, "transfer_gbps", _num(row["transfer_gbps"]), tb[0], tb[1], "GB/s"))
    return out


def annotate(pairs: Sequence[tuple[Row, Document]], docs: Iterable[Document] | None = None) -> list[Finding]:
    """pairs: [(row, its document)]. Sets row[FLAG] on every row (the findings of its figures above
    their ceilings, [] when none) and returns every finding, bus results first. The bus results are
    checked first; those within their ceilings are the run's bus rates the others are checked with."""
    docs = docs if docs is not None else _unique_docs(pairs)
    ceilings = Ceilings(docs)
    found: list[Finding] = []
    for row, doc in pairs:
        if row["benchmark"] == BUS:
            row[FLAG] = check_row(row, doc, ceilings, is_bus=True)
            found += row[FLAG]
            if not row[FLAG] and row["status"] == "ok" and not results.host_execution(row):
                ceilings.learn_bus(row, doc)
    for row, doc in pairs:
        if row["benchmark"] != BUS:
            row[FLAG] = check_row(row, doc, ceilings)
            found += row[FLAG]
    return found


def _unique_docs(pairs: Iterable[tuple[Row, Document]]) -> list[Document]:
    seen: set[int] = set()
    out: list[Document] = []
    for _, d in pairs:
        if id(d) not in seen:
            seen.add(id(d))
            out.append(d)
    return out


def above_ceiling(row: Row) -> bool:
    """True for a result with a figure above the physical ceiling of its run (annotate())."""
    return bool(row.get(FLAG))


def plausible(rows: Iterable[Row]) -> list[Row]:
    """The rows without a figure above its ceiling: what the headline, the figures and the targets read."""
    return [r for r in rows if not above_ceiling(r)]


def figures_text(row: Row) -> str:
    """'moved_gbps;pct_of_peak': the figures of a row above their ceilings (summary.csv's column)."""
    return ";".join(dict.fromkeys(f["figure"] for f in row.get(FLAG) or []))


def _number(v, unit):
    text = f"{v:,.0f}" if abs(v) >= 1e4 else f"{v:.4g}"
    return text + ("%" if unit == "%" else f" {unit}")


def value_text(f: Finding) -> str:
    return _number(f["value"], f["unit"])


def ceiling_text(f: Finding) -> str:
    return _number(f["ceiling"], f["unit"])


def finding_text(f: Finding) -> str:
    """'ra-cpu select/...@1M: moved_gbps 7230 GB/s > 34 GB/s (2 x the ...)': one line per finding."""
    rank = f" rank {f['rank']}" if f["rank"] else ""
    return (f"{f['benchmark']}-{f['backend']}{rank} {f['id']}: {f['figure']} {value_text(f)} above "
            f"{ceiling_text(f)} ({f['source']})")


def table(findings: Iterable[Finding]) -> tuple[list[str], list[list[Any]]]:
    """Header and rows of the report's warning table: one row per figure above its ceiling."""
    header = ["file", "backend", "case id", "figure", "value", "ceiling", "ceiling from"]
    return header, [[f["file"] + (f" rank {f['rank']}" if f["rank"] else ""), f["backend"], f["id"], f["figure"],
                     value_text(f), ceiling_text(f), f["source"]] for f in findings]
