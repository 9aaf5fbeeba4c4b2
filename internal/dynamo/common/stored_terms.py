"""A refusal's message in the terms of the stored version (v1beta1). Pure.

Generation reads the v1alpha1 view of a graph, DCD or request (inputs.py), so its errors name
v1alpha1 paths, in its field and sometimes in its text. The user's object is stored as v1beta1, and
v1beta1 is what upstream's examples and docs are written in, so a condition or Event that refuses it
names the field the way v1beta1 spells it. The reconcilers pass each refusal through here just
before it is reported; the path mapping itself is the conversion's (api/conversion/paths.py).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from dynamo_operator.api.conversion import paths

# A path from an object's root inside prose: not the tail of another path (`podTemplate.spec.…`),
# and ending where prose resumes (a space, a colon or a quote).
_ROOTED_PATH = re.compile(r"(?<![\w./\[=-])spec\.[A-Za-z][^\s:;,'\"()]*")


def _rewrite_rooted(text: str, rewrite: paths.PathRewrite) -> str:
    def one(match: re.Match[str]) -> str:
        token = match.group(0)
        stripped = token.rstrip(".")  # a path closing a sentence keeps its full stop
        return rewrite(stripped) + token[len(stripped) :]

    return _ROOTED_PATH.sub(one, text)


def graph_message(message: str, services: Collection[str]) -> str:
    """`message` (about a graph) with each v1alpha1 path in v1beta1 terms. `services`: the graph's
    service names (a name may hold dots)."""
    return _rewrite_rooted(message, lambda path: paths.graph_path(path, services))


def dcd_message(field: str, message: str) -> str:
    """A DCD's refusal for `field` (relative to its v1alpha1 spec, or rooted), `field: message`, with
    the field and each rooted path in the message in v1beta1 terms."""
    return f"{paths.dcd_path(field)}: {_rewrite_rooted(message, paths.dcd_path)}"


def request_message(message: str) -> str:
    """`message` (about a DGDR) with each v1alpha1 path in it in v1beta1 terms."""
    return _rewrite_rooted(message, paths.request_path)
