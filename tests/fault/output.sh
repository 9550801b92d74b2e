#!/usr/bin/env bash
# Issue 15, item 3: --json/--csv write through symbolic links to their target (replacing the
# target atomically when it is a regular file), into FIFOs and devices in place, and only a regular
# file is ever replaced. Never against a real device but /dev/stdout and /dev/null (read only to
# check that it is still a character device).
# Usage: output.sh CASE (env: HDB_BUS_CPU)
. "$(dirname "$0")/lib.sh"
need HDB_BUS_CPU
ARGS=(--sizes 32K,64K --passes 1 --max-passes 1 --warmup 0 --max-time 0.01 --quiet)

symlink() {
  mkdir "$T/real" "$T/links"
  echo '{"old": true}' >"$T/real/bus.json"
  ln -s ../real/bus.json "$T/links/bus.json"  # relative, as users make them
  ln -s "$T/real/bus.csv" "$T/links/bus.csv"  # dangling: the target is made
  run 60 "$HDB_BUS_CPU" "${ARGS[@]}" --json "$T/links/bus.json" --csv "$T/links/bus.csv"
  expect_rc 0
  [ -L "$T/links/bus.json" ] && [ -L "$T/links/bus.csv" ] || fail "a symbolic link was replaced"
  [ -f "$T/real/bus.json" ] && [ ! -L "$T/real/bus.json" ] || fail "the link's target is not a regular file"
  doc "$T/real/bus.json" "d['complete'] is True and len(d['results']) >= 2"
  head -n1 "$T/real/bus.csv" | grep -q '^id,benchmark,backend' || fail "the CSV did not reach the link's target"
  expect_no_temp_files "$T"
}

fifo() {
  mkfifo "$T/bus.json.fifo" "$T/bus.csv.fifo"
  cat "$T/bus.json.fifo" >"$T/got.json" &
  local reader=$!
  cat "$T/bus.csv.fifo" >"$T/got.csv" &
  local reader2=$!
  run 60 "$HDB_BUS_CPU" "${ARGS[@]}" --json "$T/bus.json.fifo" --csv "$T/bus.csv.fifo"
  expect_rc 0
  local i
  for ((i = 0; i < 100; ++i)); do
    kill -0 "$reader" 2>/dev/null || kill -0 "$reader2" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$reader" 2>/dev/null && fail "nothing was written into the JSON FIFO"
  kill -0 "$reader2" 2>/dev/null && fail "nothing was written into the CSV FIFO"
  [ -p "$T/bus.json.fifo" ] && [ -p "$T/bus.csv.fifo" ] || fail "a FIFO was replaced"
  # One document, the final one (a FIFO gets no per-case documents).
  doc "$T/got.json" "d['complete'] is True and len(d['results']) >= 2"
  [ "$(grep -c '^id,benchmark' "$T/got.csv")" = 1 ] || fail "the CSV FIFO got more than one header"
  expect_no_temp_files "$T"
}

stdout() {
  run 60 "$HDB_BUS_CPU" "${ARGS[@]}" --json /dev/stdout
  expect_rc 0
  "$PY" - "$T/out" <<'EOF' || fail "/dev/stdout did not carry one complete document"
import json, sys
text = open(sys.argv[1]).read()
d, end = json.JSONDecoder().raw_decode(text)
assert d["complete"] is True and len(d["results"]) >= 2, d.get("complete")
assert "{" not in text[end:], "more than one document"
EOF
  # Through a pipe as well.
  timeout 60 "$HDB_BUS_CPU" "${ARGS[@]}" --json /dev/stdout | "$PY" -c '
import json, sys
d, _ = json.JSONDecoder().raw_decode(sys.stdin.read())
sys.exit(0 if d["complete"] else 1)' || fail "--json /dev/stdout into a pipe"
}

devnull() {
  [ -c /dev/null ] || skip "/dev/null is not a character device here"
  run 60 "$HDB_BUS_CPU" "${ARGS[@]}" --json /dev/null --csv /dev/null
  expect_rc 0
  [ -c /dev/null ] || fail "/dev/null is no longer a character device"
  [ ! -e /dev/null.tmp ] && [ -z "$(find /dev -maxdepth 1 -name '.null.*' 2>/dev/null)" ] || fail "a temporary file was made in /dev"
}

"$1"
echo "ok: $1"
