"""The HTTP side of AGS and NRPS: the access token, retries, line items, scores, members."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import jwt
import requests
from cryptography.hazmat.primitives.asymmetric import rsa

from autograder import __version__
from autograder.platforms.lti.config import PlatformConfig, check_url
from autograder.platforms.lti.errors import AuthRejected, LtiError, PlatformUnavailable, TokenRefused

SCORE_MEDIA_TYPE = "application/vnd.ims.lis.v1.score+json"
LINEITEM_MEDIA_TYPE = "application/vnd.ims.lis.v2.lineitem+json"
LINEITEM_CONTAINER_MEDIA_TYPE = "application/vnd.ims.lis.v2.lineitemcontainer+json"
MEMBERSHIP_MEDIA_TYPE = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

MAX_PAGES = 100  # line item and membership pages followed at most
ASSERTION_LIFETIME = 60  # seconds a client assertion is valid
TOKEN_MARGIN = 60.0  # a cached token is fetched again this long before it expires


def client_assertion(config: PlatformConfig, key: rsa.RSAPrivateKey, now: float | None = None) -> str:
    """The RS256 JWT that authenticates the tool at the token endpoint (1EdTech Security Framework)."""
    issued = int(time.time() if now is None else now)
    claims = {
        "iss": config.client_id,
        "sub": config.client_id,
        "aud": config.audience or config.token_url,
        "iat": issued,
        "exp": issued + ASSERTION_LIFETIME,
        "jti": f"autograder-{uuid.uuid4()}",
    }
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": config.key_id})


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try: attempts per request (429, 5xx, connection errors), backoff and timeouts."""

    attempts: int = 4
    base_delay: float = 1.0
    max_delay: float = 30.0
    connect_timeout: float = 10.0
    read_timeout: float = 30.0

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        """Seconds to wait after failed attempt `attempt` (1-based); Retry-After wins, capped."""
        if retry_after and retry_after.strip().isdigit():
            return min(float(retry_after.strip()), self.max_delay)
        return min(self.base_delay * 2.0 ** (attempt - 1), self.max_delay)


def platform_message(response: requests.Response) -> str:
    """What the platform said, in one line: an OAuth/JSON error, else the start of the body."""
    text = response.text or ""
    try:
        data = response.json()
    except ValueError:
        data = None
    if isinstance(data, dict):
        parts = [str(data[k]) for k in ("error", "error_description", "message", "errors") if data.get(k)]
        if parts:
            text = ": ".join(dict.fromkeys(parts))
    text = " ".join(text.split())[:500]
    return f"HTTP {response.status_code}" + (f": {text}" if text else f" {response.reason or ''}".rstrip())


def _with_path(url: str, suffix: str) -> str:
    """`{lineitem}/scores`: the suffix goes on the path, before any ?query."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + suffix))


class AgsClient:
    """The HTTP side of AGS and NRPS for one platform, with token caching and retries."""

    def __init__(
        self,
        config: PlatformConfig,
        key: rsa.RSAPrivateKey,
        *,
        retry: RetryPolicy | None = None,
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ):
        self.config = config
        self.key = key
        self.retry = retry or RetryPolicy()
        self.session = session or requests.Session()
        self.session.headers.setdefault("User-Agent", f"torch-autograder/{__version__} (LTI AGS)")
        self.sleep = sleep
        self.clock = clock
        self._token: str | None = None
        self._token_expires = 0.0
        self.token_requests = 0

    def close(self) -> None:
        self.session.close()

    # the token
    def access_token(self) -> str:
        """A bearer token for the configured scopes: the cached one while it is valid, else a new one."""
        if self._token and self.clock() < self._token_expires:
            return self._token
        form = {
            "grant_type": "client_credentials",
            "client_assertion_type": ASSERTION_TYPE,
            "client_assertion": client_assertion(self.config, self.key, self.clock()),
            "scope": " ".join(self.config.scopes),
        }
        self.token_requests += 1
        response = self._send("POST", self.config.token_url, auth=False, data=form,
                              headers={"Accept": "application/json"})
        if response.status_code != 200:
            message = f"token request refused by {self.config.token_url}: {platform_message(response)}"
            raise TokenRefused(message, response.status_code)
        try:
            data = response.json()
            token = str(data["access_token"])
            expires_in = float(data.get("expires_in", 3600))
        except (ValueError, KeyError, TypeError):
            raise TokenRefused(
                f"token endpoint {self.config.token_url} answered without an access_token: "
                f"{platform_message(response)}", response.status_code,
            ) from None
        if str(data.get("token_type", "bearer")).lower() != "bearer":
            raise TokenRefused(f"token endpoint gave a {data.get('token_type')!r} token, not a bearer token")
        margin = min(TOKEN_MARGIN, expires_in / 10)
        self._token, self._token_expires = token, self.clock() + expires_in - margin
        return token

    def invalidate_token(self) -> None:
        self._token, self._token_expires = None, 0.0

    # requests
    def _send(self, method: str, url: str, *, auth: bool = True, **kwargs: Any) -> requests.Response:
        """One logical request: retried on 429/5xx/connection errors, a fresh token once on 401, or on
        403 to a token held from before: Open edX answers 403 to a bearer token it cannot verify
        (expired by its clock, or signed by a key it has since replaced), where RFC 6750 §3.1 says 401."""
        policy = self.retry
        refreshed = False
        attempt = 0
        headers = dict(kwargs.pop("headers", {}))
        while True:
            attempt += 1
            held = False  # the token sent is one cached by an earlier request
            if auth:
                held = self._token is not None and self.clock() < self._token_expires
                headers["Authorization"] = f"Bearer {self.access_token()}"
            try:
                response = self.session.request(
                    method, url, headers=headers, timeout=(policy.connect_timeout, policy.read_timeout),
                    allow_redirects=False, **kwargs,
                )
            except (requests.ConnectionError, requests.Timeout) as exc:
                if attempt >= policy.attempts:
                    raise PlatformUnavailable(
                        f"{method} {url} failed {attempt} times: {type(exc).__name__}: {_short(exc)}"
                    ) from None
                self.sleep(policy.delay(attempt))
                continue
            status = response.status_code
            if auth and (status == 401 or (status == 403 and held and not refreshed)):
                if refreshed:
                    raise AuthRejected(f"{method} {url} refused a fresh token: {platform_message(response)}")
                refreshed = True
                attempt -= 1  # the refresh is not a failed attempt; it happens at most once
                self.invalidate_token()
                continue
            if status == 429 or 500 <= status < 600:
                if attempt >= policy.attempts:
                    raise PlatformUnavailable(
                        f"{method} {url}: {platform_message(response)} (after {attempt} attempts)", status
                    )
                self.sleep(policy.delay(attempt, response.headers.get("Retry-After")))
                continue
            return response

    def _pages(self, url: str, accept: str, params: dict[str, str] | None = None) -> Iterable[Any]:
        """The JSON bodies of a paged container (Link: <...>; rel="next"), MAX_PAGES at most."""
        next_url: str | None = url
        for _ in range(MAX_PAGES):
            if next_url is None:
                return
            response = self._send("GET", next_url, headers={"Accept": accept}, params=params)
            if response.status_code != 200:
                raise LtiError(f"GET {next_url}: {platform_message(response)}")
            try:
                body = response.json()
            except ValueError:
                raise LtiError(f"GET {next_url} did not answer JSON: {platform_message(response)}") from None
            yield body
            link = response.links.get("next", {}).get("url")
            if link:
                _same_origin(link, url, "a next-page link")
            next_url, params = (link, None) if link and link != next_url else (None, None)
        raise LtiError(f"GET {url}: more than {MAX_PAGES} pages: stopped")

    # line items
    def find_lineitem(self, tag: str) -> str | None:
        """The URL of the first line item under lineitems_url with this tag, if any."""
        assert self.config.lineitems_url
        for page in self._pages(self.config.lineitems_url, LINEITEM_CONTAINER_MEDIA_TYPE, {"tag": tag}):
            items = page if isinstance(page, list) else []
            for item in items:
                if isinstance(item, dict) and item.get("tag") == tag and item.get("id"):
                    return _same_origin(str(item["id"]), self.config.lineitems_url, f"line item {tag!r}")
        return None

    def create_lineitem(self, tag: str, label: str, score_maximum: float, resource_id: str) -> str:
        assert self.config.lineitems_url
        body = {"scoreMaximum": score_maximum, "label": label, "tag": tag, "resourceId": resource_id}
        response = self._send(
            "POST", self.config.lineitems_url, data=json.dumps(body),
            headers={"Content-Type": LINEITEM_MEDIA_TYPE, "Accept": LINEITEM_MEDIA_TYPE},
        )
        if response.status_code not in (200, 201):
            raise LtiError(
                f"creating line item {tag!r} at {self.config.lineitems_url}: {platform_message(response)}"
            )
        try:
            created = str(response.json()["id"])
        except (ValueError, KeyError, TypeError):
            raise LtiError(f"the platform created line item {tag!r} but gave no id: "
                           f"{platform_message(response)}") from None
        return _same_origin(created, self.config.lineitems_url, f"the created line item {tag!r}")

    # NRPS
    def members(self) -> list[dict[str, Any]]:
        """Every member of the context (all pages)."""
        assert self.config.nrps_url
        members: list[dict[str, Any]] = []
        for page in self._pages(self.config.nrps_url, MEMBERSHIP_MEDIA_TYPE):
            if not isinstance(page, dict) or not isinstance(page.get("members"), list):
                raise LtiError(f"{self.config.nrps_url} answered without a members list")
            members.extend(m for m in page["members"] if isinstance(m, dict))
        return members

    # scores
    def post_score(self, lineitem: str, score: Mapping[str, Any]) -> requests.Response:
        return self._send(
            "POST", _with_path(lineitem, "/scores"), data=json.dumps(score, ensure_ascii=False).encode(),
            headers={"Content-Type": SCORE_MEDIA_TYPE, "Accept": "application/json"},
        )


def _same_origin(url: str, reference: str, what: str) -> str:
    """`url`, if it is on the platform's own scheme, host and port (the bearer token goes there)."""
    check_url(url, what)
    mine, theirs = urlsplit(reference), urlsplit(url)
    if (mine.scheme, mine.netloc) != (theirs.scheme, theirs.netloc):
        raise LtiError(
            f"{what} {url} is not on {mine.scheme}://{mine.netloc}: refusing to send the token there"
        )
    return url


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300]
