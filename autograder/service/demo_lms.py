"""The demo's stand-in LMS: it answers the tool's AGS passback as a platform would, and keeps what it got.

`serve --demo` has no LMS, yet its passback is the real one (passback.py, publish_scores, AgsClient):
an OAuth token by a client assertion signed with the demo tool's key, then one `POST {lineitem}/scores`
per student. Those requests go to `https://lms.demo.invalid` (a reserved name that never resolves) and
are answered in the process that sends them, by a requests transport adapter: the token endpoint
checks the assertion's signature against the tool's public key; the scores endpoint checks the bearer
token and the media type and records the score, with the moment it arrived, in DATA/demo-lms.sqlite.
The demo's stand-in LMS page (demo.py) reads that file, so it shows what every process sent
(`--workers`: the grading process sends, the web workers publish).
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jwt
import requests
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict

from autograder.platforms.lti.ags import ASSERTION_TYPE, SCORE_MEDIA_TYPE
from autograder.platforms.lti.config import PlatformConfig
from autograder.platforms.lti.keys import generate_key_pair, load_private_key, public_jwk
from autograder.service.settings import LaunchConfig

ORIGIN = "https://lms.demo.invalid"  # .invalid never resolves: nothing sent here can leave the machine
TOKEN_URL = f"{ORIGIN}/token"
CLIENT_ID = "demo-tool"
KEY_ID = "demo-tool-key"
TOKEN_SECONDS = 3600
SCHEMA = """
CREATE TABLE IF NOT EXISTS scores (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    received_at TEXT NOT NULL,
    lineitem TEXT NOT NULL,
    user_id TEXT NOT NULL,
    score_given REAL,
    score_maximum REAL,
    activity TEXT NOT NULL,
    grading TEXT NOT NULL,
    comment TEXT NOT NULL,
    timestamp TEXT NOT NULL
);
"""


def lineitem_url(assignment: str) -> str:
    """The stand-in's line item of an assignment: where a demo launch's scores are posted."""
    return f"{ORIGIN}/lineitems/{assignment}"


@dataclass(frozen=True)
class ReceivedScore:
    """One score the stand-in LMS was sent, as it arrived."""

    received_at: str
    lineitem: str
    user_id: str
    score_given: float | None
    score_maximum: float | None
    activity: str
    grading: str
    comment: str
    timestamp: str

    @property
    def assignment(self) -> str:
        return self.lineitem.rsplit("/", 1)[-1]


def _private_file(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def tool_key(data: Path) -> Path:
    """The demo tool's private key (made once per data folder, 0600): what its client assertions are
    signed with, as a registered tool's are with the key of `autograder lti keygen`."""
    path = data / "demo-tool.pem"
    if not path.exists():
        data.mkdir(parents=True, exist_ok=True)
        pem, _ = generate_key_pair(kid=KEY_ID)
        try:
            _private_file(path, pem)
        except FileExistsError:  # another process of this server made it first
            pass
    return path


def passback_config(data: Path) -> LaunchConfig:
    """The platform the demo's passback sends to: the stand-in, with the demo tool's key."""
    key = tool_key(data)
    platform = PlatformConfig(source=data / "demo-lms", issuer=ORIGIN, client_id=CLIENT_ID,
                              deployment_id="demo", token_url=TOKEN_URL, key_id=KEY_ID, private_key=key)
    jwks = {"keys": [public_jwk(load_private_key(key), KEY_ID)]}  # launches: never (no demo login)
    return LaunchConfig(platform, f"{ORIGIN}/auth", jwks)


class ScoreStore:
    """DATA/demo-lms.sqlite: the scores the stand-in LMS received, oldest first."""

    def __init__(self, data: Path):
        data.mkdir(parents=True, exist_ok=True)
        self.path = data / "demo-lms.sqlite"
        self.lock = threading.Lock()
        self.db = sqlite3.connect(self.path, timeout=60.0, check_same_thread=False)
        with self.lock, self.db:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.executescript(SCHEMA)
        os.chmod(self.path, 0o600)

    def add(self, lineitem: str, score: dict[str, Any]) -> None:
        def number(key: str) -> float | None:
            value = score.get(key)
            return float(value) if isinstance(value, int | float) else None

        row = (datetime.now(UTC).isoformat(timespec="seconds"), lineitem, str(score.get("userId", "")),
               number("scoreGiven"), number("scoreMaximum"), str(score.get("activityProgress", "")),
               str(score.get("gradingProgress", "")), str(score.get("comment", "")),
               str(score.get("timestamp", "")))
        with self.lock, self.db:
            self.db.execute("INSERT INTO scores (received_at, lineitem, user_id, score_given, score_maximum, "
                            "activity, grading, comment, timestamp) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", row)

    def scores(self, limit: int = 500) -> list[ReceivedScore]:
        """The newest `limit` scores, newest first."""
        with self.lock:
            rows = self.db.execute("SELECT received_at, lineitem, user_id, score_given, score_maximum, "
                                   "activity, grading, comment, timestamp FROM scores ORDER BY id DESC "
                                   "LIMIT ?", (limit,)).fetchall()
        return [ReceivedScore(*row) for row in rows]

    def close(self) -> None:
        self.db.close()


class StandInAdapter(BaseAdapter):
    """The stand-in LMS's two AGS endpoints, answering the tool's requests in its own process."""

    def __init__(self, data: Path):
        super().__init__()
        self.public_key = load_private_key(tool_key(data)).public_key()
        self.store = ScoreStore(data)
        self.tokens: set[str] = set()

    def send(self, request: requests.PreparedRequest, stream: bool = False, timeout: Any = None,
             verify: Any = True, cert: Any = None, proxies: Any = None) -> requests.Response:
        path = urlsplit(request.url or "").path
        raw = request.body
        body = raw.encode() if isinstance(raw, str) else raw if isinstance(raw, bytes) else b""
        if request.method == "POST" and request.url == TOKEN_URL:
            return self._token(request, body)
        if request.method == "POST" and path.startswith("/lineitems/") and path.endswith("/scores"):
            return self._score(request, body, f"{ORIGIN}{path.removesuffix('/scores')}")
        return _answer(request, 404, {"error": "not_found", "error_description": "the stand-in LMS has "
                                      "a token endpoint and line items' scores only"})

    def _token(self, request: requests.PreparedRequest, body: bytes) -> requests.Response:
        form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
        if form.get("client_assertion_type") != ASSERTION_TYPE:
            return _answer(request, 400, {"error": "invalid_request"})
        try:  # what a platform checks: the tool's signature, that it is for this token URL, not expired
            jwt.decode(form.get("client_assertion", ""), self.public_key, algorithms=["RS256"],
                       audience=TOKEN_URL, issuer=CLIENT_ID)
        except jwt.PyJWTError as exc:
            return _answer(request, 401, {"error": "invalid_client", "error_description": str(exc)})
        token = secrets.token_urlsafe(24)
        self.tokens.add(token)
        return _answer(request, 200, {"access_token": token, "token_type": "Bearer",
                                      "expires_in": TOKEN_SECONDS, "scope": form.get("scope", "")})

    def _score(self, request: requests.PreparedRequest, body: bytes, lineitem: str) -> requests.Response:
        if str(request.headers.get("Authorization", "")).removeprefix("Bearer ") not in self.tokens:
            return _answer(request, 401, {"error": "invalid_token"})
        if str(request.headers.get("Content-Type", "")) != SCORE_MEDIA_TYPE:
            return _answer(request, 415, {"error": f"a score is {SCORE_MEDIA_TYPE}"})
        try:
            score = json.loads(body)
        except ValueError:
            return _answer(request, 400, {"error": "the score is not JSON"})
        if not isinstance(score, dict) or not score.get("userId"):
            return _answer(request, 400, {"error": "a score needs its userId"})
        self.store.add(lineitem, score)
        return _answer(request, 200, {})

    def close(self) -> None:
        self.store.close()


def _answer(request: requests.PreparedRequest, status: int, data: dict[str, Any]) -> requests.Response:
    response = requests.Response()
    response.status_code = status
    response.reason = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
                       415: "Unsupported Media Type"}.get(status, "")
    response.headers = CaseInsensitiveDict({"Content-Type": "application/json"})
    response._content = json.dumps(data).encode()
    response.url = request.url or ""
    response.request = request
    response.encoding = "utf-8"
    return response


def session_for(data: Path) -> requests.Session:
    """A requests session whose calls to the stand-in LMS are answered by it (and nothing else is)."""
    session = requests.Session()
    session.mount(f"{ORIGIN}/", StandInAdapter(data))
    return session
