"""The report's view of the cold/warm/hot protocol and energy (hdb.passes): what it makes of results that
carry a protocol and energy, of results without a counter, and of results from before them."""
import unittest

import helpers  # noqa: F401  (puts scripts/ on sys.path)

from hdb import passes


def row(backend="cpu", cold=2e-3, median=1e-3, energy=None, **protocol):
    p = {"cold": {"total_s": cold, "kernel_s": cold} if cold else None, "cold_note": "x", "warmup_passes": 0,
         "timed_as": "hot"}
    p.update(protocol)
    return {"benchmark": "ra", "backend": backend, "status": "ok", "total_median_s": median, "protocol": p,
            "energy": energy}


class Passes(unittest.TestCase):
    def test_the_cold_pass_against_the_timed_median_and_compilation(self):
        header, table = passes.backend_table([row(cold=3e-3), row(cold=1e-3), row(compile_s=0.25, timed_as="warm")])
        self.assertEqual(len(table), 1)
        bench, backend, n, timed, ratio, compile_s, throttled, energy = table[0]
        self.assertEqual((bench, backend, n, timed), ("ra", "cpu", 3, "hot/warm"))
        self.assertEqual(ratio, "2.00x (max 3.0x)")
        self.assertEqual(compile_s, "0.25 s")
        self.assertEqual(throttled, "-")
        self.assertEqual(energy, "not recorded (results from before issue 29)")

    def test_energy_is_a_median_per_pass_or_the_reason(self):
        rapl = [row(energy={"source": "rapl", "joules_per_pass": j}) for j in (1.0, 2.0, 9.0)]
        self.assertEqual(passes.energy_text(rapl), "rapl: median 2 J per pass over 3 cases")
        none = [row(energy={"source": "none", "reason": "no powercap here"})]
        self.assertEqual(passes.energy_text(none), "none: no powercap here")
        self.assertEqual(passes.energy_sentence(rapl + [row("opencl", energy=none[0]["energy"])]),
                         "Energy per operation (one pass, read around the timed passes): cpu rapl: median 2 J per "
                         "pass over 3 cases; opencl none: no powercap here.")
        self.assertEqual(passes.energy_sentence([row()]), "")

    def test_no_cold_pass_and_results_without_a_protocol(self):
        _, table = passes.backend_table([row(cold=None), {"benchmark": "ra", "backend": "cpu", "status": "ok"}])
        self.assertEqual(table[0][2], 1)
        self.assertEqual(table[0][4], "no cold pass")

    def test_the_machine_state_per_host(self):
        docs = [{"context": {"host": "a", "machine": {"governor": "performance", "frequency_mhz": 2450,
                                                      "frequency_max_mhz": 3700, "smt_active": True, "numa_nodes": 2}}},
                {"context": {"host": "a", "machine": {}}},
                {"context": {"host": "vm", "machine": {"cpufreq": "not exposed", "smt_active": False}}},
                {"context": {"host": "old"}}]
        header, table = passes.machine_table(docs)
        self.assertEqual(table, [["a", "performance, 2450 MHz (max 3700)", "on", 2], ["vm", "not exposed", "off", "?"]])


if __name__ == "__main__":
    unittest.main()
