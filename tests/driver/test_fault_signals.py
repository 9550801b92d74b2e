"""Fault suite, driver signals (issue 15, item 2): the executables run in process groups of their own
and end with the driver on SIGTERM, SIGHUP and SIGINT, and also when the driver is killed with -9
(watcher process, PR_SET_PDEATHSIG); the run is marked interrupted with the signal; one driver per
run directory (run.lock), a stale lock taken over with a note; --resume continues where the run
stopped and never starts a second copy writing the same files. Every scenario runs in a temporary
directory with fake executables and is bounded by `timeout`."""
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from helpers import HERE, FaultCase, pid_gone, read_json, wait_for

from hdb import watchdog


class SignalTest(FaultCase):
    MODES = {"bus-cpu": "ok", "ngram-cpu": "hang"}

    def started(self, mode_name="hdb-ngram-cpu"):
        """Starts run-all; returns (process, run dir, driver pid, the hanging executable's pid) once
        the hanging executable has written its first case."""
        p = self.start_run_all()
        self.addCleanup(lambda: p.poll() is None and p.kill())
        run = wait_for(lambda: Path(self.out).is_dir() and any(Path(self.out).iterdir()) and self.only_run(), 20)
        self.assertTrue(run, "no run directory")
        raw = str(Path(run, "raw", "ngram-cpu.json"))
        call = wait_for(lambda: Path(raw).exists() and self.call_of(mode_name), 30)
        self.assertTrue(call, "the hanging executable did not start")
        lock = read_json(str(Path(run, "run.lock")))
        self.assertEqual(lock["host"], socket.gethostname())
        return p, run, lock["pid"], call["pid"]

    def finish_with_ok(self, run):
        """--resume with the hanging executable replaced by one that finishes."""
        self.make_fakes({"ngram-cpu": "ok"})
        Path(self.log).unlink()
        p = self.resume(Path(run).name)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual([c["name"] for c in self.calls() if "args" in c], ["hdb-ngram-cpu"])
        return p

    def test_sigterm_sighup_sigint_stop_the_executable_and_mark_the_run_interrupted(self):
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            with self.subTest(signal=sig.name):
                if Path(self.out).is_dir():
                    for d in [p.name for p in Path(self.out).iterdir()]:
                        Path(self.out, d).rename(str(Path(self.tmp, f"old-{sig.name}-{d}")))
                self.make_fakes(self.MODES)
                if Path(self.log).exists():
                    Path(self.log).unlink()
                p, run, driver, child = self.started()
                os.kill(driver, sig)
                out, err = p.communicate(timeout=30)
                self.assertEqual(p.returncode, 128 + sig, out + err)
                self.assertIn(f"interrupted by {sig.name}", err)
                self.assertIn(f"--resume {Path(run).name}", err)
                self.assertNotIn("Traceback", out + err)
                self.assertTrue(wait_for(lambda child=child: pid_gone(child), 10), "the executable outlived the driver")
                m = self.manifest(run)
                self.assertEqual(m["state"], "interrupted")
                self.assertEqual(m["interrupted"]["signal"], sig.name)
                self.assertEqual(m["interrupted"]["running"], ["ngram-cpu"])
                e = {x["name"]: x for x in m["entries"]}
                self.assertEqual(e["bus-cpu"]["status"], "ok")
                self.assertEqual(e["ngram-cpu"]["status"], "pending")
                self.assertIn(f"interrupted by {sig.name}", e["ngram-cpu"]["reason"])
                self.assertNotIn("pid", e["ngram-cpu"])
                # Nothing taken is lost: bus-cpu's results and the first case of the stopped executable.
                self.assertEqual(len(self.ids(str(Path(run, "raw", "bus-cpu.json")))), 2)
                first = self.ids(str(Path(run, "raw", "ngram-cpu.json")))
                self.assertEqual(len(first), 1)
                with Path(run, "run.lock").open() as f:
                    self.assertEqual(f.read(), "")  # released
                # --resume continues where it stopped: only the stopped executable runs again.
                self.finish_with_ok(run)
                m = self.manifest(run)
                self.assertEqual(m["state"], "finished")
                self.assertNotIn("interrupted", m)
                self.assertEqual([i["signal"] for i in m["interruptions"]], [sig.name])
                self.assertTrue(all(x["status"] == "ok" for x in m["entries"]))
                self.assertEqual(self.ids(str(Path(run, "raw", "ngram-cpu.json.interrupted-1"))), first)
                self.assertEqual(len(self.ids(str(Path(run, "raw", "ngram-cpu.json")))), 2)
                with Path(run, "report.md").open() as f:
                    self.assertIn("ngram-cpu.json.interrupted-1", f.read())

    def test_kill_9_of_the_driver_takes_its_executables_along(self):
        self.make_fakes({"ngram-cpu": "hang-tree"})
        p, run, driver, child = self.started()
        grandchild = wait_for(lambda: self.call_of("hdb-ngram-cpu", "child"), 10)
        self.assertTrue(grandchild, "the fake did not start its child")
        grandchild = grandchild["child"]
        t0 = time.monotonic()
        os.kill(driver, signal.SIGKILL)
        p.communicate(timeout=30)
        # The executable (PR_SET_PDEATHSIG and the watcher) and what it started (the watcher: its
        # whole process group) end within the grace period, not after their own 120 s.
        self.assertTrue(wait_for(lambda: pid_gone(child) and pid_gone(grandchild), 15),
                        "an executable outlived the driver killed with -9")
        self.assertLess(time.monotonic() - t0, 15)
        m = self.manifest(run)
        self.assertEqual(m["state"], "running")  # nobody could mark it
        self.assertEqual(self.entries(run)["ngram-cpu"]["pid"], child)
        first = self.ids(str(Path(run, "raw", "ngram-cpu.json")))
        # --resume takes the lock over (its holder is gone), reruns the one executable, keeps its partial file.
        res = self.finish_with_ok(run)
        self.assertIn(f"took over the stale lock of run-all pid {driver}", res.stdout)
        m = self.manifest(run)
        self.assertEqual(m["state"], "finished")
        self.assertIn("unknown", m["interruptions"][0]["signal"])
        self.assertEqual(m["interruptions"][0]["running"], ["ngram-cpu"])
        self.assertEqual(self.ids(str(Path(run, "raw", "ngram-cpu.json.interrupted-1"))), first)
        self.assertEqual(len(self.ids(str(Path(run, "raw", "ngram-cpu.json")))), 2)

    def test_a_second_driver_on_the_same_run_is_refused(self):
        p, run, driver, child = self.started()
        before = self.manifest(run)
        second = self.resume(Path(run).name)
        self.assertEqual(second.returncode, 2, second.stdout + second.stderr)
        self.assertIn(f"is in use by run-all pid {driver}", second.stderr)
        self.assertNotIn("Traceback", second.stdout + second.stderr)
        # The refused driver touched nothing: the first one still runs its executable, alone.
        self.assertFalse(pid_gone(child))
        self.assertEqual(self.manifest(run), before)
        self.assertEqual([c["name"] for c in self.calls() if "args" in c].count("hdb-ngram-cpu"), 1)
        self.assertFalse([f for f in [p.name for p in Path(run, "raw").iterdir()] if "interrupted" in f])
        os.kill(driver, signal.SIGTERM)
        p.communicate(timeout=30)
        self.assertEqual(p.returncode, 128 + signal.SIGTERM)
        self.assertTrue(wait_for(lambda child=child: pid_gone(child), 10))


class LockAndLeftoverTest(FaultCase):
    def finished_run(self):
        p = self.run_all("--no-report")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return self.only_run()

    def mark_running(self, run, name, **extra):
        m = self.manifest(run)
        for e in m["entries"]:
            if e["name"] == name:
                e["status"] = "running"
                e.update(extra)
        m["state"] = "running"
        with Path(run, "run.json").open("w") as f:
            json.dump(m, f)

    def test_a_stale_lock_is_taken_over_with_a_note(self):
        run = self.finished_run()
        dead = subprocess.Popen(["true"])
        dead.wait()
        with Path(run, "run.lock").open("w") as f:
            json.dump({"pid": dead.pid, "host": socket.gethostname(), "since": "2026-01-01T00:00:00Z",
                       "command": "scripts/run-all"}, f)
        self.mark_running(run, "ngram-cpu")
        Path(self.log).unlink()
        p = self.resume(run)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(f"took over the stale lock of run-all pid {dead.pid}", p.stdout)
        self.assertIn("that process is gone", p.stdout)
        self.assertEqual([c["name"] for c in self.calls()], ["hdb-ngram-cpu"])
        with Path(run, "run.lock").open() as f:
            self.assertEqual(f.read(), "")

    def test_resume_stops_an_executable_a_killed_driver_left_running(self):
        """The belt to the watcher's braces: run.json names the pid of the running executable; if it is
        still alive (its command line names this run's JSON file), --resume stops it before the rerun,
        so two copies never write the same files."""
        run = self.finished_run()
        raw = str(Path(run, "raw", "ngram-cpu.json"))
        leftover = subprocess.Popen([sys.executable, str(Path(HERE, "fake_bench.py")), "hang", "--json", raw],
                                    env=dict(os.environ, FAKE_LOG=self.log, FAKE_NAME="hdb-ngram-cpu"),
                                    start_new_session=True)
        self.addCleanup(lambda: leftover.poll() is None and leftover.kill())
        self.assertTrue(wait_for(lambda: self.call_of("hdb-ngram-cpu") and len(self.calls()) == 3, 10))
        self.mark_running(run, "ngram-cpu", pid=leftover.pid)
        Path(self.log).unlink()
        p = self.resume(run)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(f"still running (pid {leftover.pid}): stopping it", p.stdout)
        self.assertIsNotNone(leftover.poll(), "the leftover executable still runs")
        self.assertEqual([c["name"] for c in self.calls()], ["hdb-ngram-cpu"])
        self.assertEqual(len(self.ids(raw)), 2)
        self.assertTrue(Path(raw + ".interrupted-1").exists())

    def test_an_unrelated_process_with_the_recorded_pid_is_left_alone(self):
        run = self.finished_run()
        other = subprocess.Popen(["sleep", "30"], start_new_session=True)
        self.addCleanup(lambda: (other.kill(), other.wait()))
        self.mark_running(run, "ngram-cpu", pid=other.pid)
        p = self.resume(run)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIsNone(other.poll())


class ChildGuardTest(FaultCase):
    def test_pdeathsig_ends_a_child_whose_parent_is_killed(self):
        if not watchdog.pdeathsig_available():
            self.skipTest("PR_SET_PDEATHSIG is Linux only")
        pidfile = str(Path(self.tmp, "child.pid"))
        code = ("import os, subprocess, sys, time\n"
                "sys.path.insert(0, sys.argv[1])\n"
                "from hdb.watchdog import child_preexec\n"
                "c = subprocess.Popen(['sleep', '60'], start_new_session=True, preexec_fn=child_preexec(os.getpid()))\n"
                "open(sys.argv[2], 'w').write(str(c.pid))\n"
                "time.sleep(60)\n")
        parent = subprocess.Popen([sys.executable, "-c", code, str(Path(HERE).parent.parent / "scripts"), pidfile])
        self.addCleanup(lambda: parent.poll() is None and parent.kill())
        def child_pid():
            try:
                with Path(pidfile).open() as f:
                    return int(f.read())
            except (OSError, ValueError):
                return None
        child = wait_for(child_pid, 10)
        self.assertTrue(child)
        parent.kill()
        parent.wait()
        self.assertTrue(wait_for(lambda: pid_gone(child), 5), "the child outlived its parent")

    def test_the_watcher_stops_registered_groups_when_the_pipe_closes(self):
        w = watchdog.Watchdog()
        a = subprocess.Popen(["sleep", "60"], start_new_session=True)
        b = subprocess.Popen(["sleep", "60"], start_new_session=True)
        self.addCleanup(lambda: [(x.kill(), x.wait()) for x in (a, b)])
        w.watch(a.pid)
        w.watch(b.pid)
        w.unwatch(b.pid)
        w.close()  # as if the driver had died: the write end closes
        self.assertTrue(wait_for(lambda: a.poll() is not None, 10))
        self.assertEqual(a.returncode, -signal.SIGTERM)
        self.assertIsNone(b.poll())  # unregistered: not the watcher's
