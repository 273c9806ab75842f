"""The tool's RSA key: loading the private key, its public JWK and thumbprint, a new key pair."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from autograder.platforms.lti.errors import LtiError


def load_private_key(path: Path, where: str = "private_key") -> rsa.RSAPrivateKey:
    """The tool's RSA private key (PEM, unencrypted), at least 2048 bits."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise LtiError(
            f"{where}: key file {path} not found: create one with `autograder lti keygen`"
        ) from None
    except OSError as exc:
        raise LtiError(f"{where}: cannot read {path}: {exc}") from None
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise LtiError(f"{where}: {path} is not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise LtiError(f"{where}: {path} is not an RSA key (RS256 needs RSA)")
    if key.key_size < 2048:
        raise LtiError(f"{where}: {path} is a {key.key_size}-bit key: use at least 2048 bits")
    return key


def jwk_thumbprint(jwk: Mapping[str, Any]) -> str:
    """RFC 7638 SHA-256 thumbprint of an RSA JWK (base64url, no padding): a stable default kid."""
    canonical = json.dumps({k: jwk[k] for k in ("e", "kty", "n")}, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).rstrip(b"=").decode()


def public_jwk(key: rsa.RSAPrivateKey | rsa.RSAPublicKey, kid: str | None = None) -> dict[str, Any]:
    """The public JWK to register in the platform (kty, n, e, kid, alg RS256, use sig)."""
    public = key.public_key() if isinstance(key, rsa.RSAPrivateKey) else key
    jwk: dict[str, Any] = dict(RSAAlgorithm.to_jwk(public, as_dict=True))
    jwk.pop("key_ops", None)  # `use` says it; RFC 7517 §4.3: not both
    jwk["kid"] = kid or jwk_thumbprint(jwk)
    jwk["alg"] = "RS256"
    jwk["use"] = "sig"
    return jwk


def generate_key_pair(bits: int = 2048, kid: str | None = None) -> tuple[bytes, dict[str, Any]]:
    """A new RSA key: (private key PEM, public JWK)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return pem, public_jwk(key, kid)
