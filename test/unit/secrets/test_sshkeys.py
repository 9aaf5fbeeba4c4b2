"""RSA key pairs for mpirun (internal/secrets/sshkeys.py): the format OpenSSH and upstream use."""

from __future__ import annotations

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from dynamo_operator.internal.secrets.sshkeys import RSA_BITS, generate_rsa_key_pair


def test_private_key_is_a_pkcs1_pem_of_2048_bits() -> None:
    """PKCS#1 PEM ("BEGIN RSA PRIVATE KEY"), unencrypted, as `ssh-keygen -m PEM` writes it."""
    pair = generate_rsa_key_pair()
    assert pair.private_key.startswith(b"-----BEGIN RSA PRIVATE KEY-----\n")
    key = serialization.load_pem_private_key(pair.private_key, password=None)
    assert isinstance(key, rsa.RSAPrivateKey) and key.key_size == RSA_BITS == 2048


def test_public_key_is_the_authorized_keys_line_of_the_private_key() -> None:
    """One `ssh-rsa <base64>` line, newline-terminated, matching the private key."""
    pair = generate_rsa_key_pair()
    assert pair.public_key.startswith(b"ssh-rsa ") and pair.public_key.endswith(b"\n")
    private = serialization.load_pem_private_key(pair.private_key, password=None)
    derived = private.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    assert pair.public_key == derived + b"\n"


def test_each_call_draws_a_new_key() -> None:
    assert generate_rsa_key_pair().private_key != generate_rsa_key_pair().private_key
