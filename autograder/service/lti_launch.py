"""LTI 1.3 on the tool side: OIDC login initiation and resource-link launches, through PyLTI1p3.

PyLTI1p3 (contrib.flask) checks a launch's state against its cookie, the id_token's RS256
signature against the platform's keys (configured inline: `key_set`, never fetched), exp and iat
(PyJWT), the issuer and client id (aud) against the registration, the deployment id, and that the
nonce is one its login issued in this browser session. It does not refuse a nonce seen before (it
keeps it after a launch), so the tool records every nonce it accepted (table lti_nonces) and
refuses a replayed launch. A deep-linking request is checked the same way (`checked`), then
answered by deep_linking.py.
"""

from __future__ import annotations

import re
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from flask import Response
from pylti1p3.contrib.flask.message_launch import FlaskMessageLaunch
from pylti1p3.contrib.flask.oidc_login import FlaskOIDCLogin
from pylti1p3.contrib.flask.request import FlaskRequest
from pylti1p3.exception import LtiException
from pylti1p3.tool_config.dict import ToolConfDict

from autograder.platforms.lti.errors import LtiError
from autograder.service.settings import LaunchConfig
from autograder.submissions.students import student_id

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
STAFF_ROLES = ("membership#Instructor", "membership#Administrator", "membership#ContentDeveloper",
               "membership/Instructor#TeachingAssistant", "institution/person#Administrator",
               "system/person#Administrator")

DEFAULT_LOCALES = {"en": "en-GB", "bn": "bn-BD"}
LOCALE = re.compile(r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8}){0,3}$")

NONCE_SCHEMA = """
CREATE TABLE IF NOT EXISTS lti_nonces (nonce TEXT PRIMARY KEY, expires REAL NOT NULL);
"""


class LaunchRefused(LtiError):
    """A login or launch that the tool does not accept; the message says why (never a secret)."""

    exit_code = 2


@dataclass(frozen=True)
class Launch:
    """Who launched the tool, for which assignment, in which language: what a session holds."""

    student: str  # the kit's student id: the platform's person sourcedid, else the LTI user id (sub)
    user_id: str  # the LTI user id (sub): whom AGS scores are for
    name: str
    assignment: str
    lang: str  # bn | en
    instructor: bool
    lineitem: str = ""  # the AGS line item of this resource link ("" without AGS)
    demo: bool = False
    locale: str = ""  # the launch's locale (BCP 47, e.g. bn-BD): how the page writes times
    context: str = ""  # the course's title, as the LMS names it
    assignment_from: str = ""  # who named the assignment: link (its custom parameter), platform, kit

    def as_session(self) -> dict[str, Any]:
        return {"student": self.student, "user_id": self.user_id, "name": self.name,
                "assignment": self.assignment, "lang": self.lang, "instructor": self.instructor,
                "lineitem": self.lineitem, "demo": self.demo, "locale": self.locale, "context": self.context,
                "assignment_from": self.assignment_from}

    @classmethod
    def from_session(cls, data: Any) -> Launch | None:
        if not isinstance(data, dict):
            return None
        try:
            return cls(str(data["student"]), str(data["user_id"]), str(data["name"]), str(data["assignment"]),
                       str(data["lang"]), bool(data["instructor"]), str(data["lineitem"]), bool(data["demo"]),
                       str(data.get("locale", "")), str(data.get("context", "")),
                       str(data.get("assignment_from", "")))
        except KeyError:
            return None

    @property
    def time_locale(self) -> str:
        """The locale the page writes times in: the launch's when it is of the page's language."""
        return self.locale if language_of(self.locale) == self.lang and LOCALE.match(self.locale) else \
            DEFAULT_LOCALES[self.lang]


def tool_conf(config: LaunchConfig) -> ToolConfDict:
    """PyLTI1p3's registration of the one platform, with its keys inline."""
    platform = config.platform
    conf = ToolConfDict({platform.issuer: [{
        "default": True,
        "client_id": platform.client_id,
        "auth_login_url": config.auth_login_url,
        "auth_token_url": platform.token_url,
        "auth_audience": platform.audience,
        "key_set_url": None,
        "key_set": config.platform_jwks,  # type: ignore[typeddict-item]
        "deployment_ids": [platform.deployment_id],
    }]})
    conf.set_private_key(platform.issuer, platform.private_key.read_text(encoding="utf-8"),
                         client_id=platform.client_id)
    return conf


def login(config: LaunchConfig, launch_url: str, texts: dict[str, str]) -> Response:
    """Answer an OIDC login initiation: a redirect to the platform's authorization endpoint.

    First a page that checks cookies work in the LMS's frame (PyLTI1p3's check); where the
    browser blocks them, it offers to open the tool in a new window, where they are first-party."""
    request = FlaskRequest(request_is_secure=True)  # cookies SameSite=None; Secure, as in an LMS frame
    try:
        oidc = FlaskOIDCLogin(request, tool_conf(config))
        oidc.enable_check_cookies(main_msg=texts.get("cookies_main"), click_msg=texts.get("cookies_click"),
                                  loading_msg=texts.get("cookies_loading"))
        return oidc.redirect(launch_url)  # type: ignore[no-any-return]
    except LtiException as exc:
        raise LaunchRefused(f"login refused: {exc}") from None


def checked(config: LaunchConfig, nonces: sqlite3.Connection) -> tuple[FlaskMessageLaunch, dict[str, Any]]:
    """The message the LMS posted, checked (see the module's docstring), and its claims; its nonce is
    spent from now on."""
    request = FlaskRequest(request_is_secure=True)
    message = FlaskMessageLaunch(request, tool_conf(config))
    try:
        data: dict[str, Any] = dict(message.get_launch_data())
    except Exception as exc:  # noqa: BLE001  PyLTI1p3's bare Exception: unknown issuer or client id (aud)
        raise LaunchRefused(f"launch refused: {exc}") from None
    _first_use(nonces, str(data.get("nonce", "")), float(data.get("exp", time.time() + 600)))
    return message, data


def resource_launch(message: FlaskMessageLaunch, data: dict[str, Any], config: LaunchConfig,
                    known: set[str]) -> Launch:
    """Who a checked message launches the tool for; anything but a resource-link launch is refused."""
    if not message.is_resource_launch():
        raise LaunchRefused("launch refused: only resource-link and deep-linking launches open this tool")
    return identify(data, config, known)


def _first_use(db: sqlite3.Connection, nonce: str, expires: float) -> None:
    with db:
        db.executescript(NONCE_SCHEMA)
        db.execute("DELETE FROM lti_nonces WHERE expires < ?", (time.time() - 3600,))
        try:
            db.execute("INSERT INTO lti_nonces (nonce, expires) VALUES (?, ?)", (nonce, expires))
        except sqlite3.IntegrityError:
            raise LaunchRefused("launch refused: this launch was used before (replayed nonce)") from None


def identify(data: dict[str, Any], config: LaunchConfig, known: set[str]) -> Launch:
    """The launch a checked message's claims describe (the assignment: the link's, else platform.toml's)."""
    sub = str(data.get("sub") or "")
    if not sub:
        raise LaunchRefused("launch refused: it names no user (sub); anonymous launches cannot submit")
    lis = data.get(CLAIM + "lis") or {}
    student = str(lis.get("person_sourcedid") or "") if isinstance(lis, dict) else ""
    custom = data.get(CLAIM + "custom") or {}
    wanted = str(custom.get("assignment") or "") if isinstance(custom, dict) else ""
    assignment = wanted or config.assignment or ""
    named_by = "link" if wanted else "platform" if assignment else ""
    if assignment and assignment not in known:
        raise LaunchRefused(f"launch refused: assignment {assignment!r} is not in this kit's grading.toml "
                            f"(it has: {', '.join(sorted(known))})")
    presentation = data.get(CLAIM + "launch_presentation") or {}
    locale = str(presentation.get("locale") or "") if isinstance(presentation, dict) else ""
    roles = [str(r) for r in data.get(CLAIM + "roles") or []]
    ags = data.get(AGS_CLAIM) or {}
    lineitem = str(ags.get("lineitem") or "") if isinstance(ags, dict) else ""
    name = str(data.get("name") or data.get("given_name") or student or sub)
    context = data.get(CLAIM + "context") or {}
    course = str(context.get("title") or context.get("label") or "") if isinstance(context, dict) else ""
    return Launch(student_id(student or sub), sub, name, assignment, language_of(locale),
                  any(r.endswith(STAFF_ROLES) for r in roles), lineitem,
                  locale=locale.replace("_", "-"), context=course, assignment_from=named_by)


def language_of(locale: str) -> str:
    """`bn`, `bn-BD`, `bn_IN` -> bn; anything else -> en."""
    return "bn" if locale.lower().replace("_", "-").split("-")[0] == "bn" else "en"
