"""These tests run operators with flags of their own, so they get a control plane of their own, with no
session operator beside them (testsupport/private.py)."""

from testsupport.private import api, cluster, kubectl  # noqa: F401
