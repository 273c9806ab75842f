"""PLATFORM.toml: how to reach one LMS platform and which line item to grade, validated."""

from __future__ import annotations

import ipaddress
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from autograder.platforms.lti.errors import LtiError

SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
LINEITEM_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
NRPS_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
NRPS_MATCHES = ("lis_person_sourcedid", "email", "user_id")

PLATFORM_KEYS = {
    "issuer": "the platform's issuer (iss), e.g. https://canvas.instructure.com",
    "client_id": "the client id the platform gave this tool",
    "deployment_id": "the deployment id of the tool in the platform",
    "token_url": "the platform's OAuth 2 access token URL",
    "key_id": "the kid of the tool's key, as registered in the platform",
    "private_key": "path of the tool's RSA private key (PEM), relative to PLATFORM.toml",
}
OPTIONAL_KEYS = {
    "lineitem": "the line item URL scores are posted to",
    "lineitems_url": "the line items container URL (with `tag`: find or create the line item)",
    "tag": "the tag of the line item under lineitems_url",
    "label": "the label of a line item created by tag (default: the assignment id)",
    "audience": "aud of the client assertion when the platform wants other than token_url",
    "assignment": "the kit's assignment id whose grades are published",
    "nrps_url": "the Names and Role Provisioning Service context memberships URL",
    "nrps_match": f"member field matched to the kit's student ids: {', '.join(NRPS_MATCHES)}",
}


@dataclass(frozen=True)
class PlatformConfig:
    """A validated PLATFORM.toml: how to reach one platform and which line item to grade."""

    source: Path
    issuer: str
    client_id: str
    deployment_id: str
    token_url: str
    key_id: str
    private_key: Path
    lineitem: str | None = None
    lineitems_url: str | None = None
    tag: str | None = None
    label: str | None = None
    audience: str | None = None
    assignment: str | None = None
    nrps_url: str | None = None
    nrps_match: str = "lis_person_sourcedid"

    @property
    def scopes(self) -> tuple[str, ...]:
        """The scopes this configuration needs (the token asks for these only)."""
        scopes = [SCORE_SCOPE]
        if not self.lineitem:
            scopes.append(LINEITEM_SCOPE)
        if self.nrps_url:
            scopes.append(NRPS_SCOPE)
        return tuple(scopes)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(value: str, where: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise LtiError(f"{where} must be an https:// URL, got {value!r}")
    if parts.scheme == "http" and not _is_loopback(parts.hostname):
        raise LtiError(f"{where} must use https (plain http only for 127.0.0.1/localhost), got {value!r}")
    return value


LAUNCH_TABLE = "launch"  # [launch]: how `autograder serve` accepts launches (service/settings.py reads it)


def parse_platform(data: Mapping[str, Any], source: Path) -> PlatformConfig:
    """Validate parsed PLATFORM.toml data; every error names the offending key.

    With a [launch] table (the tool is launched from the platform), the line item may be left out:
    each launch names its own."""
    where = str(source)
    launched = isinstance(data.get(LAUNCH_TABLE), dict)
    data = {k: v for k, v in data.items() if not (k == LAUNCH_TABLE and launched)}
    allowed = set(PLATFORM_KEYS) | set(OPTIONAL_KEYS)
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise LtiError(f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})")
    values: dict[str, str] = {}
    for key, value in data.items():
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise LtiError(f"{where}: {key} must be a string, got {value!r}")
        values[key] = str(value).strip()
        if not values[key]:
            raise LtiError(f"{where}: {key} is empty: set it to {({**PLATFORM_KEYS, **OPTIONAL_KEYS})[key]}")
    for key, meaning in PLATFORM_KEYS.items():
        if key not in values:
            raise LtiError(f"{where}: {key} is required: {meaning}")
    for key in ("token_url", "lineitem", "lineitems_url", "nrps_url"):
        if key in values:
            check_url(values[key], f"{where}: {key}")
    lineitem, lineitems_url, tag = values.get("lineitem"), values.get("lineitems_url"), values.get("tag")
    if lineitem and (lineitems_url or tag):
        raise LtiError(f"{where}: set either lineitem, or lineitems_url with tag, not both")
    if not lineitem and not (lineitems_url and tag) and not (launched and not (lineitems_url or tag)):
        missing = "tag" if lineitems_url else "lineitems_url" if tag else "lineitem"
        raise LtiError(
            f"{where}: {missing} is required: give the line item URL as lineitem, or lineitems_url and "
            "tag to find (or create) it"
        )
    match = values.get("nrps_match", "lis_person_sourcedid")
    if match not in NRPS_MATCHES:
        raise LtiError(f"{where}: nrps_match must be one of {', '.join(NRPS_MATCHES)}, got {match!r}")
    if "nrps_match" in values and "nrps_url" not in values:
        raise LtiError(f"{where}: nrps_match is set but nrps_url is not")
    private_key = Path(values["private_key"]).expanduser()
    if not private_key.is_absolute():
        private_key = source.parent / private_key
    return PlatformConfig(
        source=source, issuer=values["issuer"], client_id=values["client_id"],
        deployment_id=values["deployment_id"], token_url=values["token_url"], key_id=values["key_id"],
        private_key=private_key, lineitem=lineitem, lineitems_url=lineitems_url, tag=tag,
        label=values.get("label"), audience=values.get("audience"), assignment=values.get("assignment"),
        nrps_url=values.get("nrps_url"), nrps_match=match,
    )


def load_platform(path: Path) -> PlatformConfig:
    """Read and validate PLATFORM.toml (the private key is read later, by `load_private_key`)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LtiError(f"platform file {path} not found") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise LtiError(f"{path}: {exc}") from None
    return parse_platform(data, path)
