#!/usr/bin/env bash
# After the strict editable install, swap the per-file link tree of api/, controllers/ and internal/
# for directory links, so modules added later are importable (and seen by mypy) without a reinstall.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tree=$(ls -d "$root"/build/__editable__.dynamo_operator-*/dynamo_operator 2>/dev/null | head -1)
[ -n "$tree" ] || exit 0
for d in api controllers internal; do
  rm -rf "${tree:?}/$d"
  ln -s "$root/$d" "$tree/$d"
done
