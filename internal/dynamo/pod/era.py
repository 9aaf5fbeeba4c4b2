"""Pod details that depend on the upstream release that first deployed a graph. Pure.

Upstream 1.2 changed two things in every worker pod: it labels a v1alpha1 `worker` with a
`prefill`/`decode` sub-type by that sub-type (component-type label, Service selector, `DYN_COMPONENT`;
v1beta1 made them component types), and it gives workers `DYN_FORWARDPASS_METRIC_PORT`. Upstream
itself applies both to graphs its 1.0/1.1 releases deployed, so upgrading it rolls their workers.
Taking such a graph over must not restart pods for naming and an unused port (issue #39), so a
graph whose origin version (graph/meta.py) names an upstream release before 1.2 keeps the pods it
was deployed with. Versions below 1.0 are not gated: upstream stamped none (a graph without the
annotation is not gated either), and they are this project's own pre-releases.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from dynamo_operator.internal import consts as c

_FIRST_UPSTREAM = (1, 0, 0)
_FIRST_WITH_SUBTYPES = (1, 2, 0)
_SEMVER = re.compile(r"v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?")


def _origin(annotations: Mapping[str, str]) -> tuple[int, int, int] | None:
    m = _SEMVER.fullmatch(str(annotations.get(c.ANNOTATION_ORIGIN_VERSION) or "").strip())
    return (int(m[1]), int(m[2]), int(m[3])) if m else None


def before_upstream_1_2(annotations: Mapping[str, str]) -> bool:
    """The graph (or a DCD carrying its annotations) was first deployed by upstream 1.0 or 1.1."""
    origin = _origin(annotations)
    return origin is not None and _FIRST_UPSTREAM <= origin < _FIRST_WITH_SUBTYPES
