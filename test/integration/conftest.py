"""Fixtures for integration tests against a real kube-apiserver; each lives in a testsupport module.

Declared here once for every suite below: a session-scoped fixture imported into two conftests is
two fixtures, and two in-process operators would then reconcile the same objects side by side
(each sending its own Events and status writes). For the same reason the private control plane
that testsupport/private.py's directories share is declared here, not in their conftests.
"""

from testsupport.api import api  # noqa: F401
from testsupport.cluster import cluster, kubectl, local_cluster, ns, short_ns  # noqa: F401
from testsupport.operator import operator  # noqa: F401
from testsupport.private import private_control_plane  # noqa: F401
