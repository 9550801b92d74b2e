"""The driver across nodes (issue 20): --hostfile and --mpi-args (and the [mpi] table of a
configuration) reach mpirun; bad input exits 2 with one line naming it; run.json records the
launch and where the ranks ran; the scaling table shows the exchange's share and the bytes sent.
mpirun is a fake here (it records its arguments and runs the executable once, adding the merged
document's mpi block); tests/multinode runs the real thing on two simulated nodes."""
import json
import os
import stat
from pathlib import Path

from helpers import TempDirCase, script

from hdb import scaling

import make_fixture

FAKE_MPIRUN = r'''#!/usr/bin/env python3
import json, os, subprocess, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("mpirun (Open MPI) 4.1.4")
    sys.exit(0)
with open(os.environ["FAKE_MPIRUN_LOG"], "a") as f:
    f.write(json.dumps(args) + "\n")
fail = os.environ.get("FAKE_MPIRUN_FAIL")
if fail:  # as Open MPI's mpirun tells a job it could not start, or a rank that died
    rule = "-" * 74
    print(f"{rule}\n{os.environ['FAKE_MPIRUN_TEXT']}\n\n* a possible cause\n{rule}", file=sys.stderr)
    sys.exit(int(fail))
exe = next(i for i, a in enumerate(args) if "/bin/hdb-" in a)
n = int(args[args.index("-np") + 1])
rc = subprocess.call(args[exe:])
path = args[args.index("--json") + 1]
with open(path) as f:
    doc = json.load(f)
hosts = [{"host": "node-a", "ranks": list(range(0, n, 2))}]
if n > 1:
    hosts.append({"host": "node-b", "ranks": list(range(1, n, 2))})
doc["mpi"] = {"mode": "ep", "size": n, "hosts": hosts,
              "ranks": [{"rank": r, "exit_code": 0, "host": "node-" + "ab"[r % 2]} for r in range(n)]}
with open(path, "w") as f:
    json.dump(doc, f)
sys.exit(rc)
'''


def _read(path):
    return Path(path).read_text()


def _read_json(path):
    return json.loads(_read(path))


class MpiLaunchTest(TempDirCase):
    def setUp(self):
        super().setUp()
        self.build = self.make_fakes({"dist-cpu": "ok"})
        fake_dir = Path(self.tmp, "fakebin")
        fake_dir.mkdir(parents=True)
        mpirun = fake_dir / "mpirun"
        with mpirun.open("w") as f:
            f.write(FAKE_MPIRUN)
        mpirun.chmod(mpirun.stat().st_mode | stat.S_IXUSR)
        self.log = str(Path(self.tmp, "mpirun.log"))
        self.env = {"PATH": str(fake_dir) + os.pathsep + os.environ["PATH"], "FAKE_MPIRUN_LOG": self.log,
                    "FAKE_LOG": str(Path(self.tmp, "fake.log"))}
        self.hosts = str(Path(self.tmp, "hosts"))
        with Path(self.hosts).open("w") as f:
            f.write("# two nodes\n10.77.0.1 slots=2\n10.77.0.2 slots=2  # node b\n")
        self.out = str(Path(self.tmp, "results"))

    def run_all(self, *args):
        return script("run-all", "--no-setup", "--no-build", "--build-dir", self.build, "--out", self.out,
                      "--benchmarks", "dist", "--backends", "cpu", *args, env=self.env)

    def launches(self):
        with Path(self.log).open() as f:
            return [json.loads(line) for line in f]

    def manifests(self):
        runs = sorted(d.name for d in Path(self.out).iterdir() if not d.name.endswith("-scaling"))
        return [_read_json(Path(self.out, d, "run.json")) for d in runs]

    def test_hostfile_and_launcher_options_reach_mpirun(self):
        r = self.run_all("--mpi", "4", "--hostfile", self.hosts, "--mpi-args", "--map-by node --mca btl self,tcp")
        self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
        (args,) = self.launches()
        exe = next(i for i, a in enumerate(args) if "/bin/hdb-" in a)
        self.assertEqual(args[:exe], ["-np", "4", "--oversubscribe", "--hostfile", self.hosts,
                                      "--map-by", "node", "--mca", "btl", "self,tcp"])
        (m,) = self.manifests()
        self.assertEqual(m["mpi"], 4)
        self.assertEqual(m["mpi_launch"], {"ranks": 4, "hostfile": self.hosts, "args": [
            "--map-by", "node", "--mca", "btl", "self,tcp"], "hosts": [
            {"host": "10.77.0.1", "slots": 2}, {"host": "10.77.0.2", "slots": 2}]})
        dist = next(e for e in m["entries"] if e["benchmark"] == "dist")
        self.assertEqual(dist["status"], "ok")
        self.assertEqual(dist["mpi_hosts"], [{"host": "node-a", "ranks": [0, 2]}, {"host": "node-b", "ranks": [1, 3]}])

    def test_mpirun_failures_are_failures_with_its_reason(self):
        for code, text, reason in [
            ("255", "ORTE was unable to reliably start one or more daemons.\nThis usually is caused by:",
             "exit 255: mpirun: ORTE was unable to reliably start one or more daemons. This usually is caused by:"),
            ("3", "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
                  "the job to be terminated.", "exit 3: mpirun: mpirun detected that one or more processes exited "
                                               "with non-zero status, thus causing the job to be terminated.")]:
            self.env.update(FAKE_MPIRUN_FAIL=code, FAKE_MPIRUN_TEXT=text)
            r = self.run_all("--mpi", "2", "--hostfile", self.hosts)
            self.assertEqual(r.returncode, 1, r.stderr + r.stdout)
            dist = next(e for e in self.manifests()[-1]["entries"] if e["benchmark"] == "dist")
            self.assertEqual((dist["status"], dist["failure"], dist["reason"]), ("failed", "exit", reason))

    def test_scaling_sweep_keeps_the_hostfile(self):
        r = self.run_all("--mpi", "1,2,4", "--hostfile", self.hosts, "--mpi-args", "--map-by node")
        self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
        launches = self.launches()
        self.assertEqual([a[a.index("-np") + 1] for a in launches], ["1", "2", "4"])
        self.assertTrue(all(a[a.index("--hostfile") + 1] == self.hosts and "--map-by" in a for a in launches))
        self.assertTrue(any(d.name.endswith("-scaling") for d in Path(self.out).iterdir()))

    def test_config_mpi_table(self):
        cfg = str(Path(self.tmp, "two-nodes.toml"))
        with Path(cfg).open("w") as f:
            f.write('benchmarks = ["dist"]\nbackends = ["cpu"]\n[harness]\nsizes = "32K"\n'
                    '[mpi]\nranks = 2\nhostfile = "hosts"\nargs = ["--map-by", "node"]\n')
        r = script("run-all", "--no-setup", "--no-build", "--build-dir", self.build, "--out", self.out,
                   "--config", cfg, env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
        (args,) = self.launches()
        self.assertEqual(args[:6], ["-np", "2", "--oversubscribe", "--hostfile", self.hosts, "--map-by"])
        # The command line wins over the configuration.
        r = script("run-all", "--no-setup", "--no-build", "--build-dir", self.build, "--out", self.out,
                   "--config", cfg, "--mpi", "4", "--mpi-args", "--map-by slot", env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
        args = self.launches()[-1]
        self.assertEqual(args[:7], ["-np", "4", "--oversubscribe", "--hostfile", self.hosts, "--map-by", "slot"])

    def test_bad_input_exits_2(self):
        empty = str(Path(self.tmp, "empty"))
        with Path(empty).open("w") as f:
            f.write("# nothing\n\n")
        missing = str(Path(self.tmp, "nope"))
        for args, message in [
            (["--mpi", "2", "--hostfile", missing],
             f"--hostfile {missing}: cannot read it (No such file or directory)"),
            (["--mpi", "2", "--hostfile", empty], f"--hostfile {empty}: names no host"),
            (["--hostfile", self.hosts], "--hostfile needs --mpi N"),
            (["--mpi-args", "--map-by node"], "--mpi-args needs --mpi N"),
            (["--mpi", "2", "--mpi-args", "--mca 'unclosed"], "--mpi-args: cannot split"),
        ]:
            r = self.run_all(*args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(message, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertFalse(Path(self.out).exists() and any(Path(self.out).iterdir()), "a run directory was made")
        self.assertFalse(Path(self.log).exists(), "mpirun was started")

    def test_bad_mpi_table_exits_2(self):
        for table, message in [("ranks = 0", "'ranks' must be a positive number"),
                               ("hosts = 'x'", "unknown key 'hosts'"),
                               ("args = 3", "must be a string of launcher options"),
                               ("ranks = 2\nhostfile = 'nope'", "[mpi] hostfile"),
                               ("args = '--map-by node'", "--mpi-args needs --mpi N")]:
            cfg = str(Path(self.tmp, "bad.toml"))
            with Path(cfg).open("w") as f:
                f.write(f"[mpi]\n{table}\n")
            r = script("run-all", "--no-setup", "--no-build", "--build-dir", self.build, "--out", self.out,
                       "--config", cfg, env=self.env)
            self.assertEqual(r.returncode, 2, (table, r.stderr))
            self.assertIn(message, r.stderr)

    def test_resume_keeps_the_launch(self):
        r = script("run-all", "--out", self.out, "--hostfile", self.hosts, "--mpi-args=-v", "--resume", "x",
                   env=self.env)
        self.assertEqual(r.returncode, 2)
        self.assertIn("drop --hostfile, --mpi-args", r.stderr)


class ScalingExchangeTest(TempDirCase):
    """The scaling table's exchange columns: the exchange phase's share of the total time, the
    busiest rank's bytes sent and the share of them that crossed between nodes, read by name."""

    def _run(self, ranks, kernel_s, sent):
        extra = {"ranks": ranks, "sent_bytes_per_rank": sent, "exchanged_bytes": sum(sent),
                 "off_node_bytes": sum(sent) // 2, "nodes": 2 if ranks > 1 else 1}
        rec = make_fixture.record("dist_join", "serial", 1 << 20, kernel_s, params={"ranks": ranks, "scaling": "weak"},
                                  extra=extra, phases=(("partition", "host", 0.25), ("exchange", "network", 0.5)))
        raw = Path(self.tmp, f"r{ranks}", "raw")
        raw.mkdir(parents=True)
        with (raw / "dist-cpu.json").open("w") as f:
            json.dump(make_fixture.document("dist", "cpu", [rec], 20.0), f)
        with Path(self.tmp, f"r{ranks}", "run.json").open("w") as f:
            json.dump({"entries": [{"mpi_hosts": [{"host": "a", "ranks": list(range(0, ranks, 2))},
                                                  {"host": "b", "ranks": list(range(1, ranks, 2))}]}]}, f)
        return ranks, str(Path(self.tmp, f"r{ranks}"))

    def test_exchange_columns(self):
        runs = [self._run(1, 1.0, [0]), self._run(2, 1.0, [4096, 4096]), self._run(4, 1.2, [6144, 4096, 2048, 1024])]
        out = str(Path(self.tmp, "scaling"))
        scaling.write(runs, out)
        md = _read(Path(out, "scaling.md"))
        self.assertIn("exchange 4: share · sent per rank", md)
        self.assertIn("50% · 6.0 KiB (50% off-node)", md)
        self.assertIn("Hosts (4 ranks): a: 0,2; b: 1,3", md)
        head, row = _read(Path(out, "scaling.csv")).splitlines()
        cells = dict(zip(head.split(","), row.split(","), strict=True))
        self.assertEqual(cells["sent_bytes_max_rank_np4"], "6144")
        self.assertEqual(cells["off_node_bytes_np4"], "6656")
        self.assertAlmostEqual(float(cells["exchange_share_np2"]), 0.5, places=3)
