"""The service's settings: PLATFORM.toml with its [launch] table, limits, where the data lives, its clock."""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from autograder.config import Kit
from autograder.platforms.lti.config import LAUNCH_TABLE, PlatformConfig, check_url, parse_platform
from autograder.platforms.lti.errors import LtiError

LAUNCH_KEYS = {
    "auth_login_url": "the platform's OIDC authorization endpoint the login redirects to",
    "platform_jwks": "the platform's public keys (a JWKS as a TOML table or JSON text): checked offline",
}
LAUNCH_OPTIONAL = {
    "assignment": "the kit's assignment a launch is for when its custom claim `assignment` names none",
    "frame_ancestors": "the origins whose pages may show the tool in a frame (default: the origins of the "
                       "issuer and of auth_login_url), e.g. [\"https://school.instructure.com\"]",
}
# An origin a Content-Security-Policy frame-ancestors may name: scheme://host[:port], `*.` allowed first.
ORIGIN = re.compile(r"^https?://(\*\.)?[A-Za-z0-9.-]+(:\d{1,5})?$")


@dataclass(frozen=True)
class Limits:
    """What one upload and one student may send."""

    max_upload_bytes: int = 5 * 1024 * 1024
    max_files: int = 30
    uploads_per_minute: int = 10


@dataclass(frozen=True)
class LaunchConfig:
    """How launches from one platform are checked: its issuer, client, deployment and keys."""

    platform: PlatformConfig
    auth_login_url: str
    platform_jwks: dict[str, Any]
    assignment: str | None = None
    frame_ancestors: tuple[str, ...] = ()  # origins allowed to frame the tool; () = issuer's and login's

    @property
    def framing_origins(self) -> tuple[str, ...]:
        """The origins whose pages may frame the tool: the configured ones, else the LMS's own."""
        if self.frame_ancestors:
            return self.frame_ancestors
        found = []
        for url in (self.platform.issuer, self.auth_login_url):
            parts = urlsplit(url)
            origin = f"{parts.scheme}://{parts.netloc}"
            if parts.scheme in ("https", "http") and parts.netloc and origin not in found:
                found.append(origin)
        return tuple(found)


class Clock:
    """The service's time (every "now" it asks: the exam window, the release, receipt times);
    `fixed` pins it to one moment, as a test of a deadline does."""

    def __init__(self, fixed: datetime | None = None):
        self.fixed = fixed

    def now(self) -> datetime:
        return self.fixed if self.fixed is not None else datetime.now(UTC)


@dataclass(frozen=True)
class ServiceSettings:
    """Everything `autograder serve` runs with."""

    kit: Kit
    data: Path  # the gradebook (with the inbox) and the server's session key live here
    host: str = "127.0.0.1"
    port: int = 8000
    launch: LaunchConfig | None = None
    demo: bool = False
    jobs: int = 1
    sandbox: bool = True
    lang: str | None = None  # the language of the pool started first (default: the kit's)
    proxied: bool = False  # behind a reverse proxy (https): trust its X-Forwarded-Proto/Host/For once
    limits: Limits = field(default_factory=Limits)
    cluster: str | None = None  # a Dask scheduler's address: submissions are graded on its nodes
    cluster_wait: float = 20.0  # seconds a submission sent there may find no node before it is graded here
    clock: Clock = field(default_factory=Clock, compare=False)

    @property
    def gradebook(self) -> Path:
        return self.data / "gradebook.sqlite"


def _jwks(value: Any, where: str) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise LtiError(f"{where}: platform_jwks is not JSON ({exc})") from None
    if not isinstance(value, dict) or not isinstance(value.get("keys"), list) or not value["keys"]:
        raise LtiError(f"{where}: platform_jwks must be a JWKS with a non-empty `keys` list "
                       "(copy the platform's public keys there: launches are checked without fetching)")
    for key in value["keys"]:
        if not isinstance(key, dict) or key.get("kty") != "RSA" or not key.get("kid"):
            raise LtiError(f"{where}: every key of platform_jwks needs kty = \"RSA\" and a kid")
    return dict(value)


def parse_launch(data: dict[str, Any], source: Path) -> LaunchConfig:
    """PLATFORM.toml with a [launch] table, validated; every error names the key and the file."""
    table = data.get(LAUNCH_TABLE)
    where = f"{source}: [{LAUNCH_TABLE}]"
    if not isinstance(table, dict):
        raise LtiError(f"{source}: a [{LAUNCH_TABLE}] table is required to serve launches "
                       f"(keys: {', '.join(LAUNCH_KEYS)})")
    unknown = sorted(set(table) - set(LAUNCH_KEYS) - set(LAUNCH_OPTIONAL))
    if unknown:
        raise LtiError(f"{where}: unknown key {unknown[0]!r} (allowed: "
                       f"{', '.join(sorted({**LAUNCH_KEYS, **LAUNCH_OPTIONAL}))})")
    for key, meaning in LAUNCH_KEYS.items():
        if key not in table:
            raise LtiError(f"{where}: {key} is required: {meaning}")
    platform = parse_platform(data, source)
    login = check_url(str(table["auth_login_url"]), f"{where}: auth_login_url")
    assignment = table.get("assignment")
    return LaunchConfig(platform, login, _jwks(table["platform_jwks"], where),
                        str(assignment) if assignment else None,
                        _origins(table.get("frame_ancestors"), where))


def _origins(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise LtiError(f"{where}: frame_ancestors must be a list of origins like [\"https://lms.example.edu\"]")
    for origin in value:
        if not ORIGIN.match(origin.rstrip("/")):
            raise LtiError(f"{where}: frame_ancestors: {origin!r} is not an origin (scheme://host[:port], no "
                           "path; `https://*.example.edu` for every subdomain)")
        check_url(origin.replace("*.", "", 1), f"{where}: frame_ancestors")
    return tuple(v.rstrip("/") for v in value)


def load_launch(path: Path) -> LaunchConfig:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LtiError(f"platform file {path} not found") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise LtiError(f"{path}: {exc}") from None
    return parse_launch(data, path)
