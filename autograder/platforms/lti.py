"""Publish grades to an LMS through LTI 1.3 Assignment and Grade Services (AGS 2.0).

The tool side of ../shared/notes/lms.md §4, for a batch (no launch needed):

1. An access token by the OAuth 2 client-credentials grant, authenticated by an RS256 client
   assertion (a JWT signed with the tool's private key: iss = sub = client_id, aud = token URL,
   iat, exp, jti), for the scopes this run needs (score; lineitem when a line item is found or
   created by tag; NRPS contextmembership.readonly when the roster comes from the platform).
   The token is cached until shortly before it expires and fetched again once on a 401.
2. The line item: `lineitem` from PLATFORM.toml, or the one with `tag` under `lineitems_url`
   (created with the assignment's maximum when the platform has none).
3. Student ids -> LTI user ids: a roster CSV `student,lti_user_id`, else the platform's Names and
   Role Provisioning Service (`nrps_url`), matching the kit's student id against a member's
   `lis_person_sourcedid` (default), `email` or `user_id` (`nrps_match`), case-insensitively.
4. One `POST {lineitem}/scores` (`application/vnd.ims.lis.v1.score+json`) per student.

Every publish is recorded in the gradebook's SQLite file, table `lti_publishes` (created here; the
gradebook's own table is untouched): a row is `pending` before the score is sent, then `sent` or
`refused` (with the platform's message). A rerun sends a student again only when the latest row
for (assignment, line item, student) is not `sent` with the same fingerprint (sha256 of user id,
score, maximum and comment); a crash or a network failure leaves `pending` rows that the next run
sends. 429 and 5xx answers and connection errors are retried with bounded exponential backoff.
"""

from __future__ import annotations

import csv
import hashlib
import io
import ipaddress
import json
import time
import tomllib
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import jwt
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from autograder import __version__
from autograder.errors import AutograderError
from autograder.grading.results import SubmissionResult
from autograder.output.gradebook import Gradebook, find_gradebook
from autograder.output.publish_log import PublishLog, iso_timestamp
from autograder.submissions.students import student_key

SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
LINEITEM_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
NRPS_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
SCORE_MEDIA_TYPE = "application/vnd.ims.lis.v1.score+json"
LINEITEM_MEDIA_TYPE = "application/vnd.ims.lis.v2.lineitem+json"
LINEITEM_CONTAINER_MEDIA_TYPE = "application/vnd.ims.lis.v2.lineitemcontainer+json"
MEMBERSHIP_MEDIA_TYPE = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

NRPS_MATCHES = ("lis_person_sourcedid", "email", "user_id")
ROSTER_COLUMNS = ("student", "lti_user_id")
MAX_PAGES = 100  # line item and membership pages followed at most
COMMENT_LIMIT = 1000
ASSERTION_LIFETIME = 60  # seconds a client assertion is valid
TOKEN_MARGIN = 60.0  # a cached token is fetched again this long before it expires


class LtiError(AutograderError):
    """PLATFORM.toml, the key, the roster or the platform stopped a publish."""


class LtiPublishIncomplete(LtiError):
    """Some scores were refused or are still pending: the message says which; rerun to retry."""

    exit_code = 4


class TokenRefused(LtiError):
    """The platform's token endpoint refused the client assertion (or the request)."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class AuthRejected(LtiError):
    """A service kept answering 401 after a fresh token."""

    def __init__(self, message: str, status: int = 401):
        super().__init__(message)
        self.status = status


class PlatformUnavailable(LtiError):
    """The platform could not be reached, or kept answering 429/5xx after every retry."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


# -- PLATFORM.toml ---------------------------------------------------------------------------------
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


def _url(value: str, where: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise LtiError(f"{where} must be an https:// URL, got {value!r}")
    if parts.scheme == "http" and not _is_loopback(parts.hostname):
        raise LtiError(f"{where} must use https (plain http only for 127.0.0.1/localhost), got {value!r}")
    return value


def parse_platform(data: Mapping[str, Any], source: Path) -> PlatformConfig:
    """Validate parsed PLATFORM.toml data; every error names the offending key."""
    where = str(source)
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
            _url(values[key], f"{where}: {key}")
    lineitem, lineitems_url, tag = values.get("lineitem"), values.get("lineitems_url"), values.get("tag")
    if lineitem and (lineitems_url or tag):
        raise LtiError(f"{where}: set either lineitem, or lineitems_url with tag, not both")
    if not lineitem and not (lineitems_url and tag):
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


# -- keys ------------------------------------------------------------------------------------------
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
    import base64

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


# -- HTTP ------------------------------------------------------------------------------------------
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
        """One logical request: retried on 429/5xx/connection errors, a fresh token once on 401."""
        policy = self.retry
        refreshed = False
        attempt = 0
        headers = dict(kwargs.pop("headers", {}))
        while True:
            attempt += 1
            if auth:
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
            if status == 401 and auth:
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
    _url(url, what)
    mine, theirs = urlsplit(reference), urlsplit(url)
    if (mine.scheme, mine.netloc) != (theirs.scheme, theirs.netloc):
        raise LtiError(
            f"{what} {url} is not on {mine.scheme}://{mine.netloc}: refusing to send the token there"
        )
    return url


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300]


# -- rosters ---------------------------------------------------------------------------------------

def read_roster(path: Path) -> dict[str, str]:
    """kit student id (casefolded) -> LTI user id, from a CSV with the header `student,lti_user_id`.

    UTF-8 with or without a byte-order mark; other columns are ignored; a row with an empty
    lti_user_id leaves that student unmatched.
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise LtiError(f"roster {path} not found") from None
    except UnicodeDecodeError:
        raise LtiError(f"roster {path} is not UTF-8 text") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = [h.strip().casefold() for h in (reader.fieldnames or [])]
    for needed in ROSTER_COLUMNS:
        if needed not in header:
            raise LtiError(
                f"roster {path} has no {needed!r} column: its header must be {','.join(ROSTER_COLUMNS)}"
            )
    reader.fieldnames = header
    mapping: dict[str, str] = {}
    for line, row in enumerate(reader, start=2):
        student = (row.get("student") or "").strip()
        if not student:
            continue
        if student_key(student) in mapping:
            raise LtiError(f"roster {path} line {line}: student {student!r} is listed twice")
        mapping[student_key(student)] = (row.get("lti_user_id") or "").strip()
    return {k: v for k, v in mapping.items() if v}


def roster_from_members(members: Iterable[Mapping[str, Any]], match: str) -> dict[str, str]:
    """kit student id (casefolded) -> LTI user id, from NRPS members: `match` field -> `user_id`.

    Members whose status is Deleted are left out; a value held by two members is ambiguous and
    matches neither.
    """
    if match not in NRPS_MATCHES:
        raise LtiError(f"nrps_match must be one of {', '.join(NRPS_MATCHES)}, got {match!r}")
    mapping: dict[str, str] = {}
    ambiguous: set[str] = set()
    for member in members:
        if str(member.get("status", "Active")) == "Deleted" or not member.get("user_id"):
            continue
        value = member.get(match)
        if not value:
            continue
        key = student_key(str(value))
        if key in mapping and mapping[key] != str(member["user_id"]):
            ambiguous.add(key)
        mapping[key] = str(member["user_id"])
    return {k: v for k, v in mapping.items() if k not in ambiguous}


# -- scores ----------------------------------------------------------------------------------------
def score_comment(result: SubmissionResult, label: str, max_score: float | None = None) -> str:
    """The learner-visible summary: the total and each task's points (no hidden check details)."""
    tasks = "; ".join(f"{t.task} {t.score:g}/{t.max_score:g}" for t in result.tasks)
    total = result.max_score if max_score is None else max_score
    text = f"{label}: {result.score:g}/{total:g}." + (f" {tasks}." if tasks else "")
    problem = str(result.problem or "").rstrip(".")
    if problem:
        text += f" Not graded: {problem}."
    return text if len(text) <= COMMENT_LIMIT else text[: COMMENT_LIMIT - 1] + "…"


def score_fingerprint(user_id: str, score: float, max_score: float, comment: str) -> str:
    """What a rerun compares: a different user id, score, maximum or comment means send again."""
    data = json.dumps([user_id, round(score, 6), round(max_score, 6), comment], ensure_ascii=False)
    return hashlib.sha256(data.encode()).hexdigest()


def score_body(user_id: str, score: float, max_score: float, comment: str, timestamp: str) -> dict[str, Any]:
    """The AGS score (application/vnd.ims.lis.v1.score+json) of a final autograder result."""
    return {
        "userId": user_id,
        "scoreGiven": round(score, 6),
        "scoreMaximum": round(max_score, 6),
        "comment": comment,
        "activityProgress": "Completed",
        "gradingProgress": "FullyGraded",
        "timestamp": timestamp,
    }


# -- the publish -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class PlannedScore:
    student: str
    user_id: str
    score: float
    max_score: float
    comment: str
    fingerprint: str
    reason: str  # new | changed | pending | refused

    def body(self, timestamp: str) -> dict[str, Any]:
        return score_body(self.user_id, self.score, self.max_score, self.comment, timestamp)


@dataclass
class PublishReport:
    """What a publish did (or, with dry_run, would do)."""

    assignment: str
    lineitem: str
    dry_run: bool = False
    planned: list[PlannedScore] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)  # student -> the platform's message
    pending: dict[str, str] = field(default_factory=dict)  # student -> why it is still pending
    up_to_date: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    token_requests: int = 0

    @property
    def complete(self) -> bool:
        return not self.refused and not self.pending

    def summary(self) -> str:
        if self.dry_run:
            return (f"dry run: would send {len(self.planned)} scores to {self.lineitem} "
                    f"({len(self.up_to_date)} up to date, {len(self.unmatched)} unmatched)")
        return (
            f"sent {len(self.sent)}, refused {len(self.refused)}, pending {len(self.pending)}, "
            f"up to date {len(self.up_to_date)}, unmatched {len(self.unmatched)} -> {self.lineitem}"
        )


def open_gradebook(out: Path) -> Gradebook:
    """The gradebook of a graded batch in `out` (the folder or the file), which must exist."""
    path = find_gradebook(out)
    if not path.is_file():
        raise LtiError(f"no gradebook at {path}: run `autograder grade SUBMISSIONS --out OUT` first")
    return Gradebook(path)


def _assignment_id(book: Gradebook, wanted: str | None) -> str:
    if wanted:
        return wanted
    known = book.assignments()
    if len(known) == 1:
        return known[0]
    raise LtiError(
        "which assignment? set assignment in PLATFORM.toml or pass --assignment "
        f"(the gradebook has: {', '.join(known) or 'none'})"
    )


def publish_lti(
    out: Path,
    config: PlatformConfig,
    *,
    roster: Path | None = None,
    assignment: str | None = None,
    dry_run: bool = False,
    retry: RetryPolicy | None = None,
    session: requests.Session | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> PublishReport:
    """Post the current score of every student of the graded batch in `out` to the platform.

    Raises LtiError for configuration problems found before anything is sent (and for a token
    refused while looking up the roster or the line item); scores the platform refused or that
    could not be sent are in the report (and in lti_publishes), not raised.
    """
    key = load_private_key(config.private_key)
    book = open_gradebook(out)
    client = AgsClient(config, key, retry=retry, session=session, sleep=sleep)
    try:
        aid = _assignment_id(book, assignment or config.assignment)
        results = book.current(aid)
        if not results:
            raise LtiError(f"{book.path} holds no graded submissions of assignment {aid!r}")
        log = PublishLog(book, create=not dry_run)  # a dry run writes nothing, not even the table
        report = _publish(client, log, config, results, aid, roster, dry_run)
        report.token_requests = client.token_requests
        return report
    except (TokenRefused, AuthRejected, PlatformUnavailable) as exc:
        raise LtiError(f"before any score was sent: {exc}") from None
    finally:
        client.close()
        book.close()


def _user_ids(client: AgsClient, config: PlatformConfig, roster: Path | None) -> dict[str, str]:
    if roster is not None:
        return read_roster(roster)
    if config.nrps_url:
        return roster_from_members(client.members(), config.nrps_match)
    raise LtiError(
        f"no roster: pass --roster ROSTER.csv (columns {','.join(ROSTER_COLUMNS)}) or set nrps_url in "
        f"{config.source}"
    )


def _publish(client: AgsClient, log: PublishLog, config: PlatformConfig, results: list[SubmissionResult],
             aid: str, roster: Path | None, dry_run: bool) -> PublishReport:
    label = config.label or aid
    user_ids = _user_ids(client, config, roster)
    lineitem = config.lineitem
    notes: list[str] = []
    if lineitem is None:
        assert config.tag
        lineitem = client.find_lineitem(config.tag)
        if lineitem is None and dry_run:
            notes.append(f"no line item tagged {config.tag!r} yet: a real run creates it")
        elif lineitem is None:
            max_score = max(r.max_score for r in results)
            lineitem = client.create_lineitem(config.tag, label, max_score, aid)
            notes.append(f"created line item {lineitem} (tag {config.tag!r}, maximum {max_score:g})")
    target = lineitem or f"<new line item tagged {config.tag!r}>"
    report = PublishReport(aid, target, dry_run=dry_run, notes=notes)
    latest = log.latest(aid, lineitem) if lineitem else {}
    class_max = max(r.max_score for r in results)
    for result in results:
        user_id = user_ids.get(student_key(result.student))
        if not user_id:
            report.unmatched.append(result.student)
            continue
        max_score = result.max_score or class_max  # nothing graded (no tasks): the assignment's maximum
        comment = score_comment(result, label, max_score)
        fingerprint = score_fingerprint(user_id, result.score, max_score, comment)
        previous = latest.get(result.student)
        if previous and previous.status == "sent" and previous.fingerprint == fingerprint:
            report.up_to_date.append(result.student)
            continue
        reason = "new" if previous is None else previous.status if previous.status != "sent" else "changed"
        report.planned.append(PlannedScore(result.student, user_id, result.score, max_score,
                                           comment, fingerprint, reason))
    if dry_run or not report.planned:
        return report
    assert lineitem is not None
    ids = log.queue(aid, lineitem, report.planned, latest)
    stop: tuple[str, str, int | None] | None = None  # (status, message, http status) for the rest
    for item in report.planned:
        row = ids[item.student]
        if stop:
            status, message, code = stop
            log.finish(row, status, message, code)
            (report.refused if status == "refused" else report.pending)[item.student] = message
            continue
        stamp = iso_timestamp()
        try:
            response = client.post_score(lineitem, item.body(stamp))
        except TokenRefused as exc:
            stop = ("refused", str(exc), exc.status)
        except AuthRejected as exc:
            stop = ("refused", str(exc), exc.status)
        except PlatformUnavailable as exc:
            if exc.status is None:  # unreachable: do not knock on a closed door for every student
                stop = ("pending", f"not sent: {exc}", None)
            else:
                log.finish(row, "pending", str(exc), exc.status, stamp)
                report.pending[item.student] = str(exc)
                continue
        else:
            if 200 <= response.status_code < 300:
                log.finish(row, "sent", platform_message(response), response.status_code, stamp)
                report.sent.append(item.student)
            else:
                message = platform_message(response)
                log.finish(row, "refused", message, response.status_code, stamp)
                report.refused[item.student] = message
            continue
        status, message, code = stop
        log.finish(row, status, message, code, stamp)
        (report.refused if status == "refused" else report.pending)[item.student] = message
    return report
