#!/usr/bin/env bash
# `make test`: three pytest sessions, the first two side by side.
#   1. test/unit (CPU-bound, no cluster)            } at the same time: the multinode session mostly
#   2. the multinode session (own cluster + add-ons) } waits on its controllers, the unit tests on none
#   3. test/integration without the multinode tests (own cluster; timing-sensitive waits run alone)
# Every session runs even when an earlier one failed; the exit code is the first failure's, and a
# session that collected no test (pytest's 5) is a failure, never a silent pass.
# Usage: hack/run-tests.sh <venv> <multinode tests dir> [pytest args...]
set -uo pipefail
venv=$1 multinode=$2
shift 2
pytest=("$venv/bin/pytest")

multinode_log=$(mktemp -t dynamo-multinode-XXXXXX.log)
"${pytest[@]}" "$multinode" "$@" >"$multinode_log" 2>&1 &
multinode_pid=$!
# Ctrl-C or SIGTERM: stop the background session too (its cluster fixture tears itself down).
trap 'kill -TERM "$multinode_pid" 2>/dev/null; wait "$multinode_pid"; rm -f "$multinode_log"; exit 130' INT TERM

"${pytest[@]}" test/unit "$@"
unit_rc=$?
wait "$multinode_pid"
multinode_rc=$?
echo "=== multinode session ($multinode), run beside the unit tests: exit $multinode_rc ==="
cat "$multinode_log"
rm -f "$multinode_log"
trap - INT TERM

# Fault scenarios that wait minutes on purpose (marked `fault`) are `make faults`' part.
"${pytest[@]}" test/integration --ignore="$multinode" -m "not fault" "$@"
integration_rc=$?

rc=0
for pair in "unit:$unit_rc" "multinode:$multinode_rc" "integration:$integration_rc"; do
  name=${pair%%:*} code=${pair##*:}
  if [ "$code" -eq 5 ]; then
    echo "run-tests: the $name session collected no tests" >&2
    code=1
  fi
  if [ "$code" -ne 0 ]; then
    echo "run-tests: the $name session failed (exit $code)" >&2
    [ "$rc" -eq 0 ] && rc=$code
  fi
done
exit "$rc"
