"""What the API server refuses in a workload although our CRDs accept it. Pure.

The CRDs embed the pod template and label maps by their OpenAPI shape, which says nothing of a
label's syntax, of a probe needing exactly one handler, or of an environment variable taking its
value from exactly one source. A graph carrying such a mistake was admitted, then its Deployment (or
the DCD whose labels carry it) was refused when written, after the graph's other components were
written and running. Generation checks these rules first, so the graph is refused whole, naming the
field the user wrote.

Only rules the API server has applied unchanged in every version this operator supports are
checked here; anything version-dependent (environment variable names, field paths of the downward
API) is left to the API server, as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.common.inputs import json_object

# apimachinery's validation: a qualified name is an optional DNS-1123 subdomain prefix and "/", then
# a name part; a label value is a name part or empty.
_NAME_PART: Final = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN: Final = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_CONFIG_MAP_KEY: Final = re.compile(r"^[-._a-zA-Z0-9]+$")
_DNS1123_LABEL: Final = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_LETTER: Final = re.compile(r"[a-z]")
PORT_MAX: Final = 65535
PORT_NAME_MAX: Final = 15
NAME_PART_MAX: Final = 63
PREFIX_MAX: Final = 253
PROBE_HANDLERS: Final = ("exec", "httpGet", "tcpSocket", "grpc")
PROBES: Final = ("livenessProbe", "readinessProbe", "startupProbe")
# Where an environment variable's value may come from (fileKeyRef: Kubernetes 1.34 on).
ENV_SOURCES: Final = ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef")
_NAMED_SOURCES: Final = ("configMapKeyRef", "secretKeyRef")


def _name_part_problem(text: str) -> str | None:
    if len(text) > NAME_PART_MAX:
        return f"must be at most {NAME_PART_MAX} characters"
    if not _NAME_PART.match(text):
        return (
            "must consist of alphanumeric characters, '-', '_' or '.', and start and end with an"
            " alphanumeric character"
        )
    return None


def qualified_name_problem(key: str) -> str | None:
    """Why `key` is no qualified name (a label or annotation key), or None."""
    prefix, slash, name = key.rpartition("/")
    if slash and not prefix:
        return "has an empty prefix before '/'"
    if slash and (len(prefix) > PREFIX_MAX or not _DNS1123_SUBDOMAIN.match(prefix)):
        return f"prefix {prefix!r} must be a lowercase DNS-1123 subdomain of at most {PREFIX_MAX} characters"
    if not name:
        return "name part must not be empty"
    problem = _name_part_problem(name)
    return f"name part {problem}" if problem else None


def label_value_problem(value: object) -> str | None:
    """Why `value` is no label value (which may be empty), or None."""
    text = str(value)
    return _name_part_problem(text) if text else None


def check_dns_label(name: object, field: str, what: str) -> None:
    """`name` (of a container or a volume: `what`) is a lowercase DNS-1123 label."""
    text = str(name)
    if len(text) > NAME_PART_MAX or not _DNS1123_LABEL.match(text):
        raise GenerationError(
            field,
            f"{text!r} cannot name a {what}: it must be a lowercase DNS-1123 label (at most"
            f" {NAME_PART_MAX} lowercase letters, digits and '-', starting and ending with one"
            " of the first two)",
        )


def check_subdomain(name: object, field: str, what: str, *, wildcard: bool = False) -> None:
    """`name` (of `what`) is a lowercase DNS-1123 subdomain; `wildcard`: it may start with `*.`, as a
    host may."""
    text = str(name)
    bare = text[2:] if wildcard and text.startswith("*.") else text
    if len(text) > PREFIX_MAX or not _DNS1123_SUBDOMAIN.match(bare):
        raise GenerationError(
            field, f"{text!r} cannot name a {what}: it must be a lowercase DNS-1123 subdomain"
        )


def check_labels(labels: object, field: str) -> None:
    """Every key a qualified name and every value a label value; `field` names the map."""
    for key, value in json_object(labels).items():
        problem = qualified_name_problem(str(key))
        if problem:
            raise GenerationError(f"{field}[{key}]", f"is no valid label key: {problem}")
        problem = label_value_problem(value)
        if problem:
            raise GenerationError(f"{field}[{key}]", f"{str(value)!r} is no valid label value: it {problem}")


def check_annotations(annotations: object, field: str) -> None:
    """Every key a qualified name (the API server checks it lowercased)."""
    for key in json_object(annotations):
        problem = qualified_name_problem(str(key).lower())
        if problem:
            raise GenerationError(f"{field}[{key}]", f"is no valid annotation key: {problem}")


def check_probe(probe: object, field: str, *, replaces_default: bool = False) -> None:
    """A probe runs exactly one handler, completely given; `field` ends with the probe's name
    (`livenessProbe`, `readinessProbe`, `startupProbe`), which decides the rules on thresholds.
    `replaces_default`: the probe was given whole in place of the operator's (the message says so)."""
    if not isinstance(probe, Mapping):
        return
    handlers = [h for h in PROBE_HANDLERS if probe.get(h) is not None]
    if len(handlers) != 1:
        found = "none" if not handlers else ", ".join(handlers)
        raise GenerationError(
            field,
            f"a probe needs exactly one handler ({', '.join(PROBE_HANDLERS)}); it has {found}"
            + (" (a probe given here replaces the default one whole)" if replaces_default else ""),
        )
    handler = handlers[0]
    body = json_object(probe[handler])
    if handler == "exec" and not body.get("command"):
        raise GenerationError(f"{field}.exec.command", "required")
    if handler != "exec":
        problem = port_problem(body.get("port"), names_allowed=handler != "grpc")
        if problem:
            raise GenerationError(f"{field}.{handler}.port", problem)
    kind = field.rsplit(".", 1)[-1]
    if kind != "readinessProbe" and probe.get("successThreshold") not in (None, 1):
        raise GenerationError(f"{field}.successThreshold", "must be 1 for a liveness or startup probe")
    if kind == "readinessProbe" and probe.get("terminationGracePeriodSeconds") is not None:
        raise GenerationError(
            f"{field}.terminationGracePeriodSeconds", "must not be set for a readiness probe"
        )


def port_problem(port: object, *, names_allowed: bool) -> str | None:
    """Why `port` is neither a port number nor (where allowed) the name of a container port."""
    if isinstance(port, int) and not isinstance(port, bool):
        return None if 1 <= port <= PORT_MAX else f"{port} is no port number (1 to {PORT_MAX})"
    if not names_allowed or not isinstance(port, str):
        return f"{port!r} is no port number (1 to {PORT_MAX})"
    if (
        len(port) > PORT_NAME_MAX
        or not _DNS1123_LABEL.match(port)
        or "--" in port
        or not _LETTER.search(port)
    ):
        return (
            f"{port!r} is no port name: at most {PORT_NAME_MAX} lowercase letters, digits and single"
            " '-' between them, with at least one letter"
        )
    return None


def check_env(env: object, field_of: Mapping[str, str], default_field: str) -> None:
    """Each variable with a `valueFrom` takes it from exactly one source and has no `value`.
    `field_of`: the field each variable name was written in; others are named under `default_field`."""
    for var in _list(env):
        if var.get("valueFrom") is None:
            continue
        source = json_object(var.get("valueFrom"))
        name = str(var.get("name"))
        field = f"{field_of.get(name, default_field)}[name={name}].valueFrom"
        if var.get("value"):
            raise GenerationError(field, "must not be given beside a non-empty value")
        given = [s for s in ENV_SOURCES if source.get(s) is not None]
        if len(given) != 1:
            found = "none" if not given else ", ".join(given)
            raise GenerationError(field, f"needs exactly one of {', '.join(ENV_SOURCES[:4])}; it has {found}")
        if given[0] in _NAMED_SOURCES:
            _check_key_selector(json_object(source[given[0]]), f"{field}.{given[0]}")


def check_env_from(env_from: object, field_of: Mapping[str, str], default_field: str) -> None:
    """Each `envFrom` entry names a Secret or ConfigMap an object can be called. `field_of`: the field
    a referenced name was written in (v1alpha1's `envFromSecret`); others are named under
    `default_field`."""
    for entry in _list(env_from):
        for kind in ("secretRef", "configMapRef"):
            if entry.get(kind) is None:
                continue
            name = str(json_object(entry.get(kind)).get("name") or "")
            if len(name) > PREFIX_MAX or not _DNS1123_SUBDOMAIN.match(name):
                field = field_of.get(name, f"{default_field}[{kind}.name={name}]")
                raise GenerationError(
                    field, f"{name!r} cannot name a {kind[:-3]}: it must be a lowercase DNS-1123 subdomain"
                )


def _check_key_selector(selector: Mapping[str, object], field: str) -> None:
    name = str(selector.get("name") or "")
    if len(name) > PREFIX_MAX or not _DNS1123_SUBDOMAIN.match(name):
        raise GenerationError(f"{field}.name", f"{name!r} must be a lowercase DNS-1123 subdomain")
    key = str(selector.get("key") or "")
    if not key:
        raise GenerationError(f"{field}.key", "required")
    if len(key) > PREFIX_MAX or not _CONFIG_MAP_KEY.match(key) or key in (".", ".."):
        raise GenerationError(
            f"{field}.key", f"{key!r} must consist of alphanumeric characters, '-', '_' or '.'"
        )


def check_volume_mounts(
    containers: Sequence[Mapping[str, object]], volumes: Iterable[str], field_of: Mapping[str, str]
) -> None:
    """Every mount of every container names a volume of the pod. `field_of`: container name → the
    field that container was written in."""
    declared = set(volumes)
    for container in containers:
        name = str(container.get("name"))
        for mount in _list(container.get("volumeMounts")):
            if mount.get("name") not in declared:
                raise GenerationError(
                    f"{field_of.get(name, 'containers')}.volumeMounts[name={mount.get('name')}]",
                    "names no volume of the pod",
                )


def check_metadata_maps(spec: Mapping[str, object], field: str) -> None:
    """The label and annotation maps of a v1alpha1 graph, service or DCD spec (`field`: its path and
    a trailing dot): its own, which go onto its objects and pods, and its pod template's."""
    check_labels(spec.get("labels"), f"{field}labels")
    check_annotations(spec.get("annotations"), f"{field}annotations")
    pod_metadata = json_object(spec.get("extraPodMetadata"))
    check_labels(pod_metadata.get("labels"), f"{field}extraPodMetadata.labels")
    check_annotations(pod_metadata.get("annotations"), f"{field}extraPodMetadata.annotations")


def _list(value: object) -> list[Mapping[str, object]]:
    """`value` as a list of JSON objects (other entries are skipped)."""
    return [x for x in value if isinstance(x, Mapping)] if isinstance(value, list | tuple) else []
