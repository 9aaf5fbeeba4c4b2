"""Fixtures of the runtime client/cache integration tests: `api` (our Client on the test cluster)."""

from testsupport.api import api  # noqa: F401
