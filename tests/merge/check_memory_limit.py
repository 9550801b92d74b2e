#!/usr/bin/env python3
"""Checks a merge run under --memory-limit (tests/merge/CMakeLists.txt): every case at the large
size is skipped with a MemoryPlan reason that names the allocations it counted ("needs N of ...
memory (name size, name size, ...), more than the M it has"), and every case at the small size
ran and verified. Exit 77 (a skip) when the run wrote no document (no device)."""
import json
import os
import re
import sys


def main():
    path, large, small = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])  # sizes in bytes
    if not os.path.exists(path):
        print(f"{path}: no document (the run was skipped)")
        return 77
    with open(path) as f:
        results = json.load(f)["results"]
    reason_re = re.compile(r"^needs \d+ [KM]?i?B of [a-z ]*memory \((.+)\), more than the \d+ [KM]?i?B it has$")
    errors, skipped, ran = [], 0, 0
    for r in results:
        label, status, rid = r.get("size_bytes"), r.get("status"), r.get("id")
        if label == large:
            m = reason_re.match(r.get("reason") or "")
            # "name 8 MiB, other name, with a comma 5 MiB, ...": names (letters) each ending in an amount
            items = re.findall(r"[A-Za-z0-9_'][^()]*? \d+ (?:[KMG]iB|B)(?:, |$)", m.group(1)) if m else []
            if status != "skipped" or len(items) < 2 or "".join(items) != m.group(1):
                errors.append(f"{rid}: expected a skip naming its allocations, got {status}: {r.get('reason')!r}")
            skipped += 1
        elif label == small:
            if status != "ok" or not r.get("verification", {}).get("verified", False):
                errors.append(f"{rid}: expected ok and verified, got {status}: {r.get('reason')!r}")
            ran += 1
    if not skipped or not ran:
        errors.append(f"expected cases at {large} (skipped) and {small} (run), found {skipped} and {ran}")
    for e in errors:
        print(e)
    print(f"{skipped} skipped at {large}, {ran} run at {small}, {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
