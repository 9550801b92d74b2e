"""The CPU regression gate of scripts/test (issue 51): a short hdb-ra-cpu run of streaming, sort and
join cases beyond the cache, judged against config/regression.json by ratios that do not depend on
the machine's speed, so that a CPU baseline that loses ground fails the test suite instead of
reaching a published run unnoticed.

Each case's rate is its declared bytes moved over its fastest timed pass. Two ratios judge it:
- to_ceiling: the rate over the copy ceiling measured nearest to the case (throughput.ceiling_gbps
  before issue 46; since, where the case is against the ceiling of its access pattern, the copy
  sample nearest to it: the references were recorded against the copy);
- to_anchor: the rate over the anchor case's (a streaming case of the same run).
A case has lost ground when both ratios fell by more than the stated factor against the reference
of the machine's processor (the anchor has only the first). A machine is its processor's name and
whether it has AVX-512 (the select kernel has an AVX-512 path: the same name with and without it
gives different ratios). A machine with no reference of its own is judged against the lowest ratio
of every reference with twice the factor, and the gate prints the command that records its own.
Requiring both ratios keeps a wandering ceiling or a noisy anchor from failing a good build; a
failed case is measured once more, and the better of its two measurements is judged, so that one
disturbed pass does not fail it either.
"""
import json
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import contract, results
from .util import Document, StrPath, UsageError

Ratios = dict[str, dict[str, float]]  # case name -> {"to_ceiling": x, "to_anchor": y}


@dataclass(frozen=True)
class Case:
    """A gate case: a test/variant and the parameters that pin it down. A result matches when each
    parameter equals the given one or is absent (documents older than that axis ran only its
    default: 32-bit keys, sorted input)."""
    name: str
    test: str
    variant: str
    params: Mapping[str, Any]

    def only(self) -> str:
        """The --only pattern of this case's test and variant: the executable lists its ids, and
        matches() picks this case's among them (the id spells its parameters in the benchmark's axis
        order, which a pattern of the gate's would have to repeat)."""
        return f"{self.test}/{self.variant}"

    def matches(self, result: Mapping[str, Any], size_bytes: int) -> bool:
        """Whether a result (or a listed id, parameters as text) is this case at size_bytes."""
        if result.get("test") != self.test or result.get("variant") != self.variant:
            return False
        if result.get("size_bytes") != size_bytes:
            return False
        params = result.get("params") or {}
        return all(k not in params or str(params[k]) == str(v) for k, v in self.params.items())


@dataclass(frozen=True)
class Gate:
    factor: float
    size: str
    anchor: str
    cases: tuple[Case, ...]
    machines: tuple[Mapping[str, Any], ...]


def load_gate(path: StrPath) -> Gate:
    """config/regression.json, checked: a factor above 1, the anchor among the cases, every
    machine's reference naming every case."""
    try:
        return _load_gate(path)
    except (KeyError, TypeError, AttributeError) as e:
        raise UsageError(f"{path}: not a regression gate configuration (missing or malformed {e})") from e


def _load_gate(path: StrPath) -> Gate:
    try:
        raw = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise UsageError(f"{path}: cannot read the regression gate's configuration ({e})") from e
    try:
        contract.parse_size(raw["size"], f"{path}: 'size'")
    except ValueError as e:
        raise UsageError(str(e)) from e
    cases = tuple(Case(name, c["test"], c["variant"], c.get("params", {})) for name, c in raw["cases"].items())
    names = [c.name for c in cases]
    factor = float(raw["factor"])
    if not factor > 1:
        raise UsageError(f"{path}: 'factor' must be above 1, not {raw['factor']!r}")
    if raw["anchor"] not in names:
        raise UsageError(f"{path}: the anchor {raw['anchor']!r} is not one of the cases ({', '.join(names)})")
    for m in raw["machines"]:
        missing = [n for n in names if n not in m["ratios"]]
        if missing:
            raise UsageError(f"{path}: the reference of {m['cpu']!r} lacks {', '.join(missing)}")
    return Gate(factor, raw["size"], raw["anchor"], cases, tuple(raw["machines"]))


def _fastest_rate(result: Mapping[str, Any]) -> float:
    """Declared bytes moved per second of the fastest timed pass (GB/s); 0 without a usable pass."""
    times = [t.get("kernel_s") or 0.0 for t in result.get("trials") or []]
    times = [t for t in times if not results.figure_problem(t, time=True, positive=True)]
    moved = (result.get("bytes") or {}).get("min_moved") or 0
    return moved / min(times) / 1e9 if times and moved > 0 else 0.0


def ratios(doc: Document, gate: Gate) -> Ratios:
    """Each gate case's two ratios from one document of hdb-ra-cpu; a case the document lacks, or
    one that failed or was skipped, is absent (the caller reports it)."""
    rates: dict[str, tuple[float, float]] = {}
    results.checked(doc)  # a result with a figure that cannot be used is none (results.check_figures)
    size = contract.parse_size(gate.size)
    # Each case's ceiling is the copy sample nearest to it; documents before issue 51 have one for the
    # run. A case against the ceiling of its access pattern (issue 46) is judged by that copy sample
    # too, so that its ratio stays comparable with the references.
    run_ceiling = (doc.get("ceiling") or {}).get("memory_copy_gbps") or 0.0
    samples = (doc.get("ceiling") or {}).get("samples") or []
    for case in gate.cases:
        found = [r for r in doc.get("results", []) if case.matches(r, size) and r.get("status") == "ok"]
        if found:
            r = found[0]
            copy = contract.nearest_ceiling(samples, float(r["timed_at_s"])) \
                if "ceiling_pattern" in (r.get("throughput") or {}) and samples and "timed_at_s" in r else 0.0
            rates[case.name] = (_fastest_rate(r), copy or contract.result_ceiling(r, run_ceiling))
    out: Ratios = {}
    anchor = rates.get(gate.anchor, (0.0, 0.0))[0]
    for name, (rate, ceiling) in rates.items():
        if rate <= 0:
            continue
        r = {"to_ceiling": rate / ceiling} if ceiling > 0 else {}
        if name != gate.anchor and anchor > 0:
            r["to_anchor"] = rate / anchor
        out[name] = r
    return out


def has_avx512(cpuinfo: StrPath = "/proc/cpuinfo") -> bool:
    """Whether this machine's processor has AVX-512 (the avx512f flag)."""
    try:
        text = Path(cpuinfo).read_text()
    except OSError:
        return False
    return any(line.startswith("flags") and "avx512f" in line.split() for line in text.splitlines())


def machine_name(cpu: str, avx512: bool) -> str:
    return f"{cpu} ({'with' if avx512 else 'without'} AVX-512)"


def reference_for(gate: Gate, cpu: str, avx512: bool) -> tuple[Ratios, float, str]:
    """(the reference ratios, the factor, where they come from): the entry whose `cpu` is the
    processor's name (context.cpu) and whose `avx512` is the machine's; for a machine with none,
    the lowest ratio of every entry (the most lenient) and twice the factor, said so."""
    for m in gate.machines:
        if m["cpu"] == cpu and bool(m["avx512"]) == avx512:
            return m["ratios"], gate.factor, f"the reference of {machine_name(cpu, avx512)}: {m['source']}"
    lenient: Ratios = {}
    for m in gate.machines:
        for name, r in m["ratios"].items():
            mine = lenient.setdefault(name, dict(r))
            for k, v in r.items():
                mine[k] = min(mine.get(k, v), v)
    known = "; ".join(machine_name(m["cpu"], bool(m["avx512"])) for m in gate.machines) or "none"
    return lenient, 2 * gate.factor, (
        f"no reference for {machine_name(cpu, avx512)} (references: {known}), so the lowest ratio of any reference "
        "and twice the factor; record this machine's with scripts/regression-gate --keep DIR, then "
        "--make-reference DIR/regression-1.json")


@dataclass(frozen=True)
class Verdict:
    case: str
    losses: dict[str, float]  # ratio name -> reference / measured (above 1: lost ground)
    measured: dict[str, float]
    reference: dict[str, float]
    failed: bool
    missing: bool = False


def judge(measured: Ratios, reference: Ratios, gate: Gate, factor: float) -> list[Verdict]:
    out = []
    for case in gate.cases:
        ref = reference.get(case.name, {})
        got = measured.get(case.name)
        if not got:
            out.append(Verdict(case.name, {}, {}, ref, failed=True, missing=True))
            continue
        losses = {k: ref[k] / got[k] for k in ref if got.get(k)}
        failed = bool(losses) and all(v > factor for v in losses.values())
        out.append(Verdict(case.name, losses, got, ref, failed))
    return out


def best_of(a: Ratios, b: Ratios) -> Ratios:
    """Each case's better measurement of two (per ratio, the higher)."""
    out: Ratios = {k: dict(v) for k, v in a.items()}
    for name, r in b.items():
        mine = out.setdefault(name, {})
        for k, v in r.items():
            mine[k] = max(mine.get(k, 0.0), v)
    return out


def format_verdicts(verdicts: Sequence[Verdict], gate: Gate, factor: float, source: str) -> str:
    lines = [f"regression gate: {len(gate.cases)} cases at {gate.size}, judged against {source}; a case fails when "
             f"every ratio lost more than {factor:g}x",
             f"  {'case':<24} {'to_ceiling (ref -> now)':<28} {'to_anchor (ref -> now)':<28} verdict"]
    for v in verdicts:
        if v.missing:
            lines.append(f"  {v.case:<24} {'-':<28} {'-':<28} FAILED: the run has no verified result for it")
            continue
        cells = []
        for k in ("to_ceiling", "to_anchor"):
            cells.append(f"{v.reference[k]:.3f} -> {v.measured[k]:.3f} ({v.losses[k]:.2f}x)"
                         if k in v.losses else "-")
        verdict = f"FAILED: lost {min(v.losses.values()):.2f}x or more" if v.failed else "ok"
        lines.append(f"  {v.case:<24} {cells[0]:<28} {cells[1]:<28} {verdict}")
    return "\n".join(lines)


class GateError(Exception):
    """The gate could not measure (the executable refused its options or crashed): a failure."""


def parse_id(case_id: str) -> tuple[str, str, dict[str, str], str]:
    """'join/parallel[dist=uniform,key=32]@256M' -> ('join', 'parallel', {'dist': 'uniform', 'key': '32'},
    '256M'): what --list prints (parameter values as text)."""
    head, _, size = case_id.partition("@")
    name, _, inner = head.partition("[")
    test, _, variant = name.partition("/")
    params = dict(p.split("=", 1) for p in inner.rstrip("]").split(",") if "=" in p)
    return test, variant, params, size


def case_ids(exe: StrPath, gate: Gate, cases: Sequence[Case]) -> list[str]:
    """The executable's ids of the given cases at the gate's size (from --list): exactly one each."""
    cmd = [str(exe), "--list", "--sizes", gate.size, "--only", ",".join(c.only() for c in cases)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise GateError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    size = contract.parse_size(gate.size)
    ids = []
    for c in cases:
        found = []
        for line in proc.stdout.splitlines():
            case_id = line.split(" (skipped", 1)[0].strip()
            test, variant, params, _ = parse_id(case_id)
            if c.matches({"test": test, "variant": variant, "params": params, "size_bytes": size}, size):
                found.append(case_id)
        if len(found) != 1:
            listed = ", ".join(found) or "none"
            raise GateError(f"{exe} lists {len(found)} cases for {c.name} at {gate.size} ({listed}); the gate's "
                            "parameters must pick exactly one")
        ids.append(found[0])
    return ids


def run_cases(exe: StrPath, gate: Gate, cases: Sequence[Case], out_json: StrPath) -> Document:
    """hdb-ra-cpu on the given cases at the gate's size; its document (a failed case shows as a
    missing one: the executable's own exit status is not the gate's)."""
    # --only splits on commas, ids hold them between their parameters: '?' matches one character.
    patterns = [i.replace(",", "?") for i in case_ids(exe, gate, cases)]
    cmd = [str(exe), "--only", ",".join(patterns), "--sizes", gate.size, "--passes", "5",
           "--max-passes", "5", "--max-time", "2", "--warmup", "1", "--quiet", "--json", str(out_json)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode not in (0, 1) or not Path(out_json).exists():
        raise GateError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    doc: Document = json.loads(Path(out_json).read_text())
    return doc


def run_gate(exe: StrPath, gate: Gate, avx512: bool, keep: StrPath | None = None) -> tuple[bool, str]:
    """Runs the gate's cases, then once more those that failed (with the anchor); returns (passed,
    the table)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(keep) if keep else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        doc = run_cases(exe, gate, gate.cases, folder / "regression-1.json")
        cpu = str((doc.get("context") or {}).get("cpu", ""))
        reference, factor, source = reference_for(gate, cpu, avx512)
        measured = ratios(doc, gate)
        verdicts = judge(measured, reference, gate, factor)
        again = [c for c in gate.cases if any(v.failed and v.case == c.name for v in verdicts)]
        note = ""
        if again:
            if all(c.name != gate.anchor for c in again):
                again.append(next(c for c in gate.cases if c.name == gate.anchor))
            doc2 = run_cases(exe, gate, again, folder / "regression-2.json")
            measured = best_of(measured, ratios(doc2, gate))
            verdicts = judge(measured, reference, gate, factor)
            note = f"\n  (measured twice, the better kept: {', '.join(c.name for c in again)})"
        ceiling = (doc.get("ceiling") or {})
        spread = ceiling.get("spread")
        head = (f"on {cpu or 'an unnamed CPU'}; copy ceiling {ceiling.get('memory_copy_gbps', 0):.1f} GB/s"
                + (f" (spread {100 * spread:.0f} % over {len(ceiling.get('samples', []))} samples)"
                   if isinstance(spread, (int, float)) else ""))
        bad = results.bad_figure_lines([doc] + ([doc2] if again else []))
        text = format_verdicts(verdicts, gate, factor, source) + note + "\n  " + head \
            + "".join(f"\n  a figure that cannot be used: {b}" for b in bad)
        return not any(v.failed for v in verdicts), text


def make_reference(docs: Sequence[Document], gate: Gate, avx512: bool, source: str) -> dict[str, Any]:
    """A machine entry for config/regression.json from documents of hdb-ra-cpu taken on this
    machine (gate runs, or reference runs that hold the gate's cases at the gate's size): each
    ratio the median of the documents' (of an even count the lower middle one), so that one run's
    luck, good or bad, does not become the bar."""
    cpus = {str((d.get("context") or {}).get("cpu", "")) for d in docs}
    if len(cpus) != 1:
        raise UsageError(f"the documents come from different processors ({', '.join(sorted(cpus))})")
    seen: dict[str, dict[str, list[float]]] = {}
    for i, doc in enumerate(docs):
        measured = ratios(doc, gate)
        missing = [c.name for c in gate.cases if c.name not in measured]
        if missing:
            bad = results.bad_figure_lines([doc])
            raise UsageError(f"document {i + 1} has no verified result for {', '.join(missing)}"
                             + (f" (a figure that cannot be used: {'; '.join(bad)})" if bad else ""))
        for name, r in measured.items():
            for k, v in r.items():
                seen.setdefault(name, {}).setdefault(k, []).append(v)
    rounded = {n: {k: round(sorted(v)[(len(v) - 1) // 2], 4) for k, v in r.items()} for n, r in seen.items()}
    return {"cpu": cpus.pop(), "avx512": avx512, "source": source, "ratios": rounded}
