"""SSH key pairs for mpirun, drawn with `cryptography` (OpenSSL underneath, the OS's randomness).

The shape is upstream's and what `ssh-keygen -t rsa -b 2048 -m PEM` writes: a PKCS#1 PEM private key
and an authorized_keys line, so the same mpirun setup reads a Secret from either operator.
"""

from __future__ import annotations

from dynamo_operator.internal.dynamo.graph.mpisecret import SshKeyPair

RSA_BITS = 2048
RSA_PUBLIC_EXPONENT = 65537  # the only exponent anyone should use (and OpenSSH's)


def generate_rsa_key_pair() -> SshKeyPair:
    """A fresh RSA key pair (about 0.1 s of CPU: run it off the event loop)."""
    # Imported here: only a multinode graph needs a key, and the package costs ~8 MB of RSS.
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=RSA_PUBLIC_EXPONENT, key_size=RSA_BITS)
    private = key.private_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PrivateFormat.TraditionalOpenSSL,  # PKCS#1: "BEGIN RSA PRIVATE KEY"
        encryption_algorithm=serialization.NoEncryption(),  # the pods read it unattended
    )
    public = key.public_key().public_bytes(
        encoding=serialization.Encoding.OpenSSH, format=serialization.PublicFormat.OpenSSH
    )
    return SshKeyPair(private_key=private, public_key=public + b"\n")
