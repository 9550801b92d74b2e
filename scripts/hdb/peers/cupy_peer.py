"""CuPy as a peer (issue 48, docs/peers.md): the GPU library a user would pick instead of writing CUDA
kernels, on the suite's own ra cases (hdb-export: the same seeds, data and reference answers as the
executables), verified against the suite's reference and recorded as backend `cupy`, one variant
`cupy` per case, with the suite's params and `transfer=pinned`.

One timed pass is three parts, each ended by a device synchronisation and timed on the host clock:
h2d (every input column from pinned host memory to the GPU, cupy.asarray), the operation
(cupy_ops: what CuPy offers for it), d2h (every answer column into pinned host memory). Its trial
records them as the executables do: h2d_s, kernel_s (the operation, Python's dispatch and CuPy's
allocations from its memory pool included: what a CuPy user waits for), d2h_s, so the headline
compares CuPy with transfers and kernel only as it does the suite's device backends. The cold pass
(with --warmup >= 1) compiles or loads from CuPy's kernel cache every kernel it calls for the first
time in the process; it is recorded apart.

Without CuPy (no GPU, or no cupy package) the driver records the entry as skipped with the reason.
HDB_CUPY_STANDIN=numpy runs the same code on NumPy (the tests' CPU stand-in, tests/peers/
test_cupy_peer.py): its documents say so in context.device and are for the tests only."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .. import contract
from . import cupy_ops, exported, record
from .duckdb_sql import compare

NAME = "cupy"
BENCHMARKS = ("ra",)
VARIANT = "cupy"
TRANSFER = "pinned"
TMP_PREFIX = "hdb-cupy-"
STANDIN_ENV = "HDB_CUPY_STANDIN"
TIMED = ("h2d: every input column from pinned host memory to the GPU (cupy.asarray); kernel: the operation "
         "in CuPy calls (Python dispatch and memory-pool allocations included); d2h: every answer column into "
         "pinned host memory (ndarray.get(out=)); each part ends with a device synchronisation")
COLD_NOTE = ("the case's first pass in this process: every CuPy kernel it calls for the first time is compiled "
             "(NVRTC) or loaded from CuPy's kernel cache, and CuPy's memory pool grows to the case's size")
_T0 = time.monotonic()


# --- the driver side ---------------------------------------------------------------------------------
def available(python):
    """Whether `python` imports cupy and sees a GPU; else (False, the reason)."""
    if not python:
        return False, "no Python interpreter for the peer"
    probe = "import cupy; n = cupy.cuda.runtime.getDeviceCount(); print(cupy.__version__, n)"
    try:
        p = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as e:
        return False, f"cannot run {python}: {e}"
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["import failed"])[-1]
        return False, f"CuPy is not usable by {python} ({last}): it needs the cupy package and an NVIDIA GPU"
    version, count = p.stdout.split()
    if int(count) < 1:
        return False, f"cupy {version}: no CUDA device"
    return True, f"cupy {version}"


def command(job):
    return [job.python, "-m", "hdb.peers.cupy_peer", job.benchmark, "--json", job.json, "--csv", job.csv,
            "--build-dir", job.build_dir] + exported.budget_args(job) + list(job.args)


# --- the array module --------------------------------------------------------------------------------
class Gpu:
    """CuPy (or the NumPy stand-in): the array module, its scatters, pinned host buffers, synchronisation."""

    def __init__(self, standin: bool) -> None:
        self.standin = standin
        if standin:
            import numpy
            self.ops = cupy_ops.Ops(numpy)
            self.np = numpy
        else:
            import cupy
            import cupyx
            import numpy
            self.ops = cupy_ops.Ops(cupy)
            self.np, self.cupy, self.cupyx = numpy, cupy, cupyx

    def sync(self) -> None:
        if not self.standin:
            self.cupy.cuda.Device().synchronize()

    def pinned_like(self, a):
        """A copy of the host array a in pinned host memory (cupyx.empty_pinned; NumPy in the stand-in)."""
        out = self.np.empty_like(a) if self.standin else self.cupyx.empty_pinned(a.shape, a.dtype)
        out[...] = a
        return out

    def upload(self, a):
        return a.copy() if self.standin else self.cupy.asarray(a)

    def download(self, a, out):
        """a (a device column) into out (pinned, a.shape, a.dtype; None: made here, pinned) -> out."""
        if out is None or out.shape != a.shape or out.dtype != a.dtype:
            out = self.np.empty(a.shape, a.dtype) if self.standin else self.cupyx.empty_pinned(a.shape, a.dtype)
        if self.standin:
            out[...] = a
        else:
            a.get(out=out)
        return out

    def describe(self) -> dict[str, Any]:
        if self.standin:
            return {"kind": "cpu", "name": f"NumPy {self.np.__version__}: CPU stand-in for CuPy (tests only)",
                    "engine": f"numpy {self.np.__version__} (stand-in)"}
        rt = self.cupy.cuda.runtime
        props = rt.getDeviceProperties(self.cupy.cuda.Device().id)
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        return {"kind": "cuda", "name": name, "engine": f"cupy {self.cupy.__version__}",
                "cuda_runtime": rt.runtimeGetVersion(), "cuda_driver": rt.driverGetVersion(),
                "global_memory_bytes": int(props["totalGlobalMem"]), "sm_count": int(props["multiProcessorCount"])}


# --- one case ------------------------------------------------------------------------------------------
def prepare(manifest, case_dir, numpy):
    """(the operation, the input relations as host columns, the reference as (columns, rows), order)."""
    fn = cupy_ops.operation(manifest["op"])
    rels = [exported.load_relation(case_dir, spec, numpy) for spec in manifest["inputs"]]
    return fn, rels, exported.reference(manifest, case_dir, numpy), manifest["order"]


def run_case(gpu, fn, rels, args, harness):
    """Times the case's passes (record.Harness.measure): each pass uploads the inputs, runs fn, downloads
    the answer (TIMED). Returns (passes, the trials of the timed passes, the answer's host columns,
    the bytes each pass moved over the bus)."""
    pinned = [[gpu.pinned_like(c) for c in rel] for rel in rels]
    parts: list[tuple[float, float, float]] = []
    last: dict[str, Any] = {"out": []}

    def one_pass():
        gpu.sync()
        t0 = time.perf_counter()
        dev = [[gpu.upload(c) for c in rel] for rel in pinned]
        gpu.sync()
        t1 = time.perf_counter()
        out = fn(gpu.ops, dev, args)
        gpu.sync()
        t2 = time.perf_counter()
        outs = last["out"]
        last["out"] = [gpu.download(c, outs[i] if i < len(outs) else None) for i, c in enumerate(out)]
        gpu.sync()
        t3 = time.perf_counter()
        parts.append((t1 - t0, t2 - t1, t3 - t2))
        return t3 - t0

    passes = harness.measure(one_pass, None, COLD_NOTE)
    timed = parts[len(parts) - len(passes.times):]
    trials = [{"h2d_s": up, "kernel_s": k, "d2h_s": down, "total_s": up + k + down, "phases_s": {"query": k}}
              for up, k, down in timed]
    moved = sum(c.nbytes for rel in pinned for c in rel) + sum(c.nbytes for c in last["out"])
    # Ordinary NumPy copies of the pinned answer: the check outlives the pinned buffers.
    return passes, trials, [c.copy() for c in last["out"]], moved


def run_exported_case(gpu, doc, case, work, harness, numpy):
    test = case["test"]
    params = contract.declared_params(case)
    if exported.not_run(doc, case, [(VARIANT, params)]):
        return
    case_dir, manifest = exported.manifest_of(work, case)
    try:
        fn, rels, want, order = prepare(manifest, case_dir, numpy)
    except cupy_ops.NoOp as e:
        doc.skipped(case, test, VARIANT, params, str(e))
        return
    try:
        passes, trials, got, moved = run_case(gpu, fn, rels, manifest["args"], harness)
    except Exception as e:  # noqa: BLE001 - CuPy's error (out of memory, a CUDA error) is the case's failure
        record.stopped()
        doc.failed(case, test, VARIANT, params, f"cupy: {e}".splitlines()[0])
        return
    equal, detail = compare(got, want, order)
    r = doc.ok(case, test, VARIANT, params, passes, True, equal, detail, trials=trials, transfer_bytes=moved,
               extra={"timed": TIMED})
    print(f"{r['id']}: {'ok' if equal else 'FAILED ' + detail}, median "
          f"{contract.summarize([t['total_s'] for t in trials])['median'] * 1e3:.3f} ms with transfers, "
          f"{contract.summarize([t['kernel_s'] for t in trials])['median'] * 1e3:.3f} ms kernel", flush=True)


# --- the peer side -----------------------------------------------------------------------------------
def main(argv=None):
    a, rest = exported.parse_args("cupy_peer", "CuPy as a peer of the suite (docs/peers.md)", BENCHMARKS, argv)
    if a is None:
        return contract.EXIT_SKIP
    standin = os.environ.get(STANDIN_ENV) == "numpy"
    try:
        import numpy
        gpu = Gpu(standin)
    except ImportError as e:
        print(f"cupy_peer: error: {e} in {sys.executable}: the CuPy peer needs the cupy package and a GPU",
              file=sys.stderr)
        return contract.EXIT_SKIP
    harness = record.Harness.from_args(a)
    exporter = exported.exporter_or_none("cupy_peer", a.build_dir)
    if exporter is None:
        return contract.EXIT_SKIP

    def make_doc(cases):
        device = gpu.describe()
        ctx = record.context(str(Path(__file__).absolute().parents[3]), harness, device["engine"], 1,
                             device_extra=device,
                             extra={"sizes": cases["context"].get("sizes", []),
                                    "peer": {"name": NAME, "numpy": numpy.__version__, "variants": [VARIANT],
                                             "timed": {VARIANT: TIMED}, "cold": COLD_NOTE, "standin": standin,
                                             "data": "hdb-export .npy columns, staged in pinned host memory"}})
        return record.Document(a.benchmark, NAME, ctx, a.json, a.csv, transfer=TRANSFER)

    return record.run_guarded("cupy_peer", lambda state: exported.stream(
        "cupy_peer", state, a.benchmark, rest, harness, exporter, TMP_PREFIX, make_doc,
        lambda doc, case, work: run_exported_case(gpu, doc, case, work, harness, numpy), a.budget_s, _T0))


if __name__ == "__main__":
    sys.exit(main())
