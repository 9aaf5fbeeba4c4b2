"""Whether a graph's worker cliques carry the worker hash on the Grove pathway. Pure.

Grove rolls cliques in place, so the hash names no object here. It still tells worker generations
apart inside Dynamo: worker cliques and their Services are labelled `nvidia.com/dynamo-worker-hash`
and their main container gets `DYN_NAMESPACE_WORKER_SUFFIX`, so the frontend keeps the workers of
one spec apart from the next while Grove replaces them, as upstream 2a6da14c does. The hash is the
graph's v2 worker hash (rollout/workerhash_v2.py), and the graph records it in
`nvidia.com/current-worker-hash-v2`.

Adding the label and the env to a running set would restart every worker pod for bookkeeping
alone. So a PodCliqueSet made without them (by an older operator, or upstream before the hash) keeps
going without them until its workers change anyway, i.e. until the hash differs from the one the
graph records. A new set, and a set whose every worker clique is labelled already, gets them.
"""

from __future__ import annotations

from collections.abc import Collection

from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common.inputs import ForeignObject
from dynamo_operator.internal.dynamo.grove.live import pod_clique_set_view

NO_HASH = ""
"""The worker hash a set made without it keeps: no label, no env."""


def labelled_services(obj: ForeignObject) -> frozenset[str]:
    """The services (their `nvidia.com/dynamo-component` label) of which some clique of the
    PodCliqueSet `obj` carries a worker-hash label."""
    pcs = pod_clique_set_view(obj)
    cliques = ((pcs.get("spec") or {}).get("template") or {}).get("cliques") or ()
    out = set()
    for clique in cliques:
        if not clique:
            continue
        labels = clique.get("labels") or {}
        if labels.get(c.LABEL_WORKER_HASH) and labels.get(c.LABEL_COMPONENT):
            out.add(str(labels[c.LABEL_COMPONENT]))
    return frozenset(out)


def grove_worker_hash(
    desired: str,
    *,
    workers: Collection[str],
    live: ForeignObject | None,
    recorded: str | None,
) -> str:
    """The hash the worker cliques carry this round (`NO_HASH`: none).

    `desired`: the spec's v2 worker hash; `workers`: the graph's worker services; `live`: its
    PodCliqueSet as it runs (None: not made yet); `recorded`: the hash the graph records
    (`nvidia.com/current-worker-hash-v2`, None when absent)."""
    if not workers:
        return NO_HASH
    if live is None or set(workers) <= labelled_services(live):
        return desired
    # A set running without the hash: it gets one when the workers change anyway (a recorded hash
    # that differs); a graph that records none yet records this one and changes nothing.
    return desired if recorded and recorded != desired else NO_HASH
