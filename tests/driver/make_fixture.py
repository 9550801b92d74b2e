#!/usr/bin/env python3
"""Writes the committed report fixture (fixtures/run-small): a run directory with hetdb-bench/1
documents for every benchmark, so that report generation can be tested to draw every figure.

The numbers are SYNTHETIC (a simple cost model below), not measurements: host and devices are
named 'fixture' to make that plain. Regenerate with: python3 tests/driver/make_fixture.py
"""
import json
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures", "run-small")
SIZES = [32 << 10, 1 << 20, 32 << 20]
TSC_HZ = 2.5e9


def stats(v):
    mean = statistics.fmean(v)
    sd = statistics.stdev(v) if len(v) > 1 else 0.0
    return {"n": len(v), "min": min(v), "median": statistics.median(v), "mean": mean, "max": max(v),
            "stddev": sd, "cv": sd / mean if mean else 0.0}


def record(test, variant, size, kernel_s, h2d_s=0.0, d2h_s=0.0, params=None, extra=None, transfer="none",
           moved_factor=2, ceiling=20.0, status="ok", reason=""):
    params = params or {}
    ptxt = "[" + ",".join(f"{k}={v}" for k, v in params.items()) + "]" if params else ""
    label = {32 << 10: "32K", 1 << 20: "1M", 32 << 20: "32M"}[size]
    r = {"id": f"{test}/{variant}{ptxt}@{label}", "test": test, "variant": variant, "params": params,
         "size_bytes": size, "size_label": f"2^{int(math.log2(size))}", "transfer": transfer, "status": status,
         "reason": reason, "verification": {"verified": status == "ok", "detail": "synthetic fixture"},
         "elements": size // 8, "bytes": {"input": size, "min_moved": moved_factor * size,
                                          "transfer": size if h2d_s else 0},
         "extra": extra or {}, "trials": []}
    if status != "ok":
        return r
    trials = []
    for j, f in enumerate((1.0, 1.02, 0.99)):
        t = {"h2d_s": h2d_s * f, "kernel_s": kernel_s * f, "d2h_s": d2h_s * f, "phases_s": {}}
        t["total_s"] = t["h2d_s"] + t["kernel_s"] + t["d2h_s"] + 1e-6
        trials.append(t)
    r["trials"] = trials
    st = {k: stats([t[k] for t in trials]) for k in ("kernel_s", "total_s", "h2d_s", "d2h_s")}
    st["phases_s"] = {}
    r["stats"] = st
    k, tot = st["kernel_s"]["median"], st["total_s"]["median"]
    moved = moved_factor * size / k / 1e9
    r["throughput"] = {"kernel_gbps": size / k / 1e9, "total_gbps": size / tot / 1e9,
                       "elements_per_s": (size // 8) / k, "moved_gbps": moved,
                       "pct_of_peak": 100 * moved / ceiling if moved_factor else 0.0,
                       "parity": (st["h2d_s"]["median"] + st["d2h_s"]["median"]) / k}
    return r


def document(bench, backend, results, ceiling):
    device = {"cpu": {"kind": "cpu", "name": "fixture CPU", "threads": 2, "tsc_hz": TSC_HZ},
              "opencl": {"kind": "opencl", "name": "fixture OpenCL device", "platform": "fixture platform"},
              "cuda": {"kind": "cuda", "name": "fixture GPU", "compute_capability": "9.0", "sm_count": 132,
                       "pcie": {"gen": 5, "width": 16}}}[backend]
    ctx = {"host": "fixture", "cpu": "fixture CPU", "logical_cores": 2, "memory_bytes": 8 << 30,
           "os": "synthetic", "compiler": "none", "git_commit": "fixture", "command_line": f"hdb-{bench}-{backend}",
           "time_utc": "2026-01-01T00:00:00Z", "device": device, "mpi": {"active": False, "rank": 0, "size": 1}}
    s = {k: sum(r["status"] == k for r in results) for k in ("ok", "skipped", "failed")}
    return {"schema": "hetdb-bench/1", "benchmark": bench, "backend": backend, "context": ctx,
            "ceiling": {"memory_copy_gbps": ceiling, "definition": "measured copy bandwidth, bytes read + bytes written"},
            "results": results, "summary": s}


def bw(size, gbps, latency=2e-6):
    return latency + size / (gbps * 1e9)


def build():
    docs = {}
    docs["bus-cpu"] = document("bus", "cpu", [record(t, v, s, bw(s, g), ceiling=20.0)
                                              for t, v, g in (("memcpy", "serial", 10), ("memcpy", "parallel", 18),
                                                              ("triad", "serial", 8), ("triad", "parallel", 15))
                                              for s in SIZES], 20.0)
    docs["bus-cuda"] = document("bus", "cuda", [record(t, v, s, bw(s, g, 8e-6), transfer=tr, moved_factor=mf,
                                                       ceiling=3000.0)
                                                for t, v, tr, g, mf in (("h2d", "pinned", "pinned", 25, 0),
                                                                        ("d2h", "pinned", "pinned", 26, 0),
                                                                        ("device_copy", "kernel", "none", 1500, 2))
                                                for s in SIZES], 3000.0)
    ra = []
    for test in ("select", "join"):
        for s in SIZES:
            ra.append(record(test, "serial", s, bw(s, 1.0 if test == "select" else 0.3), params={"selectivity": "0.5"}))
            ra.append(record(test, "parallel", s, bw(s, 1.8 if test == "select" else 0.5), params={"selectivity": "0.5"}))
    docs["ra-cpu"] = document("ra", "cpu", ra, 20.0)
    rac = []
    for test in ("select", "join"):
        for s in SIZES:
            if test == "join" and s == SIZES[-1]:
                rac.append(record(test, "thrust", s, 0, params={"selectivity": "0.5"}, status="skipped",
                                  reason="does not fit in device memory (fixture)"))
                continue
            rac.append(record(test, "thrust", s, bw(s, 300 if test == "select" else 90, 1e-5), bw(s, 25), bw(s, 26) / 2,
                              params={"selectivity": "0.5"}, transfer="pinned", ceiling=3000.0))
    docs["ra-cuda"] = document("ra", "cuda", rac, 3000.0)
    tp = []
    for k, cost in (("A", 1.0), ("B", 3.0), ("C", 4.0)):
        for v, g in (("serial", 0.8), ("parallel", 1.5)):
            tp += [record(k, v, s, bw(s, g / cost)) for s in SIZES]
    docs["tpch-cpu"] = document("tpch", "cpu", tp, 20.0)
    tg = []
    for k, cost in (("A", 1.0), ("B", 3.0), ("C", 4.0)):
        for v, g in (("operator", 120), ("fused", 600)):
            tg += [record(k, v, s, bw(s, g / cost, 1e-5), bw(s, 25), bw(s, 26) / 20, transfer="pinned",
                          ceiling=3000.0) for s in SIZES]
    docs["tpch-cuda"] = document("tpch", "cuda", tg, 3000.0)
    mc, mg = [], []
    for step, cost in (("1a", 3.0), ("1b", 2.0), ("2a", 0.2), ("2b", 1.5)):
        for u, uf in (("1%", 0.5), ("100%", 1.0)):
            for s in SIZES[1:]:
                cpt = cost * uf * 10
                k = cpt * (s // 8) / TSC_HZ
                mc.append(record(step, "serial", s, k, params={"unique": u}, extra={"cycles_per_tuple": cpt}))
                mc.append(record(step, "parallel", s, k / 1.8, params={"unique": u}))
                mg.append(record(step, "slice_merge", s, k / 40 + 1e-5, bw(s, 25), bw(s, 26), params={"unique": u},
                                 transfer="pinned", ceiling=3000.0))
    docs["merge-cpu"] = document("merge", "cpu", mc, 20.0)
    docs["merge-cuda"] = document("merge", "cuda", mg, 3000.0)
    nc, ng = [], []
    s = SIZES[1]
    for e in range(0, 5):
        base = 1e-3 * (1 + e)
        nc.append(record("search", "baseline", s, base, params={"errors": str(e)}))
        nc.append(record("search", "binned", s, base / 2.5, params={"errors": str(e)}))
        ng.append(record("search", "gpu", s, base / (20 - 3 * e), bw(s, 25), 1e-6, params={"errors": str(e)},
                         transfer="pinned", extra={"share_accelerated": max(0.95 - 0.15 * e, 0.1)}, ceiling=3000.0))
    docs["ngram-cpu"] = document("ngram", "cpu", nc, 20.0)
    docs["ngram-cuda"] = document("ngram", "cuda", ng, 3000.0)
    return docs


def manifest(docs):
    entries = []
    for name, d in docs.items():
        entries.append({"name": name, "benchmark": d["benchmark"], "backend": d["backend"],
                        "executable": f"hdb-{name}", "args": ["--sizes", "32K,1M,32M"], "timeout_s": 60.0,
                        "status": "ok", "exit_code": 0, "duration_s": 1.0, "reason": "", "cases": d["summary"]})
    entries.append({"name": "bus-opencl", "benchmark": "bus", "backend": "opencl", "executable": "hdb-bus-opencl",
                    "args": [], "timeout_s": 60.0, "status": "skipped", "exit_code": 77, "duration_s": 0.1,
                    "reason": "skipped: no OpenCL device (fixture)"})
    return {"run_id": "run-small", "config_name": "fixture", "config": {}, "mpi": 0, "git_commit": "fixture",
            "started_utc": "2026-01-01T00:00:00Z", "finished_utc": "2026-01-01T00:01:00Z", "entries": entries}


def main(out=OUT):
    docs = build()
    os.makedirs(os.path.join(out, "raw"), exist_ok=True)
    for name, d in docs.items():
        with open(os.path.join(out, "raw", name + ".json"), "w") as f:
            json.dump(d, f, sort_keys=True, separators=(",", ":"))
            f.write("\n")
    with open(os.path.join(out, "run.json"), "w") as f:
        json.dump(manifest(docs), f, indent=1, sort_keys=True)
        f.write("\n")
    return out


if __name__ == "__main__":
    print(main(sys.argv[1] if len(sys.argv) > 1 else OUT))
