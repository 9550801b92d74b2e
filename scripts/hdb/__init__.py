"""hetdb-bench driver: runs the built executables, aggregates their JSON, writes reports and plots.

Modules: config (TOML run configurations), runner (scripts/run-all), results (reading the
hetdb-bench/1 JSON into flat rows), plots, report (scripts/report), compare (scripts/compare).
Only the Python standard library and matplotlib are used; see docs/driver.md.
"""
