"""Storage-version migration of custom resources: after a CRD's storage version changes, rewrite every
object still stored at an older version, then trim the CRD's `status.storedVersions` to the storage
version alone (`migrator.py`; what to do with a CRD is decided in `plan.py`, without I/O).

Generic runtime: it knows no kind of its own. The caller names the CRDs to migrate.
"""
