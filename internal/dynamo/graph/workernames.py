"""Which hash names a graph's worker DCDs: the graph reconciler's decision (rollout/workers.py,
`worker_generation`), read from the graph and what the cluster shows of it. Pure.

One function for every caller, so that what `dynamo-operator render` and the compat generator show
for a graph is what the reconciler would create for it: a new graph (no live workers, no rollout)
is named with the v2 hash unless its annotations record a v1 generation of this very spec.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dynamo_operator.internal.dynamo.common.inputs import ForeignObject, Graph, ServiceSpec
from dynamo_operator.internal.dynamo.rollout import workerhash
from dynamo_operator.internal.dynamo.rollout.workerhash_v2 import worker_hash_v2
from dynamo_operator.internal.dynamo.rollout.workers import (
    WorkerGeneration,
    worker_generation,
    worker_hashes_of,
)


def _services(graph: Graph) -> Mapping[str, ServiceSpec]:
    return graph["spec"].get("services") or {}


def graph_worker_generation(
    graph: Graph, *, v2: str, children: Sequence[ForeignObject] = (), rolling: bool = False
) -> WorkerGeneration:
    """The generation naming `graph`'s workers this round, given the spec's v2 hash (`v2`, which the
    reconciler caches), the graph's live children and whether its rollout status says one runs."""
    services = _services(graph)
    workers = frozenset(name for name, spec in services.items() if workerhash.is_worker(spec))
    return worker_generation(
        graph.get("metadata", {}).get("annotations") or {},
        v2=v2,
        live_hashes=worker_hashes_of(children, workers),
        rolling=rolling,
        v1_of_spec=lambda: workerhash.worker_hash(services),
    )


def first_worker_generation(graph: Graph, namespace: str) -> WorkerGeneration:
    """The generation the reconciler names `graph`'s workers with at its first look (no children,
    no rollout). Raises GenerationError when the graph cannot be generated."""
    return graph_worker_generation(graph, v2=worker_hash_v2(graph, namespace))
