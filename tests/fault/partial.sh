#!/usr/bin/env bash
# Issue 15, item 4: a partial document says so (complete: false, incomplete_reason), a signal
# writes the results taken so far and exits non-zero, and a write error keeps the previous file,
# names it and exits non-zero.
# Usage: partial.sh CASE (env: HDB_BUS_CPU)
. "$(dirname "$0")/lib.sh"
need HDB_BUS_CPU
# Many cases of a fraction of a second each.
LONG=(--sizes 32K,64K,128K,256K,512K,1M,2M,4M,8M,16M --passes 3 --max-time 0.3 --target-noise 0)

# signal NAME NUMBER: the signal arrives after two results are on disk.
signal() {
  set -m  # job control: a background job keeps SIGINT (a shell without it ignores SIGINT for `&`)
  timeout -k 5 120 "$HDB_BUS_CPU" "${LONG[@]}" --json "$T/bus.json" --csv "$T/bus.csv" >"$T/out" 2>"$T/err" &
  local pid=$!
  set +m
  wait_results "$T/bus.json" 2 60
  local before
  before=$(results_in "$T/bus.json")
  doc "$T/bus.json" "d['complete'] is False and d['incomplete_reason'] == 'running'" "a document written while running is not marked running"
  # The executable itself, not the timeout wrapper.
  kill -"$1" "$(pgrep -P "$pid" || echo "$pid")"
  wait "$pid"
  RC=$?
  expect_rc $((128 + $2))
  expect_err "interrupted by signal $2"
  doc "$T/bus.json" "d['complete'] is False and d['incomplete_reason'] == 'interrupted by signal $2'"
  doc "$T/bus.json" "len(d['results']) >= $before" "results taken before the signal were lost"
  [ "$(($(grep -c . "$T/bus.csv") - 1))" -ge "$before" ] || fail "the CSV lost results"
  expect_no_temp_files "$T"
}
sigterm() { signal TERM 15; }
sigint() { signal INT 2; }
sighup() { signal HUP 1; }

complete_run() {
  run 60 "$HDB_BUS_CPU" --sizes 32K --passes 1 --max-time 0.01 --json "$T/bus.json" --quiet
  expect_rc 0
  doc "$T/bus.json" "d['complete'] is True and 'incomplete_reason' not in d"
}

# A write that fails (a file size limit stands in for a full disk): the previous file stays as it
# was, the message names the file, the exit code is 1, and no temporary file is left.
file_size_limit() {
  run 60 "$HDB_BUS_CPU" --sizes 32K,64K --passes 1 --max-time 0.01 --json "$T/bus.json" --quiet
  expect_rc 0
  cp "$T/bus.json" "$T/previous.json"
  run 60 bash -c 'ulimit -f 1 && exec "$@"' sh "$HDB_BUS_CPU" --sizes 32K,64K --passes 1 --max-time 0.01 \
    --json "$T/bus.json" --quiet
  expect_rc 1
  expect_err "cannot write results to '$T/bus.json': File too large (its previous contents are kept)"
  cmp -s "$T/bus.json" "$T/previous.json" || fail "the previous file was changed"
  expect_no_temp_files "$T"
}

# The same on a full file system: a tiny tmpfs in a mount namespace of its own (skipped where
# mounting is not allowed).
full_disk() {
  mkdir "$T/small"
  if ! unshare -m true 2>/dev/null; then
    unshare -rm true 2>/dev/null || skip "no mount namespace (unshare -m / -rm) here"
    UNSHARE=(unshare -rm)
  else
    UNSHARE=(unshare -m)
  fi
  run 120 "${UNSHARE[@]}" bash -c '
    set -e
    exe=$1 dir=$2
    mount -t tmpfs -o size=256k tmpfs "$dir/small"
    "$exe" --sizes 32K,64K --passes 1 --max-time 0.01 --json "$dir/small/bus.json" --quiet >/dev/null
    cp "$dir/small/bus.json" "$dir/previous.json"
    # Fill the file system up to the last block.
    dd if=/dev/zero of="$dir/small/filler" bs=4k 2>/dev/null || true
    set +e
    "$exe" --sizes 32K,64K --passes 1 --max-time 0.01 --json "$dir/small/bus.json" --quiet
    echo "rc=$?"
    cmp -s "$dir/small/bus.json" "$dir/previous.json" && echo "previous kept"
    find "$dir/small" -name "*.tmp" | sed "s/^/left: /"
  ' sh "$HDB_BUS_CPU" "$T"
  grep -q "mount: .*permission denied\|mount: .*not permitted" "$T/err" && skip "tmpfs cannot be mounted here"
  expect_out "rc=1"
  expect_out "previous kept"
  expect_err "cannot write results to '$T/small/bus.json': No space left on device (its previous contents are kept)"
  ! grep -q "^left: " "$T/out" || fail "temporary files left on the full file system"
}

"$1"
echo "ok: $1"
