"""The LMS side of a launch for the service's tests: lti1p3platform's OIDC login and launch messages.

The platform (tests/platforms/lti_platform.py LocalPlatform: lti1p3platform behind a server on
127.0.0.1, with its token endpoint and AGS) is also the one the tool sends scores to. What the
library does here, unchanged: the third-party login initiation URL (`OIDCLoginAbstract.
prepare_preflight_url`), checking the tool's authorization request (`validate_preflight_response`:
nonce, state, redirect_uri, client_id) and building and signing the id_token
(`LTIAdvantageMessageLaunchAbstract`: iss, aud, azp, deployment, target link, nonce, iat, exp, the
user, roles, resource link, custom and AGS claims), and for a deep-linking request its
LtiDeepLinkingRequest message with the deep_linking_settings claim (`set_dl`). What this adds: the
browser's part (following the tool's redirects with a cookie jar, posting the form), and the
tampered tokens the tests need.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import jwt
import requests
from browser import Browser
from cryptography.hazmat.primitives.asymmetric import rsa

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "platforms"))

from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti_platform import HarnessRequest, LocalPlatform, platform_key_pair

CLIENT_ID = "autograder-tool"
KEY_ID = "tool-key-1"
CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"


class _Login(OIDCLoginAbstract):
    def set_lti_message_hint(self, **kwargs: Any) -> None:
        self._lti_message_hint = kwargs["hint"]

    def get_redirect(self, url: str) -> str:
        return url


class _Launch(LTIAdvantageMessageLaunchAbstract):
    def render_launch_form(self, launch_data: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return launch_data  # the auto-submitting form's fields: launch_url, id_token, state


@dataclass
class Person:
    """An LMS user: their LTI user id, sourcedid (the kit's student id), roles and locale."""

    user_id: str
    sourcedid: str
    roles: list[str] = field(default_factory=lambda: [LEARNER])
    locale: str = "en-US"
    name: str = ""
    email: str = ""
    course: str = "PyTorch 101"


@dataclass
class Form:
    """The launch form the platform's page posts to the tool (its fields and where)."""

    launch_url: str
    id_token: str
    state: str

    def claims(self) -> dict[str, Any]:
        return dict(jwt.decode(self.id_token, options={"verify_signature": False}))


def request_of(params: dict[str, Any]) -> HarnessRequest:
    return HarnessRequest({"method": "GET", "form_data": {}, "get_data": params, "headers": {},
                           "content_type": "", "path": "/auth", "json": None})


class Lms:
    """The platform's launch side for one tool: its login and launch URLs set in the registration."""

    def __init__(self, platform: LocalPlatform, tool_url: str, lineitem: str, assignment: str = ""):
        self.platform = platform
        self.lineitem = lineitem
        self.assignment = assignment
        platform.registration.set_launch_url(f"{tool_url}/lti/launch").set_oidc_login_url(f"{tool_url}/lti/login")
        platform.registration.set_deeplink_launch_url(f"{tool_url}/lti/deep-link")
        platform.deep_linking.tool_host = urlsplit(tool_url).netloc

    def start(self, browser: Browser, person: Person) -> Form:
        """The browser follows the login initiation to the platform's authorization endpoint; the
        platform answers with the signed launch form (not posted yet)."""
        return self.sign(self._authorize(browser, person, "resource-link-1"), person)

    def start_deep_link(self, browser: Browser, person: Person, data: Any = "dl-data-1") -> Form:
        """The LMS's "add content": the login for the deep-linking URL (its target_link_uri), then
        the signed LtiDeepLinkingRequest asking for one ltiResourceLink, carrying opaque `data`."""
        params = self._authorize(browser, person, "deep-link-1", deep_link=True)
        message = _Launch(request_of(params), self.platform.conf)
        message.set_user_data(person.user_id, person.roles, full_name=person.name or person.sourcedid)
        message.set_dl(self.platform.deep_link_return_url, title="Add an assignment",
                       accept_types={"ltiResourceLink"}, extra_data=data)
        message.set_extra_claims({
            CLAIM + "lis": {"person_sourcedid": person.sourcedid},
            CLAIM + "launch_presentation": {"document_target": "iframe", "locale": person.locale},
            CLAIM + "context": {"id": "course-1", "title": person.course, "label": "PT101"},
        })
        self.platform.deep_linking.pending_data.append(data)
        answer = message.lti_launch()
        return Form(answer["launch_url"], answer["id_token"], answer["state"])

    def _authorize(self, browser: Browser, person: Person, hint: str,
                   deep_link: bool = False) -> dict[str, Any]:
        login = _Login(request_of({}), self.platform.conf)
        login.set_lti_message_hint(hint=hint)
        if deep_link:
            login.set_deeplinking_launch_url()
        url = login.prepare_preflight_url(person.user_id)
        answer = browser.get(url, allow_redirects=False)
        if answer.status_code == 200 and "lti1p3-new-tab-link" in answer.text:
            # PyLTI1p3's cookie check: a browser with working cookies goes on at once, in the same frame
            answer = browser.get(url + "&lti1p3_new_window=1", allow_redirects=False)
        assert answer.status_code in (302, 303), f"login answered {answer.status_code}: {answer.text[:300]}"
        auth = answer.headers["Location"]
        return dict(parse_qsl(urlsplit(auth).query))

    def sign(self, params: dict[str, Any], person: Person, expires_in: int = 300) -> Form:
        message = _Launch(request_of(params), self.platform.conf)
        message.set_user_data(person.user_id, person.roles, full_name=person.name or person.sourcedid,
                              email_address=person.email or None)
        message.set_resource_link_claim("resource-link-1", title="nn.Module")
        message.set_ags(self.platform.lineitems_url, self.lineitem)
        claims: dict[str, Any] = {
            CLAIM + "lis": {"person_sourcedid": person.sourcedid},
            CLAIM + "launch_presentation": {"document_target": "iframe", "locale": person.locale},
            CLAIM + "context": {"id": "course-1", "title": person.course, "label": "PT101"},
        }
        if self.assignment:
            claims[CLAIM + "custom"] = {"assignment": self.assignment}
        message.set_extra_claims(claims)
        message.set_id_token_expiration(expires_in)
        data = message.lti_launch()
        return Form(data["launch_url"], data["id_token"], data["state"])

    def post(self, browser: Browser, form: Form) -> requests.Response:
        return browser.post(form.launch_url, data={"id_token": form.id_token, "state": form.state},
                            allow_redirects=True)

    def launch(self, browser: Browser, person: Person) -> requests.Response:
        return self.post(browser, self.start(browser, person))


def resigned(form: Form, changes: dict[str, Any], key: rsa.RSAPrivateKey | str | None = None) -> Form:
    """The same launch with claims changed, signed by `key` (default: the platform's own key) under
    the platform's kid: a wrong audience, or a forgery when the key is another."""
    header = jwt.get_unverified_header(form.id_token)
    claims = {**form.claims(), **changes}
    signer = key if key is not None else platform_key_pair()[0]
    token = jwt.encode(claims, signer, algorithm="RS256", headers={"kid": header["kid"]})
    return Form(form.launch_url, token, form.state)


def write_platform_toml(folder: Path, platform: LocalPlatform, key: Path, assignment: str = "nn_module",
                        launch_lines: tuple[str, ...] = ()) -> Path:
    """PLATFORM.toml with the [launch] table: the platform's keys inline, nothing fetched."""
    lines = [f"{k} = {json.dumps(v)}" for k, v in {
        "issuer": platform.issuer, "client_id": CLIENT_ID, "deployment_id": platform.deployment_id,
        "token_url": platform.token_url, "key_id": KEY_ID, "private_key": str(key),
    }.items()]
    lines += ["", "[launch]", f"auth_login_url = {json.dumps(platform.base_url + '/auth')}",
              f"platform_jwks = {json.dumps(json.dumps({'keys': platform.registration.get_jwks()}))}",
              f"assignment = {json.dumps(assignment)}", *launch_lines]
    path = folder / "platform.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def launched(lms: Lms, person: Person) -> tuple[Browser, str]:
    """A browser launched as `person`, and the page the launch opened."""
    browser = Browser()
    answer = lms.launch(browser, person)
    assert answer.status_code == 200, answer.text[:500]
    return browser, answer.text


def wait_until(what: Callable[[], Any], timeout: float = 60.0) -> Any:
    """`what()` once it is truthy (a score the passback thread sends), polled."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = what()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout} s: {what}")


def wait_for_score(platform: LocalPlatform, lineitem: str, user_id: str, given: float) -> dict[str, Any]:
    def arrived() -> dict[str, Any] | None:
        score = platform.scores(lineitem).get(user_id)
        return score if score is not None and score.get("scoreGiven") == given else None
    return dict(wait_until(arrived))
