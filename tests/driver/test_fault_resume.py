"""Fault suite, resume (issue 31): a resumed run finishes exactly what a fault left -- an executable
stopped by a full disk, a crash or a time limit is rerun, one that ran every case is kept -- or says
why not, and a run is never marked finished while an entry is incomplete. Every entry records the
binary it ran (sha256, build folder); a resume with other binaries (another --build-dir, a rebuilt
executable) is refused unless --allow-mixed-builds asks for it, and then the mix is recorded per
entry and flagged in the report. The neighbours: --resume of nothing, of a folder that is no run,
of a file, of an empty name. Temporary directories, fake executables, every command bounded."""
import hashlib
import json
import shutil
from pathlib import Path

from helpers import FaultCase, bounded, read_json


class IncompleteTest(FaultCase):
    """An executable that fails before its last case leaves the run incomplete; --resume reruns it."""
    MODES = {"bus-cpu": "ok", "ngram-cpu": "diskfull"}

    def test_a_full_disk_in_an_executable_is_finished_by_resume(self):
        p = self.run_all()
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        run = self.only_run()
        m = self.manifest(run)
        e = {x["name"]: x for x in m["entries"]}
        self.assertEqual(e["ngram-cpu"]["status"], "failed")
        self.assertIs(e["ngram-cpu"]["complete"], False)
        self.assertIs(e["bus-cpu"]["complete"], True)
        self.assertIn("No space left on device", e["ngram-cpu"]["reason"])
        # Not finished while an entry is incomplete: the state says so and names it.
        self.assertEqual(m["state"], "incomplete")
        self.assertNotIn("finished_utc", m)
        self.assertEqual([x["name"] for x in m["incomplete"]], ["ngram-cpu"])
        self.assertIn("the run is incomplete", p.stdout)
        self.assertIn(f"--resume {Path(run).name}", p.stdout)
        with Path(run, "report.md").open() as f:
            self.assertIn("This run is incomplete: 1 executable(s) stopped before their last case (ngram-cpu:",
                          f.read())
        first = self.ids(str(Path(run, "raw", "ngram-cpu.json")))
        self.assertEqual(len(first), 1)
        # Room again (the same binary): --resume reruns only the executable that did not finish.
        self.make_fakes({"ngram-cpu": "ok"})
        Path(self.log).unlink()
        p = self.resume(Path(run).name)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("ngram-cpu: rerun: it failed before its last case", p.stdout)
        self.assertEqual([c["name"] for c in self.calls()], ["hdb-ngram-cpu"])
        m = self.manifest(run)
        self.assertEqual(m["state"], "finished")
        self.assertIn("finished_utc", m)
        self.assertNotIn("incomplete", m)
        e = {x["name"]: x for x in m["entries"]}
        self.assertEqual(e["ngram-cpu"]["status"], "ok")
        self.assertIs(e["ngram-cpu"]["complete"], True)
        self.assertEqual(e["ngram-cpu"]["cases"]["ok"], 2)
        # The failed attempt stays: its outcome in run.json, its files beside the rerun's.
        self.assertEqual(len(e["ngram-cpu"]["attempts"]), 1)
        self.assertIn("No space left on device", e["ngram-cpu"]["attempts"][0]["reason"])
        self.assertEqual(self.ids(str(Path(run, "raw", "ngram-cpu.json.interrupted-1"))), first)
        self.assertTrue(Path(run, "logs", "ngram-cpu.log.interrupted-1").is_file())
        self.assertEqual(len(self.ids(str(Path(run, "raw", "ngram-cpu.json")))), 2)
        with Path(run, "report.md").open() as f:
            self.assertNotIn("This run is incomplete", f.read())

    def test_a_resume_that_cannot_finish_says_why(self):
        self.make_fakes({"ngram-cpu": "crash"})
        p = self.run_all("--no-report")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        run = self.only_run()
        self.assertEqual(self.manifest(run)["state"], "incomplete")
        p = self.resume(Path(run).name, "--no-report")  # it crashes again
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertNoTraceback(p)
        self.assertIn("ngram-cpu: rerun: it failed before its last case (crashed (SIGSEGV))", p.stdout)
        self.assertIn("the run is incomplete: 1 executable(s) did not take all their cases (ngram-cpu: crashed "
                      "(SIGSEGV))", p.stdout)
        m = self.manifest(run)
        self.assertEqual(m["state"], "incomplete")
        self.assertEqual(len(m["resumed"]), 1)
        self.assertEqual(len(self.entries(run)["ngram-cpu"]["attempts"]), 1)

    def test_a_failed_verification_ran_every_case_and_is_not_rerun(self):
        self.make_fakes({"ngram-cpu": "fail"})
        p = self.run_all("--no-report")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        run = self.only_run()
        m = self.manifest(run)
        self.assertEqual(m["state"], "finished")  # every case was taken; one failed
        self.assertIs(self.entries(run)["ngram-cpu"]["complete"], True)
        Path(self.log).unlink()
        p = self.resume(Path(run).name, "--no-report")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("ngram-cpu: failed, but it ran all its cases (1 failed): kept, not rerun", p.stdout)
        self.assertIn(f"nothing to resume in {Path(run).name}", p.stdout)
        self.assertEqual(self.calls(), [])
        self.assertEqual(self.manifest(run)["state"], "finished")

    def test_a_finished_entry_whose_results_were_damaged_is_rerun(self):
        """A finished run whose raw JSON was cut short (or removed) since has lost those results:
        --resume reruns the entries that wrote them, saying why, never "nothing to resume"."""
        self.make_fakes({"ngram-cpu": "ok"})
        p = self.run_all("--no-report")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        run = self.only_run()
        self.assertEqual(self.manifest(run)["state"], "finished")
        raw = Path(run, "raw", "ngram-cpu.json")
        whole = raw.read_bytes()
        raw.write_bytes(whole[: len(whole) // 2])
        Path(run, "raw", "bus-cpu.json").unlink()
        Path(self.log).unlink()
        p = self.resume(Path(run).name, "--no-report")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertNoTraceback(p)
        self.assertNotIn("nothing to resume", p.stdout)
        self.assertIn("ngram-cpu: rerun: it finished, but its results are not usable: raw/ngram-cpu.json",
                      p.stdout)
        self.assertIn("bus-cpu: rerun: it finished, but it wrote no results (raw/bus-cpu.json is missing)", p.stdout)
        self.assertEqual(sorted(c["name"] for c in self.calls()), ["hdb-bus-cpu", "hdb-ngram-cpu"])
        m = self.manifest(run)
        self.assertEqual(m["state"], "finished")
        e = {x["name"]: x for x in m["entries"]}
        self.assertEqual(e["ngram-cpu"]["status"], "ok")
        self.assertEqual(e["ngram-cpu"]["attempts"][0]["status"], "ok")
        # The damaged file is kept beside the rerun's whole one.
        self.assertEqual(Path(run, "raw", "ngram-cpu.json.interrupted-1").read_bytes(), whole[: len(whole) // 2])
        self.assertEqual(len(self.ids(str(raw))), 2)

    def test_a_run_json_of_an_earlier_driver_is_judged_by_its_files(self):
        """run.json without `complete` (written before this field existed): the raw JSON decides."""
        p = self.run_all("--no-report")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        run = self.only_run()
        m = self.manifest(run)
        for e in m["entries"]:
            e.pop("complete", None)
        m.pop("build", None)
        m["state"] = "finished"  # what the earlier driver wrote
        with Path(run, "run.json").open("w") as f:
            json.dump(m, f)
        self.make_fakes({"ngram-cpu": "ok"})
        Path(self.log).unlink()
        p = self.resume(Path(run).name, "--no-report")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual([c["name"] for c in self.calls()], ["hdb-ngram-cpu"])
        self.assertEqual(self.manifest(run)["state"], "finished")


class MixedBuildTest(FaultCase):
    """Each entry records what it ran; a resume with other binaries is refused, or recorded and flagged."""

    def interrupted_run(self):
        """A finished run made to look as if the driver had been killed while hdb-ngram-cpu ran."""
        p = self.run_all("--no-report")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        run = self.only_run()
        m = self.manifest(run)
        for e in m["entries"]:
            if e["name"] == "ngram-cpu":
                e["status"] = "running"
        m["state"] = "running"
        with Path(run, "run.json").open("w") as f:
            json.dump(m, f)
        Path(self.log).unlink()
        return run

    def sha256(self, path):
        with Path(path).open("rb") as f:
            return hashlib.sha256(f.read()).hexdigest()

    def assertUntouched(self, run, before):
        self.assertEqual(self.manifest(run), before)
        self.assertEqual(self.calls(), [])
        self.assertFalse([f for f in [p.name for p in Path(run, "raw").iterdir()] if "interrupted" in f])

    def test_every_entry_records_the_binary_it_ran(self):
        p = self.run_all("--no-report")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        run = self.only_run()
        m = self.manifest(run)
        for name in ("bus-cpu", "ngram-cpu"):
            exe = str(Path(self.build, "bin", f"hdb-{name}"))
            self.assertEqual(m["build"]["executables"][f"hdb-{name}"], self.sha256(exe))
            b = self.entries(run)[name]["binary"]
            self.assertEqual(b, {"path": exe, "build_dir": self.build, "sha256": self.sha256(exe)})
            self.assertNotIn("mixed_build", self.entries(run)[name])
        self.assertEqual(m["build"]["build_dir"], self.build)
        self.assertNotIn("mixed_builds", m)

    def test_resume_with_another_build_dir_is_refused(self):
        run = self.interrupted_run()
        other = str(Path(self.tmp, "build-2"))
        shutil.copytree(self.build, other)
        before = self.manifest(run)
        p = bounded_resume(self, run, "--build-dir", other)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertOneLineError(p, f"--build-dir {other} is not the run's build {self.build}")
        self.assertIn("--allow-mixed-builds", p.stderr)
        self.assertUntouched(run, before)

    def test_a_rebuilt_executable_is_refused(self):
        run = self.interrupted_run()
        exe = str(Path(self.build, "bin", "hdb-ngram-cpu"))
        was = self.sha256(exe)
        with Path(exe).open("a") as f:
            f.write("# rebuilt\n")
        before = self.manifest(run)
        p = bounded_resume(self, run)  # no --build-dir: the run's own build
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertOneLineError(p, f"hdb-ngram-cpu is sha256 {self.sha256(exe)[:12]} now, sha256 {was[:12]} when the "
                                   "run began")
        self.assertUntouched(run, before)

    def test_resume_without_build_dir_keeps_the_runs_build(self):
        run = self.interrupted_run()
        p = bounded_resume(self, run, "--no-report")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual([c["name"] for c in self.calls()], ["hdb-ngram-cpu"])
        self.assertEqual(self.entries(run)["ngram-cpu"]["binary"]["build_dir"], self.build)

    def test_allowed_mixed_builds_are_recorded_and_flagged(self):
        run = self.interrupted_run()
        other = self.make_fakes({"bus-cpu": "ok", "ngram-cpu": "ok"}, build="build-2")
        with Path(other, "bin", "hdb-ngram-cpu").open("a") as f:
            f.write("# another build\n")
        self.env.pop("HDB_NO_MATPLOTLIB", None)
        p = bounded_resume(self, run, "--build-dir", other, "--allow-mixed-builds", limit=180)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("run-all: warning: mixing builds", p.stdout)
        self.assertIn("this run mixes builds: ngram-cpu ran from build", p.stdout)
        m = self.manifest(run)
        self.assertEqual(m["build_dir"], self.build)  # the run's build stays the first one
        self.assertEqual(len(m["mixed_builds"]), 1)
        self.assertEqual(m["mixed_builds"][0]["build_dir"], other)
        e = self.entries(run)
        self.assertNotIn("mixed_build", e["bus-cpu"])
        self.assertEqual(e["bus-cpu"]["binary"]["build_dir"], self.build)
        self.assertEqual(e["ngram-cpu"]["binary"]["build_dir"], other)
        self.assertEqual(e["ngram-cpu"]["binary"]["sha256"], self.sha256(str(Path(other, "bin", "hdb-ngram-cpu"))))
        self.assertIn(f"ran from build {other}, not the run's build {self.build}", e["ngram-cpu"]["mixed_build"])
        # The report shows a warning on top naming the entry, and the builds.
        with Path(run, "report.md").open() as f:
            md = f.read()
        warning = next(ln for ln in md.splitlines() if ln.startswith("> **Warning:**"))
        self.assertIn("this run mixes builds: ngram-cpu ran binaries other than the run's build", warning)
        self.assertLess(md.index("> **Warning:**"), md.index("## "))  # above every section
        self.assertIn("## Builds", md)
        self.assertIn(other, md[md.index("## Builds"):])
        with Path(run, "report.html").open() as f:
            html = f.read()
        self.assertIn('<p class="warning"><strong>Warning:</strong> this run mixes builds: ngram-cpu', html)

    def test_allow_mixed_builds_is_for_resume_only(self):
        p = self.run_all("--allow-mixed-builds")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertOneLineError(p, "--allow-mixed-builds applies to --resume only")
        self.assertFalse(Path(self.out).is_dir() and [p.name for p in Path(self.out).iterdir()])


def bounded_resume(case, run, *extra, limit=60):
    """--resume without the --build-dir FaultCase.resume adds (the run's own build, or the one in extra)."""
    return bounded("run-all", "--resume", Path(run).name, "--out", case.out, "--no-setup", "--no-build",
                   *extra, env=case.env, limit=limit)


class ResumeTargetTest(FaultCase):
    """--resume of what is not a run: one line, exit 2, nothing made or touched."""

    def test_resume_of_what_is_not_a_run(self):
        Path(self.out).mkdir(parents=True)
        Path(self.out, "not-a-run").mkdir()
        afile = str(Path(self.tmp, "a-file"))
        with Path(afile).open("w") as f:
            f.write("x\n")
        cases = (("", "--resume names no run (an empty RUN_ID: an unset variable?)"),
                 (" ", "--resume names no run"),
                 ("20990101-000000-quick", f"--resume 20990101-000000-quick: no run named 20990101-000000-quick "
                                           f"under {self.out}, and no such directory"),
                 (str(Path(self.tmp, "nowhere")), "no such directory"),
                 ("not-a-run", "is not a run (it has no run.json): nothing to resume"),
                 (afile, f"{afile} is a file, not a run directory"))
        for target, text in cases:
            with self.subTest(resume=target):
                p = self.resume(target)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertOneLineError(p, text)
        self.assertEqual([p.name for p in Path(self.out).iterdir()], ["not-a-run"])  # no new run was started
        self.assertEqual([p.name for p in Path(self.out, "not-a-run").iterdir()], [])
        self.assertEqual(self.calls(), [])

    def test_resume_names_the_runs_there(self):
        p = self.run_all("--no-report")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        run = self.only_run()
        p = self.resume("nope")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertOneLineError(p, f"(runs there: {Path(run).name})")

    def test_resume_refuses_options_that_would_change_the_run(self):
        p = self.run_all("--no-report")
        run = self.only_run()
        before = read_json(str(Path(run, "run.json")))
        for extra, text in ((["--config", "quick"], f"--resume keeps the run's own configuration ({self.cfg}); "
                                                    "drop --config quick"),
                            (["--peers", "duckdb"], "--resume keeps the run's own configuration; drop --peers"),
                            (["--passes", "5"], "--resume keeps the run's own configuration; drop --passes"),
                            (["--sizes", "1M"], "--resume keeps the run's own configuration; drop --sizes")):
            with self.subTest(option=extra[0]):
                p = self.resume(Path(run).name, *extra)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertOneLineError(p, text)
        self.assertEqual(read_json(str(Path(run, "run.json"))), before)
        with Path(run, "run.lock").open() as f:
            self.assertEqual(f.read(), "")  # the lock taken to read run.json is let go
        # Its own configuration, named again, is no change.
        p = self.resume(Path(run).name, "--config", self.cfg, "--no-report")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)


class ResumeLimitTest(FaultCase):
    """Issue 50, item 4: a run stopped by a too short --timeout timed out again on every resume, and
    `--resume ... --timeout` was refused. A resume takes a new limit for what is left, and records it."""
    CONFIG = FaultCase.CONFIG.replace("timeout_s = 100", "timeout_s = 1")
    MODES = {"bus-cpu": "ok", "ngram-cpu": "slow"}

    def test_a_run_stopped_by_a_short_limit_is_finished_with_a_longer_one(self):
        p = self.run_all("--no-report")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        run = self.only_run()
        self.assertEqual(self.entries(run)["ngram-cpu"]["failure"], "timeout")
        self.assertIn("one timed out: the same limit would stop it again; give it longer with --timeout SECONDS",
                      p.stdout)
        p = self.resume(Path(run).name, "--no-report")  # the same limit: it times out again
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        p = bounded("report", run, env=self.env)
        with Path(run, "report.md").open() as f:
            self.assertIn("one timed out, and the same limit would stop it again: give it longer with --timeout",
                          f.read())
        self.assertEqual(self.manifest(run)["state"], "incomplete")
        self.assertNotIn("resume_changes", self.manifest(run))
        Path(self.log).unlink()
        p = self.resume(Path(run).name, "--no-report", "--timeout", "60")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("--timeout: the time limit of ngram-cpu is 60 s from now on", p.stdout)
        self.assertEqual([c["name"] for c in self.calls()], ["hdb-ngram-cpu"])  # bus-cpu finished: not rerun
        m = self.manifest(run)
        self.assertEqual(m["state"], "finished")
        e = self.entries(run)
        self.assertEqual(e["ngram-cpu"]["status"], "ok")
        self.assertEqual(e["ngram-cpu"]["timeout_s"], 60)
        self.assertEqual(e["bus-cpu"]["timeout_s"], 1)  # what finished keeps the limit it ran under
        self.assertEqual([a["timeout_s"] for a in e["ngram-cpu"]["attempts"]], [1, 1])
        self.assertEqual(len(m["resume_changes"]), 1)
        self.assertEqual(m["resume_changes"][0]["timeout_s"], {"ngram-cpu": [1, 60]})
        self.assertIn("at_utc", m["resume_changes"][0])
        # The report says the limit changed.
        p = bounded("report", run, env=self.env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with Path(run, "report.md").open() as f:
            self.assertIn("changed the rest of the run: the time limit of ngram-cpu (1 s -> 60 s) changed (--timeout)",
                          f.read())
        # A finished run: a new limit has nothing to change, and says so.
        p = self.resume(Path(run).name, "--no-report", "--timeout", "5")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("nothing changed", p.stdout)
        self.assertEqual(len(self.manifest(run)["resume_changes"]), 1)

    def test_a_bad_limit_on_resume_is_refused(self):
        p = self.run_all("--no-report")
        run = self.only_run()
        before = self.manifest(run)
        for value in ("nan", "0", "-5", "inf", "soon"):
            with self.subTest(timeout=value):
                p = self.resume(Path(run).name, "--timeout", value)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertOneLineError(p, "--timeout: must be a positive, finite number of seconds")
        self.assertEqual(self.manifest(run), before)


class ResumePeersTest(FaultCase):
    """Issue 50, item 4: an interrupted run whose remaining entries are peers could not be resumed
    ("nothing to run: none of duckdb (peer) is built"), and --no-peers was refused. A peer is no
    executable to build: the resume runs it (or skips it with its reason); --no-peers drops it, recorded."""
    CONFIG = """
description = "fault test, a peer"
benchmarks = ["bus", "ra"]
backends = ["cpu"]
peers = ["duckdb"]
timeout_s = 100
[harness]
sizes = "32K"
"""
    MODES = {"bus-cpu": "ok", "ra-cpu": "ok"}

    def interrupted_in_the_peer(self):
        """A run made to look as if the driver had been killed while the peer ran, its executables done."""
        m = None
        p = self.run_all("--no-report")
        self.assertIn(p.returncode, (0, 1), p.stdout + p.stderr)  # the peer fails here: no tools/hdb-export
        run = self.only_run()
        m = self.manifest(run)
        names = [e["name"] for e in m["entries"]]
        self.assertEqual(names, ["bus-cpu", "ra-cpu", "ra-duckdb"])
        for e in m["entries"]:
            if e["name"] == "ra-duckdb":
                for k in ("failure", "exit_code", "duration_s", "cases", "complete", "started_utc", "reason"):
                    e.pop(k, None)
                e["status"] = "pending"
        m.update(state="interrupted", interrupted={"signal": "SIGTERM", "at_utc": "x", "running": []})
        with Path(run, "run.json").open("w") as f:
            json.dump(m, f)
        Path(self.log).unlink()
        return run

    def test_a_run_left_with_a_peer_is_resumed(self):
        run = self.interrupted_in_the_peer()
        p = self.resume(Path(run).name, "--no-report")
        self.assertNotIn("nothing to run", p.stderr)
        self.assertIn(p.returncode, (0, 1), p.stdout + p.stderr)
        self.assertNoTraceback(p)
        self.assertEqual(self.calls(), [])  # no executable is rerun
        e = self.entries(run)["ra-duckdb"]
        self.assertNotEqual(e["status"], "pending")  # it ran (or was skipped with its reason)
        self.assertTrue(e.get("reason") or e["status"] == "ok", e)

    def test_no_peers_drops_the_peers_left_and_says_so(self):
        run = self.interrupted_in_the_peer()
        p = self.resume(Path(run).name, "--no-peers")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with Path(run, "report.md").open() as f:
            self.assertIn("the peers ra-duckdb were dropped (--no-peers): not run", f.read())
        self.assertIn("--no-peers: ra-duckdb dropped (recorded as skipped)", p.stdout)
        self.assertEqual(self.calls(), [])
        m = self.manifest(run)
        self.assertEqual(m["state"], "finished")
        self.assertEqual(m["resume_changes"][0]["peers_dropped"], ["ra-duckdb"])
        e = self.entries(run)["ra-duckdb"]
        self.assertEqual(e["status"], "skipped")
        self.assertIn("peer dropped by --resume --no-peers", e["reason"])
        self.assertEqual(self.entries(run)["ra-cpu"]["status"], "ok")  # executables are kept as they are

    def test_a_new_run_with_nothing_built_names_its_executables_only(self):
        """A new run whose executables are none built is refused, its peers notwithstanding (they would
        run without the build's export tools); the message names executables, never a peer."""
        for exe in ("hdb-bus-cpu", "hdb-ra-cpu"):
            Path(self.build, "bin", exe).unlink()
        p = self.run_all("--no-report")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertOneLineError(p, "nothing to run: none of hdb-bus-cpu, hdb-ra-cpu is built")
        self.assertNotIn("(peer)", p.stderr)
        self.assertFalse(Path(self.out).is_dir() and list(Path(self.out).iterdir()))

    def test_no_peers_with_unbuilt_executables_left_names_them_only(self):
        run = self.interrupted_in_the_peer()
        m = self.manifest(run)
        for e in m["entries"]:
            if e["name"] == "ra-cpu":
                e["status"] = "pending"
        with Path(run, "run.json").open("w") as f:
            json.dump(m, f)
        Path(self.build, "bin", "hdb-ra-cpu").unlink()
        p = self.resume(Path(run).name, "--no-report", "--no-peers", "--allow-mixed-builds")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertOneLineError(p, "nothing to run: none of hdb-ra-cpu is built")
        self.assertNotIn("(peer)", p.stderr)
        self.assertEqual(self.manifest(run), m)  # refused: nothing touched
