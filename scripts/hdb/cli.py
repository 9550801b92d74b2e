"""Entry points of scripts/run-all, scripts/report and scripts/compare (python -m hdb.cli <command>)."""
import argparse
import json
import math
import signal
import sys
import textwrap
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from . import config as cfgmod
from . import contract
from .util import StrPath, UsageError, absolute_path, os_error_text

REPO = str(absolute_path(__file__).parents[2])


def version_text(prog: str) -> str:
    """--version: the suite's version (pyproject.toml, as the executables print CMake's) and the commit of
    the tree the driver runs from."""
    try:
        with Path(REPO, "pyproject.toml").open("rb") as f:
            version = str(tomllib.load(f)["project"]["version"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        version = "unknown"
    from .runstate import git_commit
    return f"{prog} (hetdb-bench {version}, commit {git_commit(REPO)})"


class _Version(argparse.Action):
    """--version, its text made only when asked for (it runs git)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print(version_text(parser.prog))
        parser.exit()


class Parser(argparse.ArgumentParser):
    """Every command's parser: --version, and a usage error raised for main() to print once, prefixed
    with the command's name."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # The epilog's lines as written (RawDescription), so the description is wrapped here.
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        if kwargs.get("description"):
            kwargs["description"] = textwrap.fill(kwargs["description"], width=78)
        super().__init__(*args, **kwargs)
        self.add_argument("--version", action=_Version, nargs=0, help="print the version and the commit, then exit")

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


# Each command's --help ends with its exit statuses (docs/driver.md, "Exit status") and two examples.
RUN_ALL_EPILOG = """exit status: 0 every executable ok or skipped; 1 an executable failed, or a result file could not
be written; 2 bad options or configuration, a selection of nothing, a run to resume that cannot be;
128+N stopped by signal N (finish with --resume RUN_ID).

examples:
  scripts/run-all --config quick --dry-run          what a run would do, and how long it may take
  scripts/run-all --config default --backends cpu,opencl --sizes 1M,256M
"""
REPORT_EPILOG = """exit status: 0 every raw file read; 1 a raw file broken or missing (the rest reported), or the
report could not be written; 2 a document of another kind, a figure that cannot be used, not a run.

examples:
  scripts/report results/20261128-080406-quick
  scripts/report results/20261128-080406-quick --include-unverified
"""
COMPARE_EPILOG = """exit status: 0 both runs read; 1 a raw file broken (compared without it), or the output could not
be written; 2 bad options, a document of another kind, a figure that cannot be used, not a run.

examples:
  scripts/compare results/before results/after                  kernel medians, rank test per case
  scripts/compare results/before results/after --metric total --min-effect 0.10
"""


def _csv(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _seconds(text: str) -> float:
    """--timeout: a positive, finite number of seconds (nan, inf, 0 and negatives are refused)."""
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive, finite number of seconds, not {text!r}")
    return v


def _check_selection(a: argparse.Namespace, cfg: dict[str, Any], path: str, bin_dir: StrPath) -> None:
    """A selection that names nothing, or a benchmark that does not exist, is a usage error that
    lists the valid names."""
    known = cfgmod.known_benchmarks(REPO, bin_dir)
    for opt, given, valid in (("--benchmarks", a.benchmarks, known), ("--backends", a.backends, cfgmod.BACKENDS)):
        if given is not None and not given:
            raise UsageError(f"{opt} names nothing (valid: {', '.join(valid)})")
    if a.sizes is not None and not _csv(a.sizes):
        raise UsageError("--sizes names no size (e.g. --sizes 32K,1M,16M)")
    unknown = [b for b in cfg["benchmarks"] if b not in known]
    if unknown:
        where = "--benchmarks" if a.benchmarks else f"{path}: 'benchmarks'"
        raise UsageError(f"{where}: no benchmark named {', '.join(unknown)} (valid: {', '.join(known)})")
    tables = [b for b in cfg["bench"] if b not in known]  # a misspelt [bench.<name>] would be ignored
    if tables:
        raise UsageError(f"{path}: [bench.{tables[0]}]: no benchmark named {tables[0]} (valid: {', '.join(known)})")
    if not cfg["benchmarks"] or not cfg["backends"]:
        raise UsageError(f"{path}: the configuration selects no " + ("benchmark" if not cfg["benchmarks"] else
                                                                       "backend"))
    cfgmod.check_runs(cfg, path)


def _check_out(out: StrPath) -> None:
    """--out must be a folder (or one that can be made): a file there is a usage error, found before
    the setup and the build, never a run directory half made."""
    if Path(out).exists() and not Path(out).is_dir():
        raise UsageError(f"--out {out}: is a file, not a folder for runs (give a folder, e.g. --out results)")


def _resume_target(text: str) -> str:
    """--resume RUN_ID: a run id or a run directory, never empty (an unset variable in a script,
    `--resume "$RUN"`, must not start a new full run)."""
    if not text.strip():
        raise UsageError("--resume names no run (an empty RUN_ID: an unset variable?); give a run id under --out "
                         "or a run directory")
    return text


def run_all(argv: list[str]) -> int:
    p = Parser(prog="run-all", description="Run every built hetdb-bench executable over a configured sweep and "
               "write results/<run-id>/ (raw JSON and CSV, summary.csv, report.md, report.html, plots). "
               "See docs/driver.md.", epilog=RUN_ALL_EPILOG)
    p.add_argument("--config", help="quick, default, full, or a path to a .toml file (default: quick)")
    p.add_argument("--benchmarks", type=_csv, help="comma-separated benchmarks (overrides the config)")
    p.add_argument("--backends", type=_csv, help="comma-separated backends: " + ",".join(cfgmod.BACKENDS)
                   + " (cuda-host: the CUDA sources run on the CPU, a correctness check)")
    p.add_argument("--sizes", help="input sizes for every executable, e.g. 32K,1M,16M")
    p.add_argument("--passes", type=int, help="minimum timed passes per case")
    p.add_argument("--device", type=int, help="device index for the CUDA/OpenCL executables")
    p.add_argument("--timeout", type=_seconds, help="time limit per executable in seconds (positive, finite); "
                   "with --resume: for the entries left to run (recorded in run.json)")
    p.add_argument("--mpi", type=_csv, default=[], metavar="N[,N...]",
                   help="run every executable under mpirun -np N; several counts (1,2,4) make one run per count "
                        "and a scaling report")
    p.add_argument("--hostfile", metavar="FILE", help="with --mpi: the nodes and their slots (mpirun --hostfile), "
                   "for runs across nodes")
    p.add_argument("--mpi-args", metavar="'ARGS'", help="with --mpi: more launcher options, one string split as the "
                   "shell would (e.g. \"--map-by node --mca btl_tcp_if_include eth1\")")
    p.add_argument("--build-dir", help="build folder (default: build; with --resume, the run's own)")
    p.add_argument("--out", default=str(Path(REPO) / "results"), help="results root (default: results)")
    p.add_argument("--resume", metavar="RUN_ID", type=_resume_target,
                   help="finish an interrupted or incomplete run (its configuration and build are kept)")
    p.add_argument("--allow-mixed-builds", action="store_true",
                   help="with --resume: run the rest with binaries other than the run's (another --build-dir or "
                        "a rebuild); each entry records its build and the report flags the mix")
    p.add_argument("--build", action="store_true", help="run the (incremental) build even when executables exist")
    p.add_argument("--no-setup", action="store_true", help="do not call scripts/setup")
    p.add_argument("--no-build", action="store_true", help="never configure or build")
    p.add_argument("--no-report", action="store_true", help="write raw JSON/CSV and summary.csv only")
    p.add_argument("--peers", type=_csv, help="peers to run beside the executables (docs/peers.md): "
                   "duckdb,pg_trgm (overrides the config)")
    p.add_argument("--no-peers", action="store_true", help="run no peer (with --resume: drop the peers left to "
                   "run, recorded as skipped)")
    p.add_argument("--dry-run", action="store_true", help="print the plan (entries, their cases from each built "
                   "executable's --list, the timed-pass budget and time limits) and exit: no setup, build or run "
                   "directory")
    a = p.parse_args(argv)
    if not a.mpi and any(x == "--mpi" or x.startswith("--mpi=") for x in argv):
        raise UsageError("--mpi names no rank count (e.g. --mpi 4 or --mpi 1,2,4)")
    try:
        a.mpi = [int(n) for n in a.mpi]
    except ValueError:
        raise UsageError(f"--mpi takes rank counts such as 4 or 1,2,4, got {','.join(a.mpi)}") from None
    if any(n < 1 for n in a.mpi):
        raise UsageError("--mpi must be a positive number of ranks")
    import shlex

    from .runner import Runner
    command_line = " ".join(["scripts/run-all"] + [shlex.quote(x) for x in argv])
    if a.resume is not None:
        # --config is taken when it names the run's own configuration (Runner checks it against run.json).
        # --timeout (a new limit for the entries left) and --no-peers (drop the peers left) are taken, and
        # recorded in run.json (runstate.resume_changes): what would change what the run measures is not.
        overridden = [o for o in ("benchmarks", "backends", "sizes", "passes", "device",
                                  "hostfile", "mpi_args", "peers") if getattr(a, o) is not None]
        overridden += ["mpi"] if a.mpi else []
        overridden += ["dry_run"] if a.dry_run else []
        if overridden:
            raise UsageError("--resume keeps the run's own configuration; drop --" +
                             ", --".join(o.replace("_", "-") for o in overridden)
                             + " (a resume takes --timeout and --no-peers for the rest of the run)")
        runner = Runner(REPO, a.out, a.build_dir, resume=a.resume, do_setup=not a.no_setup,
                        do_build=not a.no_build, force_build=a.build, report=not a.no_report, command_line=command_line,
                        allow_mixed_builds=a.allow_mixed_builds, config_name=a.config,
                        resume_timeout_s=a.timeout, resume_no_peers=a.no_peers)
        return runner.execute()
    if a.allow_mixed_builds:
        raise UsageError("--allow-mixed-builds applies to --resume only (a new run uses one build)")
    a.config = a.config or "quick"
    a.build_dir = a.build_dir or str(Path(REPO) / "build")
    _check_out(a.out)
    path = cfgmod.resolve_config_path(REPO, a.config)
    cfg = cfgmod.apply_overrides(cfgmod.load(path), a.benchmarks, a.backends, a.sizes, a.passes, a.device,
                                 a.timeout)
    cfgmod.override_peers(cfg, a.peers, a.no_peers)
    cfg["mpi"] = cfgmod.apply_mpi_overrides(cfg.get("mpi", {}), a.mpi, a.hostfile, a.mpi_args)
    # Everything is checked before anything is made (a run directory, or every run of a sweep).
    _check_selection(a, cfg, path, str(absolute_path(a.build_dir) / "bin"))
    if a.dry_run:
        from . import dryrun, runplan
        dryrun.print_plan(runplan.plan(cfg), cfg, path, str(absolute_path(a.build_dir) / "bin"), sys.stdout)
        return contract.EXIT_OK
    if len(cfg["mpi"].get("ranks", [])) > 1:
        return _scaling_sweep(argv, a, cfg["mpi"]["ranks"])
    # No MPI: 0 ranks, as Runner's default says (mpi_launch returns None).
    runner = Runner(REPO, a.out, a.build_dir, cfg, a.config, mpi=cfgmod.mpi_launch(cfg["mpi"]) or 0,
                    do_setup=not a.no_setup, do_build=not a.no_build, force_build=a.build, report=not a.no_report,
                    command_line=command_line)
    return runner.execute()


def _scaling_sweep(argv: list[str], a: argparse.Namespace, counts: Sequence[int]) -> int:
    """One run-all per rank count (from --mpi or the configuration's [mpi] ranks), then
    scaling.md/csv and a figure beside the runs."""
    counts = sorted(set(counts))
    rest, skip = [], False
    for x in argv:  # the same command line without --mpi
        if skip:
            skip = False
        elif x == "--mpi":
            skip = True
        elif not x.startswith("--mpi="):
            rest.append(x)
    runs: list[tuple[int, str]] = []
    rc = 0
    out_dir = Path(a.out)
    for n in counts:
        before = {e.name for e in out_dir.iterdir()} if out_dir.is_dir() else set()
        one = run_all(rest + ["--mpi", str(n)])
        if one > 128:  # stopped by a signal: the sweep stops too (each run resumes on its own)
            return one
        rc = max(rc, one)
        new = sorted({e.name for e in out_dir.iterdir()} - before)
        if new:
            runs.append((n, str(out_dir / new[-1])))
    if len(runs) > 1:
        from . import scaling
        out = runs[0][1] + "-scaling"
        scaling.write(runs, out, stream=sys.stdout)
    return rc


def report(argv: list[str]) -> int:
    p = Parser(prog="report", description="(Re)generate summary.csv, report.md, report.html and the plots of a "
               "run directory from its raw JSON.", epilog=REPORT_EPILOG)
    p.add_argument("run_dir", help="results/<run-id>")
    p.add_argument("--include-unverified", action="store_true",
                   help="also draw results measured without verification (--no-verify) in the figures")
    a = p.parse_args(argv)
    from . import report as rep
    return rep.main(a.run_dir, stream=sys.stdout, include_unverified=a.include_unverified)


def _alpha(text: str) -> float:
    """--alpha: a number above 0 and below 1."""
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not 0 < v < 1:  # nan too
        raise argparse.ArgumentTypeError(f"must be a number above 0 and below 1, not {text!r}")
    return v


def _min_effect(text: str) -> float:
    """--min-effect: a finite number, 0 or more."""
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not math.isfinite(v) or v < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number, 0 or more, not {text!r}")
    return v


def compare(argv: list[str]) -> int:
    p = Parser(prog="compare", description="Compare two runs: side-by-side table and ratio plots, matched by "
               "benchmark, backend and result id; a difference is marked only where a Mann-Whitney U test over the "
               "trials rejects 'same' and the effect reaches the minimum (docs/statistics.md).", epilog=COMPARE_EPILOG)
    p.add_argument("run_a", help="baseline run directory")
    p.add_argument("run_b", help="run compared with the baseline")
    p.add_argument("--out", help="output folder (default: <parent of run_b>/compare-<a>-vs-<b>)")
    p.add_argument("--metric", choices=["kernel", "total"], default="kernel",
                   help="median time compared: kernel only or with transfers (default: kernel)")
    p.add_argument("--include-unverified", action="store_true",
                   help="also compare results measured without verification (--no-verify)")
    p.add_argument("--alpha", type=_alpha, default=0.05,
                   help="significance level of the rank test, after the correction (default: 0.05)")
    p.add_argument("--min-effect", type=_min_effect, default=0.05,
                   help="smallest difference marked: the slower median at least 1 + this times the faster "
                   "(default: 0.05)")
    p.add_argument("--correction", choices=["bh", "none"], default="bh",
                   help="adjustment of p for the number of tests: bh (Benjamini-Hochberg, the default) or none")
    a = p.parse_args(argv)
    from . import compare as cmp
    return cmp.main(a.run_a, a.run_b, a.out, a.metric, stream=sys.stdout, include_unverified=a.include_unverified,
                    alpha=a.alpha, min_effect=a.min_effect, correction=a.correction)


def regression_gate(argv: list[str]) -> int:
    p = Parser(prog="regression-gate", description="Run the CPU regression gate (config/regression.json): a short "
               "hdb-ra-cpu run judged by machine-independent ratios against the reference of this processor; exit 1 "
               "when a case lost more than the stated factor. See docs/performance.md, 'The regression gate'.")
    p.add_argument("--build-dir", default="build", help="build folder holding bin/hdb-ra-cpu (default: build)")
    p.add_argument("--config", default=str(Path(REPO) / "config" / "regression.json"),
                   help="the gate's cases and references (default: config/regression.json)")
    p.add_argument("--keep", metavar="DIR", help="keep the gate's result documents in DIR")
    p.add_argument("--make-reference", metavar="DOC", nargs="+",
                   help="print this machine's entry for the configuration from DOC... (hdb-ra-cpu result documents "
                   "taken here, holding the gate's cases; each ratio the lowest of them) instead of running; needs "
                   "--source")
    p.add_argument("--source", help="with --make-reference: the run and commit the ratios come from")
    p.add_argument("--cpuinfo", default="/proc/cpuinfo",
                   help="where the processor's flags are read, for AVX-512 (default: /proc/cpuinfo)")
    a = p.parse_args(argv)
    from . import regression
    gate = regression.load_gate(a.config)
    if a.make_reference:
        if not a.source:
            raise UsageError("--make-reference needs --source (the run and commit the ratios come from)")
        docs = []
        for path in a.make_reference:
            try:
                docs.append(json.loads(Path(path).read_text()))
            except ValueError as e:
                raise UsageError(f"{path}: not a result document ({e})") from e
        print(json.dumps(regression.make_reference(docs, gate, regression.has_avx512(a.cpuinfo), a.source), indent=1))
        return contract.EXIT_OK
    exe = Path(a.build_dir) / "bin" / "hdb-ra-cpu"
    if not exe.is_file():
        raise UsageError(f"{exe}: no such executable (build it, or name the build folder with --build-dir)")
    try:
        passed, text = regression.run_gate(exe, gate, regression.has_avx512(a.cpuinfo), a.keep)
    except regression.GateError as e:
        print(f"regression-gate: error: {e}", file=sys.stderr)
        return contract.EXIT_FAILED
    print(text)
    return contract.EXIT_OK if passed else contract.EXIT_FAILED


COMMANDS = {"run-all": run_all, "report": report, "compare": compare, "regression-gate": regression_gate}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: python -m hdb.cli {{{','.join(COMMANDS)}}} ...", file=sys.stderr)
        return contract.EXIT_USAGE
    from .runner import Interrupted, signal_name
    try:
        return COMMANDS[argv[0]](argv[1:])
    except UsageError as e:
        print(f"{argv[0]}: error: {e}", file=sys.stderr)
        return contract.EXIT_USAGE
    except OSError as e:  # a file that cannot be read or written: one line, never a traceback
        print(f"{argv[0]}: error: {os_error_text(e)}", file=sys.stderr)
        return contract.EXIT_FAILED
    except KeyboardInterrupt:
        print("\ninterrupted; results so far are kept (run-all: finish with --resume RUN_ID)", file=sys.stderr)
        return 128 + signal.SIGINT
    except Interrupted as e:
        print(f"\n{argv[0]}: interrupted by {signal_name(e.signum)}; results so far are kept (run-all: finish with "
              "--resume RUN_ID)", file=sys.stderr)
        return 128 + e.signum


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
