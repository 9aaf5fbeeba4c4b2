"""Fixtures of the request/model controller integration tests: `api` (a test client) and `operator`
(the operator running in-process with every controller)."""

from testsupport.api import api  # noqa: F401
from testsupport.operator import operator  # noqa: F401
