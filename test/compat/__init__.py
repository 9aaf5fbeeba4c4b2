"""Differential comparison with upstream's Go operator, over its own examples (issues #17, #39).

Upstream's operator ran every example in three cluster shapes, twice: at df888f68 (April,
`../shared/upstream-examples/golden*/`) and at 2a6da14c (August, v1beta1 examples,
`../shared/upstream-examples-2a6da14c/golden*/`; where the two disagree 2a6da14c wins). Neither is
copied here. This package generates this operator's objects for the same input and settings,
offline, and diffs them field by field, per set:

  goldens.py       where the examples and goldens are (`$DYNAMO_UPSTREAM_EXAMPLES` overrides)
  generate.py      our side: admission → graph reconciler → component reconciler, as the controllers do
  normalise.py     what must be made equal first (the dump's removals, server defaults), each with why
  paths.py, diff.py    flattening to readable paths, pairing objects, the leaf-by-leaf diff
  expectations.py  allowed*.yaml (intended, with reasons) and known_gaps*.yaml (issue + cause), one
                   pair per set (`-2a6da14c` for the August set)
  run.py, __main__.py  the whole run; `make compat` prints it as a table

`test/unit/compat` fails on a difference on neither list and on a list entry matching nothing.
When generation changes: `make compat COMPAT_ARGS="--list unexpected"` shows what moved; close or
list it, and delete the entries of gaps you closed.
"""
