"""hetdb-bench driver: runs the built executables, aggregates their JSON, writes reports and plots.

Modules: config (TOML run configurations), runner (scripts/run-all), results (reading the
hetdb-bench/2 JSON into flat rows keyed by result id; summary.csv from the executables' CSV files),
plausibility (which figure is checked against which physical ceiling of the run), plots, report
(scripts/report), compare (scripts/compare), targets, scaling. Only the Python
standard library and matplotlib are used; see docs/driver.md. The contract with the executables is
docs/results-schema.json (tests/check_results.py validates documents against it with jsonschema).
"""
