"""A SIMULATION of Grove's operator (v0.1.0-alpha.6) for tests, as kwok simulates kubelets.

No package registry serves Grove's operator, so the tests cannot fetch it. This stand-in plays the
part of it that this project depends on, against the real API server (Grove's real CRDs installed,
PodGang's a stand-in), through the project's own client:

- a PodCliqueSet becomes, per replica `r`, a PodCliqueScalingGroup `<pcs>-<r>-<group>` per scaling
  group (replicas set once, at creation: later it is scaled through its `scale` subresource), a
  PodClique `<pcs>-<r>-<clique>` per clique outside every group, and PodGangs `<pcs>-<r>` (plus
  `<group>-<k>` for a group's replicas past its minAvailable);
- a scaling group becomes, per replica `j`, PodCliques `<group>-<j>-<clique>`; replicas dropped are
  deleted with their cliques;
- a PodClique becomes `spec.replicas` pods (`generateName: <clique>-`, hostname `<clique>-<i>`,
  subdomain `<pcs>-<r>`, Grove's labels and GROVE_* env), each created with Grove's scheduling gate,
  which is lifted once its PodGang exists; a pod that fails is kept and counted, not replaced (as
  alpha.6 does); a pod deleted is replaced; surplus pods go;
- the status counts `internal/dynamo/grove/readiness.py` reads, computed as Grove computes them:
  PodClique replicas/readyReplicas/scheduledReplicas/scheduleGatedReplicas/updatedReplicas with
  PodCliqueScheduled and MinAvailableBreached, a scaling group's scheduled/available/updated
  replicas (a replica available once every member clique has its minimum ready), observedGeneration
  everywhere.

Not simulated: Grove's webhooks (the CRD schema still checks every object), startup ordering
(`startsAfter` and its init container), Grove's per-set ServiceAccount, Role, RoleBinding, token
Secret and headless Service, topology, HPA, the PodCliqueSet's own availableReplicas quirk, and
`updateProgress` (readiness then tells a scaling group's rollout by its counts alone). Like Grove,
a scaling-group replica counts as updated only once it is available, and scheduledReplicas is
written on every status, so the graph's capacity verdicts (grove/readiness.py) read the same here.
A pod whose template changed is replaced one at a time, only while every other pod is ready.

The real operator runs the same tests when GROVE_OPERATOR names a binary
(test/integration/controllers_multinode/conftest.py), so a drift between the two fails there.
Watches mark a namespace dirty and one worker brings that namespace to its desired state, so the
stand-in is level-based: a missed event is caught by the next one or the periodic resync.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import hashlib
import json
import logging
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import AlreadyExists, ApiError, NotFound, TransportError
from dynamo_operator.internal.client.resource import Resource

log = logging.getLogger("grove-standin")

Obj = dict[str, Any]
PCS, PCSG, PCLQ, POD = (
    kinds.POD_CLIQUE_SET,
    kinds.POD_CLIQUE_SCALING_GROUP,
    kinds.POD_CLIQUE,
    kinds.POD,
)
PODGANG = Resource("scheduler.grove.io", "v1alpha1", "podgangs", "PodGang")
FIELD_MANAGER = "grove-standin"

# Grove's labels (operator/api/common/labels.go at v0.1.0-alpha.6).
MANAGED_BY, MANAGED_BY_GROVE = "app.kubernetes.io/managed-by", "grove-operator"
PART_OF = "app.kubernetes.io/part-of"
APP_NAME = "app.kubernetes.io/name"
COMPONENT = "app.kubernetes.io/component"
CLIQUE_LABEL = "grove.io/podclique"
GANG_LABEL = "grove.io/podgang"
BASE_GANG_LABEL = "grove.io/base-podgang"
SET_INDEX_LABEL = "grove.io/podcliqueset-replica-index"
GROUP_LABEL = "grove.io/podcliquescalinggroup"
GROUP_INDEX_LABEL = "grove.io/podcliquescalinggroup-replica-index"
HASH_LABEL = "grove.io/pod-template-hash"
SCHEDULING_GATE = "grove.io/podgang-pending-creation"
MANAGED_SELECTOR = f"{MANAGED_BY}={MANAGED_BY_GROVE}"

RESYNC_SECONDS = 2.0  # every namespace with a PodCliqueSet is looked at again this often
RETRY_SECONDS = 0.5  # after a failed write (a conflict, a cache behind): the next look retries
WATCH_SECONDS = 60
PASS_PAUSE_SECONDS = 0.05  # between two passes: at most 20 a second, whatever the events


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _meta(obj: Mapping[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = obj.get("metadata") or {}
    return meta


def _live(objs: Iterable[Obj]) -> list[Obj]:
    return [o for o in objs if not _meta(o).get("deletionTimestamp")]


def _owned_by(obj: Obj, owner: Obj) -> bool:
    uid = _meta(owner).get("uid")
    return any(r.get("uid") == uid and r.get("controller") for r in _meta(obj).get("ownerReferences") or ())


def _owner_ref(owner: Obj) -> dict[str, Any]:
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": _meta(owner)["name"],
        "uid": _meta(owner)["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _condition(obj: Obj, kind: str) -> dict[str, Any]:
    for cond in (obj.get("status") or {}).get("conditions") or ():
        if cond.get("type") == kind:
            return dict(cond)
    return {}


def _pod_condition(pod: Obj, kind: str) -> bool:
    return _condition(pod, kind).get("status") == "True"


def template_hash(clique_template: Mapping[str, Any], priority_class: str | None) -> str:
    """A hash of what makes a clique's pods (its pod spec, labels and annotations): pods whose hash
    label differs from their clique's are out of date. Grove hashes the same inputs its own way."""
    spec = clique_template.get("spec") or {}
    inputs = {
        "podSpec": spec.get("podSpec") or {},
        "labels": clique_template.get("labels") or {},
        "annotations": clique_template.get("annotations") or {},
        "priorityClassName": priority_class or "",
    }
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:10]


def _with_condition(existing: Obj, kind: str, status: str, reason: str, message: str) -> dict[str, Any]:
    """The condition, keeping its lastTransitionTime while its status stays."""
    old = _condition(existing, kind)
    changed = old.get("status") != status
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": _now() if changed or not old else old["lastTransitionTime"],
    }


def _clique_min_available(clique: Obj) -> int:
    spec = clique.get("spec") or {}
    value = spec.get("minAvailable")
    return int(value) if isinstance(value, int) else int(spec.get("replicas") or 0)


class GroveStandIn:
    """Run as `async with GroveStandIn(api):` (or start()/stop()). `errors` keeps the last failed
    writes, for a timed-out test's message."""

    def __init__(self, api: Client, *, resync: float = RESYNC_SECONDS) -> None:
        self.api = api
        self.resync = resync
        self.errors: list[str] = []
        self._dirty: set[str] = set()
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    async def __aenter__(self) -> GroveStandIn:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def start(self) -> None:
        watched = [(PCS, None), (PCSG, None), (PCLQ, None), (POD, MANAGED_SELECTOR)]
        self._tasks = [asyncio.create_task(self._watch(r, s)) for r, s in watched]
        self._tasks += [asyncio.create_task(self._resync()), asyncio.create_task(self._work())]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []

    def _mark(self, namespace: str | None) -> None:
        if namespace:
            self._dirty.add(namespace)
            self._wake.set()

    def _failed(self, namespace: str, error: Exception) -> None:
        self.errors = [*self.errors[-19:], f"{namespace}: {type(error).__name__}: {error}"]
        log.info("grove stand-in: %s: %s", namespace, error)
        asyncio.get_running_loop().call_later(RETRY_SECONDS, self._mark, namespace)

    # -- event sources

    async def _watch(self, resource: Resource, selector: str | None) -> None:
        while True:
            try:
                page = await self.api.list_page(resource, label_selector=selector, limit=1)
                rv = page.resource_version
                async with self.api.watch(
                    resource, resource_version=rv, label_selector=selector, timeout_seconds=WATCH_SECONDS
                ) as events:
                    async for event in events:
                        if event.type == "ERROR":
                            break
                        if event.type != "BOOKMARK":
                            self._mark(_meta(event.object).get("namespace"))
            except (ApiError, TransportError) as e:
                log.info("grove stand-in: watch of %s: %s", resource.plural, e)
                await asyncio.sleep(RETRY_SECONDS)

    async def _resync(self) -> None:
        while True:
            with contextlib.suppress(ApiError, TransportError):
                for pcs in await self.api.list(PCS):
                    self._mark(_meta(pcs).get("namespace"))
            await asyncio.sleep(self.resync)

    async def _work(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._dirty:
                namespace = self._dirty.pop()
                try:
                    if await self.sync_namespace(namespace):
                        self._mark(namespace)  # wrote something: look again at what it led to
                except (ApiError, TransportError) as e:
                    self._failed(namespace, e)
                await asyncio.sleep(PASS_PAUSE_SECONDS)

    # -- one namespace, level-based

    async def sync_namespace(self, ns: str) -> bool:
        """Bring `ns` one step towards what Grove would make of its PodCliqueSets; True when
        something was written."""
        sets = _live(await self.api.list(PCS, namespace=ns))
        if not sets:
            return False
        groups = await self.api.list(PCSG, namespace=ns)
        cliques = await self.api.list(PCLQ, namespace=ns)
        pods = await self.api.list(POD, namespace=ns, label_selector=MANAGED_SELECTOR)
        gang_objs = {_meta(g)["name"]: g for g in await self.api.list(PODGANG, namespace=ns)}
        gangs = set(gang_objs)
        wrote = False
        for pcs in sets:
            wrote |= await self._sync_set(pcs, groups, cliques, gangs)
        by_name = {_meta(p)["name"]: p for p in sets}
        for group in _live(groups):
            owner = by_name.get(_meta(group).get("labels", {}).get(PART_OF, ""))
            if owner is not None and _owned_by(group, owner):
                wrote |= await self._sync_group(owner, group, cliques, gang_objs, gangs)
        for clique in _live(cliques):
            owner = by_name.get(_meta(clique).get("labels", {}).get(PART_OF, ""))
            if owner is not None:
                mine = [p for p in pods if _owned_by(p, clique)]
                wrote |= await self._sync_pods(owner, clique, mine, gangs)
        if wrote:
            return True  # statuses once the objects settle
        for clique in _live(cliques):
            if _meta(clique).get("labels", {}).get(PART_OF) in by_name:
                wrote |= await self._clique_status(clique, [p for p in pods if _owned_by(p, clique)])
        for group in _live(groups):
            if _meta(group).get("labels", {}).get(PART_OF) in by_name:
                wrote |= await self._group_status(group, cliques)
        for pcs in sets:
            wrote |= await self._set_status(pcs, groups, cliques)
        return wrote

    # -- PodCliqueSet -> scaling groups, cliques, PodGangs

    async def _sync_set(self, pcs: Obj, groups: list[Obj], cliques: list[Obj], gangs: set[str]) -> bool:
        name, ns = _meta(pcs)["name"], _meta(pcs)["namespace"]
        template = pcs["spec"]["template"]
        templates = {c["name"]: c for c in template.get("cliques") or ()}
        group_configs = template.get("podCliqueScalingGroups") or []
        in_groups = {n for g in group_configs for n in g.get("cliqueNames") or ()}
        existing_groups = {_meta(g)["name"]: g for g in groups}
        existing_cliques = {_meta(c)["name"]: c for c in cliques}
        wrote = False
        for r in range(int(pcs["spec"].get("replicas") or 0)):
            base_gang = f"{name}-{r}"
            set_labels = {
                MANAGED_BY: MANAGED_BY_GROVE,
                PART_OF: name,
                SET_INDEX_LABEL: str(r),
            }
            for config in group_configs:
                group_name = f"{name}-{r}-{config['name']}"
                if group_name not in existing_groups:
                    group = {
                        "apiVersion": "grove.io/v1alpha1",
                        "kind": "PodCliqueScalingGroup",
                        "metadata": {
                            "name": group_name,
                            "namespace": ns,
                            "labels": {**set_labels, COMPONENT: "pcs-podcliquescalinggroup"},
                            "ownerReferences": [_owner_ref(pcs)],
                        },
                        "spec": {
                            "replicas": int(config.get("replicas") or 1),
                            "minAvailable": int(config.get("minAvailable") or 1),
                            "cliqueNames": list(config.get("cliqueNames") or ()),
                        },
                    }
                    wrote |= await self._create(PCSG, group)
            for clique_name, clique_template in templates.items():
                if clique_name in in_groups:
                    continue
                labels = {
                    **(clique_template.get("labels") or {}),
                    **set_labels,
                    APP_NAME: f"{name}-{r}-{clique_name}",
                    COMPONENT: "pcs-podclique",
                    GANG_LABEL: base_gang,
                    HASH_LABEL: template_hash(clique_template, template.get("priorityClassName")),
                }
                wrote |= await self._ensure_clique(
                    pcs, f"{name}-{r}-{clique_name}", clique_template, labels, existing_cliques, pcs
                )
            wrote |= await self._ensure_gang(pcs, base_gang, {**set_labels}, gangs)
        return wrote

    async def _ensure_clique(  # noqa: PLR0917 - each argument a different part of the clique
        self,
        pcs: Obj,
        name: str,
        clique_template: Mapping[str, Any],
        labels: dict[str, str],
        existing: Mapping[str, Obj],
        owner: Obj,
        extra_env: list[dict[str, Any]] | None = None,
    ) -> bool:
        """Create the PodClique, or bring an existing one's spec (all but replicas, which scaling
        owns once it exists) and labels to the template's."""
        spec = copy.deepcopy(dict(clique_template.get("spec") or {}))
        spec.pop("startsAfter", None)
        if extra_env:
            for container in (spec.get("podSpec") or {}).get("containers") or ():
                container["env"] = [*(container.get("env") or []), *extra_env]
        annotations = dict(clique_template.get("annotations") or {})
        current = existing.get(name)
        if current is None:
            clique = {
                "apiVersion": "grove.io/v1alpha1",
                "kind": "PodClique",
                "metadata": {
                    "name": name,
                    "namespace": _meta(pcs)["namespace"],
                    "labels": labels,
                    "annotations": annotations,
                    "ownerReferences": [_owner_ref(owner)],
                },
                "spec": spec,
            }
            return await self._create(PCLQ, clique)
        if _meta(current).get("deletionTimestamp"):
            return False
        spec["replicas"] = current["spec"].get("replicas", spec.get("replicas"))
        # The API server adds the schema's defaults to what it stores: compare what we would write.
        if _covers(current["spec"], spec) and (_meta(current).get("labels") or {}) == labels:
            return False
        updated = copy.deepcopy(current)
        updated["spec"] = spec
        updated["metadata"]["labels"] = labels
        updated["metadata"]["annotations"] = annotations
        await self.api.replace(PCLQ, updated, field_manager=FIELD_MANAGER)
        return True

    async def _ensure_gang(self, pcs: Obj, name: str, labels: dict[str, str], gangs: set[str]) -> bool:
        if name in gangs:
            return False
        gang = {
            "apiVersion": "scheduler.grove.io/v1alpha1",
            "kind": "PodGang",
            "metadata": {
                "name": name,
                "namespace": _meta(pcs)["namespace"],
                "labels": {**labels, COMPONENT: "podgang"},
                "ownerReferences": [_owner_ref(pcs)],
            },
            "spec": {"podgroups": []},
        }
        gangs.add(name)
        return await self._create(PODGANG, gang)

    # -- scaling group -> member cliques (and scaled PodGangs)

    async def _sync_group(
        self, pcs: Obj, group: Obj, cliques: list[Obj], gang_objs: Mapping[str, Obj], gangs: set[str]
    ) -> bool:
        template = pcs["spec"]["template"]
        templates = {c["name"]: c for c in template.get("cliques") or ()}
        name = _meta(group)["name"]
        labels = _meta(group).get("labels") or {}
        set_index = labels.get(SET_INDEX_LABEL, "0")
        base_gang = f"{_meta(pcs)['name']}-{set_index}"
        replicas = int(group["spec"].get("replicas") or 0)
        min_available = int(group["spec"].get("minAvailable") or 1)
        names = list(group["spec"].get("cliqueNames") or ())
        members = [c for c in cliques if _owned_by(c, group)]
        existing = {_meta(c)["name"]: c for c in members}
        wrote = False
        for j in range(replicas):
            gang = base_gang if j < min_available else f"{name}-{j - min_available}"
            set_labels = {
                MANAGED_BY: MANAGED_BY_GROVE,
                PART_OF: _meta(pcs)["name"],
                SET_INDEX_LABEL: set_index,
            }
            if gang != base_gang:
                wrote |= await self._ensure_gang(pcs, gang, {**set_labels, BASE_GANG_LABEL: base_gang}, gangs)
            num_pods = sum(int((templates.get(n) or {}).get("spec", {}).get("replicas") or 0) for n in names)
            env = [
                _label_env("GROVE_PCSG_NAME", GROUP_LABEL),
                {"name": "GROVE_PCSG_TEMPLATE_NUM_PODS", "value": str(num_pods)},
                _label_env("GROVE_PCSG_INDEX", GROUP_INDEX_LABEL),
            ]
            for clique_name in names:
                clique_template = templates.get(clique_name)
                if clique_template is None:
                    continue
                member = f"{name}-{j}-{clique_name}"
                member_labels = {
                    **(clique_template.get("labels") or {}),
                    **set_labels,
                    APP_NAME: member,
                    COMPONENT: "pcsg-podclique",
                    GROUP_LABEL: name,
                    GROUP_INDEX_LABEL: str(j),
                    GANG_LABEL: gang,
                    HASH_LABEL: template_hash(clique_template, template.get("priorityClassName")),
                }
                if gang != base_gang:
                    member_labels[BASE_GANG_LABEL] = base_gang
                wrote |= await self._ensure_clique(
                    pcs, member, clique_template, member_labels, existing, group, env
                )
        for old in _live(members):
            index = (_meta(old).get("labels") or {}).get(GROUP_INDEX_LABEL, "")
            if index.isdigit() and int(index) >= replicas:
                wrote |= await self._delete(PCLQ, old)
        # Scaled PodGangs `<group>-<k>` of replicas scaled away.
        for gang_name, gang_obj in gang_objs.items():
            suffix = gang_name.removeprefix(f"{name}-")
            if suffix != gang_name and suffix.isdigit() and int(suffix) >= replicas - min_available:
                wrote |= await self._delete(PODGANG, gang_obj)
        return wrote

    # -- clique -> pods

    async def _sync_pods(self, pcs: Obj, clique: Obj, pods: list[Obj], gangs: set[str]) -> bool:
        ns = _meta(clique)["namespace"]
        labels = _meta(clique).get("labels") or {}
        active = _live(pods)
        want = int(clique["spec"].get("replicas") or 0)
        wrote = False
        # Replaced only when deleted: a Failed pod is still one of the clique's (alpha.6).
        if len(active) < want:
            used = {_pod_index(p) for p in active}
            free = (i for i in range(want + len(active)) if i not in used)
            for index in [next(free) for _ in range(want - len(active))]:
                await self.api.create(POD, self._pod(pcs, clique, index))
                wrote = True
        elif len(active) > want:
            surplus = sorted(active, key=lambda p: (_pod_condition(p, "Ready"), _pod_index(p)))
            for pod in surplus[: len(active) - want]:
                wrote |= await self._delete(POD, pod)
        stale = [
            p for p in active if (_meta(p).get("labels") or {}).get(HASH_LABEL) != labels.get(HASH_LABEL)
        ]
        if stale and not wrote and all(_pod_condition(p, "Ready") for p in active):
            # One pod of an old template at a time, once every pod is ready.
            wrote |= await self._delete(POD, stale[0])
        if labels.get(GANG_LABEL) in gangs:
            for pod in active:
                gates = pod["spec"].get("schedulingGates") or []
                if any(g.get("name") == SCHEDULING_GATE for g in gates):
                    kept = [g for g in gates if g.get("name") != SCHEDULING_GATE]
                    await self.api.patch(
                        POD,
                        _meta(pod)["name"],
                        {"spec": {"schedulingGates": kept or None}},
                        namespace=ns,
                        field_manager=FIELD_MANAGER,
                    )
                    wrote = True
        return wrote

    def _pod(self, pcs: Obj, clique: Obj, index: int) -> Obj:
        meta = _meta(clique)
        labels = meta.get("labels") or {}
        pcs_name, set_index = _meta(pcs)["name"], labels.get(SET_INDEX_LABEL, "0")
        spec = copy.deepcopy(clique["spec"].get("podSpec") or {})
        env = [
            {"name": "GROVE_PCS_NAME", "value": pcs_name},
            {"name": "GROVE_PCS_INDEX", "value": set_index},
            {"name": "GROVE_PCLQ_NAME", "value": meta["name"]},
            {
                "name": "GROVE_HEADLESS_SERVICE",
                "value": f"{pcs_name}-{set_index}.{meta['namespace']}.svc.cluster.local",
            },
            {"name": "GROVE_PCLQ_POD_INDEX", "value": str(index)},
        ]
        for container in [*(spec.get("containers") or ()), *(spec.get("initContainers") or ())]:
            container["env"] = [*(container.get("env") or []), *env]
        spec["schedulingGates"] = [{"name": SCHEDULING_GATE}]
        spec["hostname"] = f"{meta['name']}-{index}"
        spec["subdomain"] = f"{pcs_name}-{set_index}"
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "generateName": f"{meta['name']}-",
                "namespace": meta["namespace"],
                "labels": {
                    **labels,
                    MANAGED_BY: MANAGED_BY_GROVE,
                    PART_OF: pcs_name,
                    CLIQUE_LABEL: meta["name"],
                    SET_INDEX_LABEL: set_index,
                    GANG_LABEL: labels.get(GANG_LABEL, f"{pcs_name}-{set_index}"),
                },
                "annotations": dict(meta.get("annotations") or {}),
                "ownerReferences": [_owner_ref(clique)],
            },
            "spec": spec,
        }

    # -- statuses, as Grove counts them

    async def _clique_status(self, clique: Obj, pods: list[Obj]) -> bool:
        active = _live(pods)
        want_hash = (_meta(clique).get("labels") or {}).get(HASH_LABEL)
        ready = sum(_pod_condition(p, "Ready") for p in active)
        scheduled = sum(_pod_condition(p, "PodScheduled") for p in active)
        gated = sum(bool(p["spec"].get("schedulingGates")) for p in active)
        # Scheduled pods that started and are not ready, or whose containers failed: MinAvailable
        # counts them out (Grove's PodStartedButNotReady and non-zero-exit categories).
        broken = sum(
            _pod_condition(p, "PodScheduled")
            and not _pod_condition(p, "Ready")
            and (p.get("status") or {}).get("phase") in ("Running", "Failed")
            for p in active
        )
        minimum = _clique_min_available(clique)
        if scheduled < minimum:
            scheduled_cond = ("False", "InsufficientScheduledPods", "Insufficient scheduled pods")
            breached = ("False", "InsufficientScheduledPods", "Insufficient scheduled pods")
        else:
            scheduled_cond = ("True", "SufficientScheduledPods", "Sufficient scheduled pods found")
            if scheduled - broken < minimum:
                breached = ("True", "InsufficientReadyPods", "Insufficient ready or starting pods")
            else:
                breached = ("False", "SufficientReadyPods", "Either sufficient ready or starting pods found")
        status = {
            "observedGeneration": _meta(clique).get("generation"),
            "replicas": len(active),
            "readyReplicas": ready,
            "scheduledReplicas": scheduled,
            "scheduleGatedReplicas": gated,
            "updatedReplicas": sum(
                (_meta(p).get("labels") or {}).get(HASH_LABEL) == want_hash for p in active
            ),
            "currentPodTemplateHash": want_hash,
            "conditions": [
                _with_condition(clique, "PodCliqueScheduled", *scheduled_cond),
                _with_condition(clique, "MinAvailableBreached", *breached),
            ],
        }
        return await self._write_status(PCLQ, clique, status)

    async def _group_status(self, group: Obj, cliques: list[Obj]) -> bool:
        names = list(group["spec"].get("cliqueNames") or ())
        per_replica: dict[str, list[Obj]] = {}
        for clique in _live(c for c in cliques if _owned_by(c, group)):
            per_replica.setdefault((_meta(clique).get("labels") or {}).get(GROUP_INDEX_LABEL, ""), []).append(
                clique
            )
        scheduled = available = updated = breached = 0
        for members in per_replica.values():
            if len(members) != len(names):
                continue
            if not all(_condition(c, "PodCliqueScheduled").get("status") == "True" for c in members):
                continue
            scheduled += 1
            breached += any(_condition(c, "MinAvailableBreached").get("status") == "True" for c in members)
            if all(
                int((c.get("status") or {}).get("readyReplicas") or 0) >= _clique_min_available(c)
                for c in members
            ):
                available += 1
                up_to_date = all(
                    (c.get("status") or {}).get("updatedReplicas") == c["spec"].get("replicas")
                    and (c.get("status") or {}).get("currentPodTemplateHash")
                    == (_meta(c).get("labels") or {}).get(HASH_LABEL)
                    for c in members
                )
                updated += up_to_date
        minimum = int(group["spec"].get("minAvailable") or 1)
        if scheduled < minimum:
            cond = (
                "False",
                "InsufficientScheduledPodCliqueScalingGroupReplicas",
                "Insufficient scheduled replicas",
            )
        elif scheduled - breached < minimum:
            cond = (
                "True",
                "InsufficientAvailablePodCliqueScalingGroupReplicas",
                "Insufficient ready replicas",
            )
        else:
            cond = ("False", "SufficientAvailablePodCliqueScalingGroupReplicas", "Sufficient ready replicas")
        status = {
            "observedGeneration": _meta(group).get("generation"),
            "replicas": int(group["spec"].get("replicas") or 0),
            "scheduledReplicas": scheduled,
            "availableReplicas": available,
            "updatedReplicas": updated,
            "conditions": [_with_condition(group, "MinAvailableBreached", *cond)],
        }
        return await self._write_status(PCSG, group, status)

    async def _set_status(self, pcs: Obj, groups: list[Obj], cliques: list[Obj]) -> bool:
        replicas = int(pcs["spec"].get("replicas") or 0)
        mine_groups = _live(g for g in groups if _owned_by(g, pcs))
        mine_cliques = _live(c for c in cliques if _owned_by(c, pcs))
        available = 0
        for r in range(replicas):
            index = str(r)
            of_replica = [
                o
                for o in [*mine_groups, *mine_cliques]
                if (_meta(o).get("labels") or {}).get(SET_INDEX_LABEL) == index
            ]
            if of_replica and all(_available(o) for o in of_replica):
                available += 1
        status = {
            "observedGeneration": _meta(pcs).get("generation"),
            "replicas": replicas,
            "availableReplicas": available,
            "updatedReplicas": available,
        }
        return await self._write_status(PCS, pcs, status)

    # -- writes

    async def _write_status(self, resource: Resource, obj: Obj, status: dict[str, Any]) -> bool:
        current = obj.get("status") or {}
        if all(current.get(k) == v for k, v in status.items()):
            return False
        await self.api.patch(
            resource,
            _meta(obj)["name"],
            {"status": status},
            namespace=_meta(obj)["namespace"],
            subresource="status",
            field_manager=FIELD_MANAGER,
        )
        return True

    async def _create(self, resource: Resource, obj: Obj) -> bool:
        try:
            await self.api.create(resource, obj)
        except AlreadyExists:
            return False
        return True

    async def _delete(self, resource: Resource, obj: Obj) -> bool:
        try:
            await self.api.delete(
                resource,
                _meta(obj)["name"],
                namespace=_meta(obj)["namespace"],
                preconditions={"uid": _meta(obj)["uid"]},
            )
        except NotFound:
            return False
        return True


def _covers(stored: Any, wanted: Any) -> bool:
    """`stored` holds everything `wanted` says (it may hold more: the schema's defaults)."""
    if isinstance(wanted, dict):
        return isinstance(stored, dict) and all(
            k in stored and _covers(stored[k], v) for k, v in wanted.items()
        )
    if isinstance(wanted, list):
        return (
            isinstance(stored, list)
            and len(stored) == len(wanted)
            and all(_covers(a, b) for a, b in zip(stored, wanted, strict=True))
        )
    return bool(stored == wanted)


def _label_env(name: str, label: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{label}']"}}}


def _pod_index(pod: Obj) -> int:
    hostname = str(pod["spec"].get("hostname") or "")
    tail = hostname.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else -1


def _available(obj: Obj) -> bool:
    """A PodClique with its minimum ready, a scaling group with its minimum available."""
    status = obj.get("status") or {}
    if obj.get("kind") == "PodCliqueScalingGroup":
        return int(status.get("availableReplicas") or 0) >= int(obj["spec"].get("minAvailable") or 1)
    return int(status.get("readyReplicas") or 0) >= _clique_min_available(obj)
