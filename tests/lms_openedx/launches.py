"""The browser's part of an Open edX launch: edX's login initiation to the tool, the tool's redirect to
edX's launch gate, and the form edX's page posts to the tool (what edX's lti_1p3_launch.html does)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import jwt
import requests
from browser import Browser
from lti_consumer.data import Lti1p3LaunchData
from lti_consumer.lti_1p3.consumer import LtiAdvantageConsumer

from .edx_platform import EdxPlatform, Person, launch_request


@dataclass
class Form:
    """The auto-submitting form of edX's launch page: where it posts, the id_token and the state."""

    launch_url: str
    id_token: str
    state: str

    def claims(self) -> dict[str, Any]:
        return dict(jwt.decode(self.id_token, options={"verify_signature": False}))


def login(platform: EdxPlatform, browser: Browser, launch: Lti1p3LaunchData,
          consumer: LtiAdvantageConsumer | None = None) -> dict[str, str]:
    """edX's `prepare_preflight_url` opened in the browser: the tool's login answers with a redirect to
    edX's launch gate; its query (the preflight response edX's consumer checks) is returned."""
    url = (consumer or platform.consumer()).prepare_preflight_url(launch)
    assert url.startswith(f"{platform.tool}/lti/login?"), url
    answer = browser.get(url, allow_redirects=False)
    if answer.status_code == 200 and "lti1p3-new-tab-link" in answer.text:
        # PyLTI1p3's cookie check: a browser whose cookies work goes on at once, in the same frame
        answer = browser.get(url + "&lti1p3_new_window=1", allow_redirects=False)
    assert answer.status_code in (302, 303), f"login answered {answer.status_code}: {answer.text[:300]}"
    location = answer.headers["Location"]
    assert location.startswith(platform.launch_gate_url), location
    return dict(parse_qsl(urlsplit(location).query))


def gate(browser: Browser, platform: EdxPlatform, preflight: dict[str, str]) -> Form:
    """The browser at edX's launch gate: the form edX signs for the tool."""
    answer = browser.get(platform.launch_gate_url, params=preflight)
    assert answer.status_code == 200, f"edX's launch gate answered {answer.status_code}: {answer.text[:300]}"
    data = answer.json()
    return Form(data["launch_url"], data["id_token"], data["state"])


def signed(platform: EdxPlatform, preflight: dict[str, str], consumer: LtiAdvantageConsumer,
           staff_only_deep_linking: bool = True) -> Form:
    """The form edX's launch gate makes with `consumer` (another key, client or deployment)."""
    data = launch_request(platform, preflight, consumer=consumer,
                          staff_only_deep_linking=staff_only_deep_linking)
    return Form(data["launch_url"], data["id_token"], data["state"])


def post(browser: Browser, form: Form) -> requests.Response:
    return browser.post(form.launch_url, data={"id_token": form.id_token, "state": form.state},
                        allow_redirects=True)


def launch(platform: EdxPlatform, person: Person, browser: Browser | None = None,
           **launch_data: Any) -> tuple[Browser, requests.Response]:
    """The whole way, as edX's LTI block launches `person`: login, launch gate, the form posted."""
    browser = browser or Browser()
    preflight = login(platform, browser, platform.launch_data(person, **launch_data))
    return browser, post(browser, gate(browser, platform, preflight))
