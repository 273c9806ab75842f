"""A local LTI 1.3 platform for the tests: `lti1p3platform` (PyPI) behind a stdlib HTTP server.

It listens on 127.0.0.1 only, in a daemon thread that stops itself after `max_lifetime` seconds.

What the library (lti1p3platform 0.1.8) does here, unchanged:
- the token endpoint: `LTI1P3PlatformConfAbstract.get_access_token` checks the form fields
  (grant_type, client_assertion_type, client_assertion, scope) and the client_credentials grant,
  verifies the client assertion's RS256 signature against the tool's registered JWK chosen by
  the JWT's `kid` and `alg` (jwcrypto -> PEM -> PyJWT, which also rejects an expired `exp`),
  keeps only the scopes it knows, and issues a bearer JWT signed with the platform key (3600 s);
- the services: `AssignmentsGradesService` (line items, scores, results) and
  `NamesRoleProvisioningService` (context membership) handlers, whose `authenticate` decorator
  checks the Authorization header, the method, and the bearer token
  (`LTI1P3PlatformConfAbstract.validate_token`: platform signature, iss, exp, granted scopes);
  `UPDATE_SCORE_STATUSCODE` maps a score's outcome to 200/201/202/403/409.

What this harness adds (the library leaves it to the host framework, or skips it in 0.1.8):
- the HTTP server, the routes and the adapters between HTTP and the library's Request/Response
  (a paged result `{content, has_next, next}` becomes a JSON array or object and a
  `Link: <...>; rel="next"` header);
- client assertion claims that 0.1.8 does not check (it decodes with verify_aud off): iss, sub,
  aud, iat, exp and jti present; iss == sub == client_id; the token URL in aud; jti not replayed;
- turning the library's exceptions into HTTP answers: a refused assertion is 401
  `{"error": "invalid_client", "error_description": ...}` (RFC 6749 §5.2), a refused bearer token
  is 401 (the library raises instead of answering for an invalid or expired token);
- score validation (the library's handler has "TODO: validate score"): Content-Type
  application/vnd.ims.lis.v1.score+json, userId, activityProgress and gradingProgress (values from
  the library's enums), timestamp (ISO 8601 with fractional seconds and an offset), scoreMaximum
  whenever scoreGiven; a timestamp older than the stored one is the library's OLD_TIMESTAMP (409);
- storage: line items, scores and members live in memory (the library's storage is abstract);
- the deep-linking return URL (POST /deep_link_return, lti_deep_linking.py): a tool's response
  checked as Canvas and Moodle check it, and the links and line items they would make of it;
- faults for the tests: scripted answers (`fail`), revoking every token issued so far
  (`expire_tokens`), and going down (`go_down`: drop connections, then close the port).
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from lti1p3platform.exceptions import (
    LineItemNotFoundException,
    LtiException,
    LtiServiceException,
    MissingRequiredClaim,
    UnsupportedGrantType,
)
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.membership import Context
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request, TRequest
from lti1p3platform.response import Response
from lti1p3platform.score import ActivityProgress, GradeProgress, UpdateScoreStatus
from lti1p3platform.service_connector import (
    AssignmentsGradesService,
    NamesRoleProvisioningService,
    TPage,
)
from lti_deep_linking import DeepLinkingState, Refused, create_links, verified

SCORE_MEDIA_TYPE = "application/vnd.ims.lis.v1.score+json"
ASSERTION_CLAIMS = ("iss", "sub", "aud", "iat", "exp", "jti")


# -- the library's platform configuration, with the assertion checks 0.1.8 leaves out ---------------
class HarnessPlatformConf(LTI1P3PlatformConfAbstract):
    """One registration (one tool); the tool's JWKS is set directly, never fetched."""

    def init_platform_config(self, **kwargs: Any) -> None:
        self._registration = kwargs["registration"]
        self.token_url: str = kwargs["token_url"]
        self.seen_jti: set[str] = set()
        self.revoked: set[str] = set()
        self.assertions: list[dict[str, Any]] = []
        self.checking_assertions = True  # off while a deep-linking response (no assertion) is checked

    def get_registration_by_params(self, **kwargs: Any) -> Registration:
        return self._registration  # type: ignore[return-value]

    def tool_validate_and_decode(self, jwt_token_string: str) -> dict[str, Any]:
        claims = super().tool_validate_and_decode(jwt_token_string)  # signature, kid, alg, exp
        if not self.checking_assertions:
            return claims
        missing = [c for c in ASSERTION_CLAIMS if c not in claims]
        if missing:
            raise LtiException(f"client assertion lacks {', '.join(missing)}")
        client_id = self._registration.get_client_id()  # type: ignore[union-attr]
        if claims["iss"] != client_id or claims["sub"] != client_id:
            raise LtiException("client assertion iss and sub must both be the client_id")
        audience = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        if self.token_url not in audience:
            raise LtiException(f"client assertion aud must name the token URL {self.token_url}")
        if claims["jti"] in self.seen_jti:
            raise LtiException("client assertion jti was already used")
        self.seen_jti.add(claims["jti"])
        self.assertions.append({"header": jwt.get_unverified_header(jwt_token_string), "claims": claims})
        return claims

    def validate_token(self, token: str, allowed_scopes: list[str] | None = None,
                       audience: str | None = None) -> bool:
        if token in self.revoked:
            raise LtiException("Token expired")
        return super().validate_token(token, allowed_scopes, audience)


class HarnessRequest(Request):
    def build_metadata(self, request: Any) -> TRequest:
        return request  # type: ignore[no-any-return]


# -- in-memory storage behind the library's abstract services --------------------------------------
@dataclass
class Store:
    base_url: str
    lineitems: dict[str, dict[str, Any]] = field(default_factory=dict)  # number -> line item
    scores: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # number -> user -> score
    members: list[dict[str, Any]] = field(default_factory=list)
    page_size: int = 2
    filter_lineitems: bool = True  # False: ignore ?tag= and ?resource_id= (all pages to search)

    def lineitem_url(self, number: str) -> str:
        return f"{self.base_url}/lineitems/{number}"

    def add_lineitem(self, data: dict[str, Any]) -> dict[str, Any]:
        number = str(len(self.lineitems) + 1)
        item = {**data, "id": self.lineitem_url(number)}
        self.lineitems[number] = item
        self.scores[number] = {}
        return item


def _page(items: list[Any], page: int, limit: int) -> TPage:
    start = (page - 1) * limit
    return {"content": items[start : start + limit], "has_next": start + limit < len(items), "next": None}


class HarnessAgs(AssignmentsGradesService):
    def __init__(self, request: Request, conf: HarnessPlatformConf, store: Store):
        super().__init__(request, conf, f"{store.base_url}/lineitems", allow_creating_lineitems=True)
        self.store = store

    def find_lineitems(self, page: int = 1, limit: int | None = None, line_item_id: str | None = None,
                       resource_link_id: str | None = None, resource_id: str | None = None,
                       tag: str | None = None) -> TPage:
        items = [
            i
            for i in self.store.lineitems.values()
            if not self.store.filter_lineitems
            or (
                (tag is None or i.get("tag") == tag)
                and (resource_id is None or i.get("resourceId") == resource_id)
            )
        ]
        return _page(items, int(page), int(limit or self.store.page_size))

    def find_lineitem(self, line_item_id: str) -> Any:
        if line_item_id not in self.store.lineitems:
            raise LineItemNotFoundException(line_item_id)
        return self.store.lineitems[line_item_id]

    def create_lineitem(self, creation_data: Any) -> Any:
        if not isinstance(creation_data, dict) or not creation_data.get("label"):
            raise LtiServiceException("a line item needs a label", 400)
        score_maximum = creation_data.get("scoreMaximum")
        if (
            isinstance(score_maximum, bool)
            or not isinstance(score_maximum, int | float)
            or score_maximum <= 0
        ):
            raise LtiServiceException("scoreMaximum must be a number > 0", 400)
        return self.store.add_lineitem(dict(creation_data))

    def update_lineitem(self, update_data: Any) -> Any:
        number = str(update_data["id"])
        item = {**self.find_lineitem(number), **update_data, "id": self.store.lineitem_url(number)}
        self.store.lineitems[number] = item
        return item

    def delete_lineitem(self, line_item_id: str) -> None:
        self.find_lineitem(line_item_id)
        del self.store.lineitems[line_item_id]

    def update_score(self, line_item_id: str, score: Any) -> UpdateScoreStatus:
        self.find_lineitem(line_item_id)
        stamp = _validate_score(score)
        stored = self.store.scores[line_item_id]
        previous = stored.get(str(score["userId"]))
        if previous and datetime.fromisoformat(previous["timestamp"]) > stamp:
            return UpdateScoreStatus.OLD_TIMESTAMP
        stored[str(score["userId"])] = dict(score)
        return UpdateScoreStatus.SUCCESS if previous else UpdateScoreStatus.CREATED

    def get_results(self, line_item_id: str, page: int = 1, limit: int | None = None,
                    user_id: str | None = None) -> TPage:
        self.find_lineitem(line_item_id)
        results = [
            {"id": f"{self.store.lineitem_url(line_item_id)}/results/{uid}", "userId": uid,
             "resultScore": s.get("scoreGiven"), "resultMaximum": s.get("scoreMaximum"),
             "comment": s.get("comment"), "scoreOf": self.store.lineitem_url(line_item_id)}
            for uid, s in self.store.scores[line_item_id].items() if user_id is None or uid == user_id
        ]
        return _page(results, int(page), int(limit or 100))


def _validate_score(score: Any) -> datetime:
    if not isinstance(score, dict):
        raise LtiServiceException("the score must be a JSON object", 400)
    for required in ("userId", "activityProgress", "gradingProgress", "timestamp"):
        if score.get(required) in (None, ""):
            raise LtiServiceException(f"{required} is required", 400)
    if score["activityProgress"] not in {p.value for p in ActivityProgress}:
        raise LtiServiceException(f"unknown activityProgress {score['activityProgress']!r}", 400)
    if score["gradingProgress"] not in {p.value for p in GradeProgress}:
        raise LtiServiceException(f"unknown gradingProgress {score['gradingProgress']!r}", 400)
    if "scoreGiven" in score:
        if "scoreMaximum" not in score:
            raise LtiServiceException("scoreMaximum must be present when scoreGiven is", 400)
        for key in ("scoreGiven", "scoreMaximum"):
            value = score[key]
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise LtiServiceException(f"{key} must be a number >= 0", 400)
    text = str(score["timestamp"])
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        raise LtiServiceException(f"timestamp {text!r} is not ISO 8601", 400) from None
    if stamp.tzinfo is None or "." not in text:
        raise LtiServiceException(f"timestamp {text!r} needs fractional seconds and an offset", 400)
    return stamp


class HarnessNrps(NamesRoleProvisioningService):
    def __init__(self, request: Request, conf: HarnessPlatformConf, store: Store):
        super().__init__(request, conf, f"{store.base_url}/memberships")
        self.store = store

    def get_member_data_page(self, page: int = 1, limit: int | None = None, role: str | None = None,
                             since: str | None = None) -> TPage:
        members = [m for m in self.store.members if role is None or role in m.get("roles", [])]
        return _page(members, int(page), int(limit or len(members) or 1))

    def get_context_by_id(self) -> Context:
        return Context(id="course-1", label="PT101", title="PyTorch 101")


# -- faults ------------------------------------------------------------------------------------------
@dataclass
class Fault:
    path_suffix: str
    status: int
    times: int
    retry_after: str | None = None
    message: str = "scripted failure"


@functools.cache
def platform_key_pair() -> tuple[str, str]:
    """The platform's signing key (PEM private, PEM public): one per test process, generating is slow."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = serialization.Encoding.PEM
    private_pem = key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    public_pem = key.public_key().public_bytes(pem, serialization.PublicFormat.SubjectPublicKeyInfo)
    return private_pem.decode(), public_pem.decode()


# -- the HTTP server ---------------------------------------------------------------------------------
class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    platform: LocalPlatform


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.server.platform.handle(self)

    do_POST = do_PUT = do_DELETE = do_GET


@dataclass
class Answer:
    status: int
    body: Any
    media_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


class LocalPlatform:
    """An LTI 1.3 platform on 127.0.0.1 with AGS and NRPS; use as a context manager."""

    def __init__(self, tool_jwk: dict[str, Any], *, client_id: str = "autograder-tool",
                 issuer: str = "https://platform.test", deployment_id: str = "deployment-1",
                 max_lifetime: float = 120.0, port: int = 0):
        self.client_id, self.issuer, self.deployment_id = client_id, issuer, deployment_id
        self.max_lifetime = max_lifetime
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()
        self._down = False
        self._closer: threading.Thread | None = None
        self.port = port
        self.start()
        private_pem, public_pem = platform_key_pair()
        self.registration = (
            Registration().set_iss(issuer).set_client_id(client_id).set_deployment_id(deployment_id)
            .set_platform_private_key(private_pem).set_platform_public_key(public_pem)
            .set_tool_key_set({"keys": [tool_jwk]})
        )
        self.conf = HarnessPlatformConf(registration=self.registration, token_url=self.token_url)
        self.store = Store(self.base_url)
        self.faults: list[Fault] = []
        self.requests: list[tuple[str, str, int]] = []  # (method, path, status) of every answer
        self.score_posts: list[dict[str, Any]] = []  # every score the platform accepted, in order
        self.score_content_types: list[str] = []
        self.token_requests = 0
        self.issued_tokens: list[str] = []
        self.on_score: Callable[[LocalPlatform, int], None] | None = None
        self.deep_linking = DeepLinkingState()
        self.conf.set_accepted_deeplinking_types(["ltiResourceLink"])

    # addresses
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def token_url(self) -> str:
        return f"{self.base_url}/token"

    @property
    def lineitems_url(self) -> str:
        return f"{self.base_url}/lineitems"

    @property
    def deep_link_return_url(self) -> str:
        return f"{self.base_url}/deep_link_return"

    @property
    def nrps_url(self) -> str:
        return f"{self.base_url}/memberships"

    # life
    def start(self) -> None:
        """Listen (again, on the same port once one was chosen); stop by itself after max_lifetime."""
        closer, self._closer = self._closer, None
        if closer is not None:
            closer.join(timeout=5)  # a go_down still closing the port
        if self._server is not None:
            return
        server = _Server(("127.0.0.1", self.port), _Handler)
        server.platform = self
        self.port = server.server_address[1]
        self._server, self._down = server, False
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"lti-platform-{self.port}", daemon=True)
        self._thread.start()
        self._timer = threading.Timer(self.max_lifetime, self.stop)
        self._timer.daemon = True
        self._timer.start()

    def stop(self) -> None:
        """Close the port: connections are refused from now on."""
        server, thread, timer = self._server, self._thread, self._timer
        self._server = self._thread = self._timer = None
        if timer is not None and timer is not threading.current_thread():
            timer.cancel()
        if server is not None:
            server.shutdown()
            server.server_close()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)

    @property
    def running(self) -> bool:
        return self._server is not None

    def __enter__(self) -> LocalPlatform:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # faults
    def fail(self, path_suffix: str, status: int, times: int = 1, retry_after: str | None = None) -> None:
        """Answer the next `times` requests whose path ends with `path_suffix` with `status`."""
        self.faults.append(Fault(path_suffix, status, times, retry_after))

    def expire_tokens(self) -> None:
        """Every token issued so far is now expired (the tool's cache does not know); new ones are fine."""
        self.conf.revoked.update(self.issued_tokens)

    def go_down(self) -> None:
        """From now on drop every connection unanswered; close the port in the background."""
        self._down = True
        self._closer = threading.Thread(target=self.stop, daemon=True)
        self._closer.start()

    # data
    def add_lineitem(self, label: str, score_maximum: float, tag: str | None = None) -> str:
        data: dict[str, Any] = {"label": label, "scoreMaximum": score_maximum}
        if tag:
            data["tag"] = tag
        return str(self.store.add_lineitem(data)["id"])

    def scores(self, lineitem_url: str) -> dict[str, dict[str, Any]]:
        """user id -> the latest score the platform stored for the line item."""
        return self.store.scores[lineitem_url.rstrip("/").rsplit("/", 1)[1]]

    def add_member(self, user_id: str, **fields: Any) -> None:
        self.store.members.append(
            {
                "user_id": user_id,
                "roles": fields.pop("roles", ["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"]),
                **fields,
            }
        )

    # requests
    def handle(self, http: _Handler) -> None:
        if self._down:
            http.close_connection = True
            return  # no answer: the client sees the connection close
        with self._lock:
            answer = self._answer(http)
        self.requests.append((http.command, urlsplit(http.path).path, answer.status))
        body = b"" if answer.body is None else json.dumps(answer.body).encode()
        http.send_response(answer.status)
        http.send_header("Content-Type", answer.media_type)
        http.send_header("Content-Length", str(len(body)))
        for name, value in answer.headers.items():
            http.send_header(name, value)
        http.end_headers()
        http.wfile.write(body)

    def _answer(self, http: _Handler) -> Answer:
        parts = urlsplit(http.path)
        path = parts.path.rstrip("/")
        length = int(http.headers.get("Content-Length") or 0)
        raw = http.rfile.read(length) if length else b""
        for fault in self.faults:
            if fault.times > 0 and path.endswith(fault.path_suffix):
                fault.times -= 1
                headers = {"Retry-After": fault.retry_after} if fault.retry_after else {}
                return Answer(fault.status, {"error": fault.message}, headers=headers)
        if path == "/token" and http.command == "POST":
            return self._token(http, raw)
        if path == "/deep_link_return" and http.command == "POST":
            return self._deep_link_return(raw)
        if path == "/jwks" and http.command == "GET":
            return Answer(200, {"keys": self.registration.get_jwks()})
        content_type = (http.headers.get("Content-Type") or "").split(";")[0].strip()
        try:
            data = json.loads(raw) if raw else None
        except ValueError:
            return Answer(400, {"error": "the body is not JSON"})
        request = HarnessRequest({
            "method": http.command, "form_data": {}, "get_data": _query(parts.query),
            "headers": {k: v for k, v in http.headers.items()}, "content_type": content_type,
            "path": path, "json": data,
        })
        segments = path.strip("/").split("/")
        try:
            if segments[0] == "memberships" and len(segments) == 1:
                nrps = HarnessNrps(request, self.conf, self.store)
                return _from_library(nrps.handle_resp(nrps.handle_get_members))
            if segments[0] != "lineitems":
                return Answer(404, {"error": f"no such endpoint {path}"})
            ags = HarnessAgs(request, self.conf, self.store)
            if len(segments) == 1:
                handler = ags.handle_get_lineitems if http.command == "GET" else ags.handle_create_lineitem
                return _from_library(ags.handle_resp(handler))
            number = segments[1]
            if len(segments) == 2:
                handlers = {"PUT": ags.handle_update_lineitem, "DELETE": ags.handle_delete_lineitem}
                handler = handlers.get(http.command, ags.handle_get_lineitem)
                return _from_library(ags.handle_resp(handler, line_item_id=number))
            if segments[2:] == ["scores"]:
                return self._score(ags, request, number, content_type)
            if segments[2:] == ["results"]:
                return _from_library(ags.handle_resp(ags.handle_get_results, line_item_id=number))
            return Answer(404, {"error": f"no such endpoint {path}"})
        except (LtiException, jwt.PyJWTError) as exc:  # an invalid or expired bearer token
            return Answer(
                401, {"error": "invalid_token", "error_description": str(exc) or type(exc).__name__}
            )

    def _token(self, http: _Handler, raw: bytes) -> Answer:
        self.token_requests += 1
        if not (http.headers.get("Content-Type") or "").startswith("application/x-www-form-urlencoded"):
            return Answer(400, {"error": "invalid_request", "error_description": "send a form"})
        form = dict(parse_qsl(raw.decode(), keep_blank_values=True))
        try:
            token = self.conf.get_access_token(form)
        except MissingRequiredClaim as exc:
            return Answer(400, {"error": "invalid_request", "error_description": str(exc)})
        except UnsupportedGrantType:
            return Answer(400, {"error": "unsupported_grant_type"})
        except (LtiException, jwt.PyJWTError, AssertionError) as exc:
            why = f"client assertion refused: {exc or type(exc).__name__}"
            return Answer(401, {"error": "invalid_client", "error_description": why})
        self.issued_tokens.append(token["access_token"])
        # the library's tokens carry no jti: one issued in the same second as a revoked one is the
        # same string, and it is a fresh token all the same
        self.conf.revoked.discard(token["access_token"])
        return Answer(200, dict(token))

    def _deep_link_return(self, raw: bytes) -> Answer:
        """The browser posts the tool's response (form field JWT): made into links, or refused (400)."""
        form = dict(parse_qsl(raw.decode(), keep_blank_values=True))
        try:
            claims, items = verified(self, form.get("JWT", ""))
        except Refused as refused:
            self.deep_linking.refusals.append(str(refused))
            return Answer(400, {"error": str(refused)})
        self.deep_linking.responses.append(claims)
        return Answer(200, {"links": [vars(link) for link in create_links(self, items)]})

    def _score(self, ags: HarnessAgs, request: HarnessRequest, number: str, content_type: str) -> Answer:
        if content_type != SCORE_MEDIA_TYPE:
            return Answer(415, {"error": f"Content-Type must be {SCORE_MEDIA_TYPE}, got {content_type!r}"})
        answer = _from_library(ags.handle_resp(ags.handle_update_score, line_item_id=number))
        if answer.status < 300:
            self.score_posts.append(dict(request.json))
            self.score_content_types.append(content_type)
            if self.on_score is not None:
                self.on_score(self, len(self.score_posts))
        return answer


def _query(query: str) -> dict[str, Any]:
    data: dict[str, Any] = dict(parse_qsl(query))
    for key in ("page", "limit"):
        if key in data:
            data[key] = int(data[key])
    return data


def _from_library(response: Response) -> Answer:
    """The library's Response as HTTP: errors as {"error": ...}, pages as a body plus a Link header."""
    if response.code >= 400:
        return Answer(response.code, {"error": response.message})
    result = response.result
    headers: dict[str, str] = {}
    if isinstance(result, dict) and "content" in result and "has_next" in result:  # a TPage
        if result.get("next"):
            headers["Link"] = f'<{result["next"]}>; rel="next"'
        result = result["content"]
    elif isinstance(result, dict) and "next" in result:  # a membership container
        result = dict(result)
        headers["Link"] = f'<{result.pop("next")}>; rel="next"'
    body = {"message": response.message} if result is None else result
    return Answer(response.code, body, response.media_type, headers)
