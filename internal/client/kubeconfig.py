"""Kubeconfig files: read, merge and pick one context, the way client-go's `clientcmd` does.

This module only reads YAML and resolves paths; turning the chosen cluster and user into TLS settings
and credentials is `config.py`'s job. The rules it keeps (client-go's, so kubectl and the operator
agree on what a KUBECONFIG means):

- KUBECONFIG may list several files (separated by `os.pathsep`). Missing files in a list are skipped;
  a file that exists but cannot be read or parsed is an error. A single path given explicitly must exist.
- Merging: for clusters, users and contexts the first file that defines a name wins, whole entry;
  `current-context` comes from the first file that sets it.
- Relative file paths (certificate-authority, client-certificate, client-key, tokenFile, and an exec
  command that contains a path separator) are resolved against the directory of the file that
  defined the entry, before merging, so an entry means the same whichever file list it is read from.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

DEFAULT_PATH = Path("~/.kube/config")

# Fields that name local files; relative ones are resolved against the defining file's directory.
_CLUSTER_FILES = ("certificate-authority",)
_USER_FILES = ("client-certificate", "client-key", "tokenFile")


class ConfigError(Exception):
    """A kubeconfig or service account that cannot be used; the message is one line that names it."""


@dataclass(frozen=True)
class Selection:
    """The chosen context with its cluster and user bodies, file paths already absolute."""

    context: str
    cluster_name: str
    cluster: Mapping[str, Any]
    user_name: str  # "" when the context names no user: anonymous
    user: Mapping[str, Any]
    source: str  # the file(s) it came from, for error messages


@dataclass
class Kubeconfig:
    """The merged view of one or more kubeconfig files."""

    files: list[str] = field(default_factory=list)
    clusters: dict[str, dict[str, Any]] = field(default_factory=dict)
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    contexts: dict[str, dict[str, Any]] = field(default_factory=dict)
    current_context: str = ""

    def select(self, context: str | None = None) -> Selection:
        """The named context (or current-context), with its cluster and user; errors name what is missing."""
        source = os.pathsep.join(self.files)
        name = context or self.current_context
        if not name:
            raise ConfigError(f"kubeconfig {source}: no current-context is set and no context was given")
        ctx = self.contexts.get(name)
        if ctx is None:
            raise ConfigError(f"kubeconfig {source}: context {name!r} is not defined")
        cluster_name = _text(ctx.get("cluster"))
        if not cluster_name:
            raise ConfigError(f"kubeconfig {source}: context {name!r} names no cluster")
        cluster = self.clusters.get(cluster_name)
        if cluster is None:
            raise ConfigError(
                f"kubeconfig {source}: cluster {cluster_name!r} of context {name!r} is not defined"
            )
        user_name = _text(ctx.get("user"))
        user: dict[str, Any] = {}
        if user_name:
            found = self.users.get(user_name)
            if found is None:
                raise ConfigError(
                    f"kubeconfig {source}: user {user_name!r} of context {name!r} is not defined"
                )
            user = found
        return Selection(
            context=name,
            cluster_name=cluster_name,
            cluster=cluster,
            user_name=user_name,
            user=user,
            source=source,
        )


def candidate_paths(path: str | None) -> tuple[list[str], bool]:
    """The files to read and whether they must all exist: (paths, all_required).

    `path` may itself be a KUBECONFIG-style list. None means $KUBECONFIG, else ~/.kube/config.
    """
    if path is None:
        path = os.environ.get("KUBECONFIG") or str(DEFAULT_PATH.expanduser())
    paths: list[str] = []
    for part in path.split(os.pathsep):
        if part and part not in paths:
            paths.append(part)
    if not paths:
        raise ConfigError(f"kubeconfig path {path!r} names no file")
    # A single path (flag, argument, one-entry KUBECONFIG, the default) must exist; in a list,
    # missing files are skipped as long as one is there.
    return paths, len(paths) == 1


def load(paths: Sequence[str], *, all_required: bool) -> Kubeconfig:
    """Read and merge `paths` in order (first definition of a name wins)."""
    merged = Kubeconfig()
    for path in paths:
        try:
            text = Path(path).read_text()
        except FileNotFoundError:
            if all_required:
                raise ConfigError(f"kubeconfig {path} does not exist") from None
            continue
        except OSError as err:
            raise ConfigError(f"kubeconfig {path} cannot be read: {err.strerror or err}") from err
        _merge(merged, path, _parse(path, text))
    if not merged.files:
        raise ConfigError(f"none of the kubeconfig files exists: {os.pathsep.join(paths)}")
    return merged


def _parse(path: str, text: str) -> Mapping[str, Any]:
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as err:
        where = getattr(err, "problem_mark", None)
        line = f" (line {where.line + 1})" if where is not None else ""
        raise ConfigError(f"kubeconfig {path} is not valid YAML{line}") from err
    if doc is None:
        return {}  # an empty file is an empty config, as for client-go
    if not isinstance(doc, Mapping):
        raise ConfigError(f"kubeconfig {path} is not a mapping at the top level")
    return doc


def _merge(into: Kubeconfig, path: str, doc: Mapping[str, Any]) -> None:
    base = Path(path).resolve().parent
    into.files.append(path)
    for list_key, body_key, table, files in (
        ("clusters", "cluster", into.clusters, _CLUSTER_FILES),
        ("users", "user", into.users, _USER_FILES),
        ("contexts", "context", into.contexts, ()),
    ):
        items = doc.get(list_key) or []
        if not isinstance(items, list):
            raise ConfigError(f"kubeconfig {path}: {list_key} is not a list")
        for item in items:
            if not isinstance(item, Mapping) or not _text(item.get("name")):
                raise ConfigError(f"kubeconfig {path}: an entry of {list_key} has no name")
            name = _text(item["name"])
            body = item.get(body_key) or {}
            if not isinstance(body, Mapping):
                raise ConfigError(f"kubeconfig {path}: {body_key} {name!r} is not a mapping")
            if name not in table:
                table[name] = _resolved(dict(body), files, base, user=body_key == "user")
    if not into.current_context:
        into.current_context = _text(doc.get("current-context"))


def _resolved(body: dict[str, Any], files: Sequence[str], base: Path, *, user: bool) -> dict[str, Any]:
    for key in files:
        value = _text(body.get(key))
        if value and not os.path.isabs(value):
            body[key] = str(base / value)
    exec_spec = body.get("exec")
    if user and isinstance(exec_spec, Mapping):
        command = _text(exec_spec.get("command"))
        # A bare name is looked up on PATH; only a command with a separator is a relative file.
        if command and os.sep in command and not os.path.isabs(command):
            body["exec"] = {**exec_spec, "command": str(base / command)}
    return body


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
