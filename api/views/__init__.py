"""Typed views of the API: one `TypedDict` per type, the JSON form the API server stores.

`v1alpha1.py`, `v1beta1.py` and `k8s.py` are generated from the models by hack/gen_views.py; `scalars.py`
holds the JSON scalars they share. A view costs nothing at run time: the object read from the cache is
cast to it once (`typing.cast`), and from there mypy checks every key generation reads.
"""
