"""Certificates of the conversion webhook: issued and rotated by the operator itself (`selfsigned.py`,
with the CA bundle put into the CRDs by `inject.py`), or mounted from cert-manager (`files.py`)."""
