#!/usr/bin/env bash
# `make test`: five pytest sessions in three lanes that run side by side, each integration session
# with its own local cluster and its own in-process session operator:
#   lane 1: test/unit (CPU-bound, no cluster), then the multinode session (cluster + add-ons), then the
#           suites listed in THIRD (the local control plane's own tests and the add-on examples)
#   lane 2: the integration suites not listed in SECOND or THIRD (a new directory lands here)
#   lane 3: the integration suites listed in SECOND
# Most of an integration test's time is spent waiting on controllers, so two clusters beside each
# other and beside the unit tests cost far less than the sum of their times. Splitting by directory
# keeps isolation as it was: a session's operator never sees another session's objects, and within a
# session every suite runs in the same order as in one `pytest test/integration` (tests that rely on
# the session operator being up already keep what they had). The halves were split by the
# per-test durations of a full run (`--durations`): SECOND holds the suites of many short tests and
# the private-cluster ones, the first half the long graph scenarios.
# With DYNAMO_TEST_USE_EXISTING_CLUSTER=1 there is one cluster, so the cluster sessions take turns.
# Every session runs even when another failed; the exit code is the first failure's, and a session
# that collected no test (pytest's 5) is a failure, never a silent pass.
# Fault scenarios that wait minutes on purpose (marked `fault`) are `make faults`' part.
# Usage: hack/run-tests.sh <venv> <multinode tests dir> [pytest args...]
set -uo pipefail
venv=$1 multinode=$2
shift 2
pytest=("$venv/bin/pytest")

SECOND=(
  test/integration/controllers_requests
  test/integration/controllers_side
  test/integration/runtime_cache
  test/integration/runtime_controller
)
# Lane 1 finishes its unit and multinode sessions minutes before the others: it takes these too.
THIRD=(
  test/integration/cluster
  test/integration/controllers_addons
)
ignore=(--ignore="$multinode")
for dir in "${SECOND[@]}" "${THIRD[@]}"; do ignore+=(--ignore="$dir"); done

logs=$(mktemp -d -t dynamo-run-tests-XXXXXX)
pids=()
# Ctrl-C or SIGTERM: stop every lane (each cluster fixture tears itself down on SIGTERM).
stop() {
  for pid in "${pids[@]}"; do pkill -TERM -P "$pid" 2>/dev/null; kill -TERM "$pid" 2>/dev/null; done
  wait
  rm -rf "$logs"
  exit 130
}
trap stop INT TERM

# session <name> <pytest args...>: one pytest session, its output in $logs/<name>.log and its exit
# code appended to $logs/codes as `<name> <code>`.
session() {
  local name=$1
  shift
  "${pytest[@]}" "$@" >"$logs/$name.log" 2>&1
  echo "$name $?" >>"$logs/codes"
}

if [ "${DYNAMO_TEST_USE_EXISTING_CLUSTER:-}" = 1 ]; then
  # One cluster for every session: two session operators on it would reconcile the same objects, so
  # the cluster sessions take turns (the unit tests need none).
  session unit test/unit "$@" &
  pids+=($!)
  session multinode "$multinode" "$@"
  session integration-1 test/integration --ignore="$multinode" -m "not fault" "$@"
  echo "integration-2 0" >>"$logs/codes"  # its suites ran in integration-1
  echo "integration-3 0" >>"$logs/codes"
else
  (
    session unit test/unit "$@"
    session multinode "$multinode" "$@"
    session integration-3 "${THIRD[@]}" -m "not fault" "$@"
  ) &
  pids+=($!)
  session integration-1 test/integration "${ignore[@]}" -m "not fault" "$@" &
  pids+=($!)
  session integration-2 "${SECOND[@]}" -m "not fault" "$@" &
  pids+=($!)
fi
wait "${pids[@]}"
trap - INT TERM

rc=0
for name in unit multinode integration-1 integration-2 integration-3; do
  echo "=== $name session ==="
  cat "$logs/$name.log" 2>/dev/null
done
for name in unit multinode integration-1 integration-2 integration-3; do
  code=$(awk -v n="$name" '$1 == n { print $2 }' "$logs/codes")
  code=${code:-1}  # a lane that died before it could record its code
  if [ "$code" -eq 5 ]; then
    echo "run-tests: the $name session collected no tests" >&2
    code=1
  fi
  if [ "$code" -ne 0 ]; then
    echo "run-tests: the $name session failed (exit $code)" >&2
    [ "$rc" -eq 0 ] && rc=$code
  fi
done
rm -rf "$logs"
exit "$rc"
