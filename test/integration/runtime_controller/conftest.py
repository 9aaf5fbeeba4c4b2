"""Fixtures of the runtime controller/manager integration tests: `api` (our Client on the test cluster)."""

from testsupport.api import api  # noqa: F401
