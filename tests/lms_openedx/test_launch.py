"""Login and launch from Open edX's own LTI 1.3 code: edX's preflight URL starts the tool's OIDC login, edX's
launch gate signs the id_token (resource link, context, custom, AGS and NRPS claims), the tool opens the
student's or the instructor's page. What edX would sign wrongly (another key, an expired token, another
client or deployment) and a replayed launch are refused with the reason, and leave nothing behind."""

from __future__ import annotations

import sqlite3
import time
from typing import Any

import pytest
from browser import Browser
from lti_consumer.lti_1p3 import key_handlers
from served import Served

from .edx_platform import EdxPlatform, Person, platform_key
from .launches import Form, gate, launch, login, post, signed

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"


def spent(service: Served, form: Form) -> bool:
    """Whether the tool recorded the launch's nonce (it spends the nonce of every launch it accepts)."""
    nonce = form.claims()["nonce"]
    try:
        rows = service.state.nonces.execute("SELECT COUNT(*) FROM lti_nonces WHERE nonce = ?", (nonce,))
    except sqlite3.OperationalError:  # no launch accepted yet: no table
        return False
    return bool(rows.fetchone()[0])


def test_a_student_launch_opens_the_assignment_its_custom_parameter_names(edx: EdxPlatform, service: Served):
    student = Person("rahima_k", name="Rahima Khatun", email="rahima@example.edu")
    browser = Browser()
    preflight = login(edx, browser, edx.launch_data(student, custom={"assignment": "tensors_autograd"}))
    assert preflight["client_id"] == edx.client_id
    assert preflight["redirect_uri"] == f"{service.url}/lti/launch"
    form = gate(browser, edx, preflight)
    claims = form.claims()  # what edX's consumer put in: the claims the tool reads
    assert claims["sub"] == student.external_id and claims["aud"] == edx.client_id
    assert claims[CLAIM + "custom"] == {"assignment": "tensors_autograd"}
    assert claims[CLAIM + "resource_link"] == {"id": edx.location}
    assert claims[CLAIM + "context"]["title"] == "PyTorch 101"
    assert claims["https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"]["lineitem"] == edx.lineitem_url
    assert "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice" in claims
    page = post(browser, form)
    assert page.status_code == 200, page.text[:500]
    assert "Submit your work" in page.text and "Rahima Khatun" in page.text
    assert "Tensors, autograd" in page.text  # the custom parameter's assignment, not platform.toml's
    assert spent(service, form)
    assert browser.get(f"{service.url}/instructor").status_code == 403  # a student is no instructor


@pytest.mark.parametrize("role", ["instructor", "staff"])
def test_an_instructor_or_course_staff_launch_opens_the_class_dashboard(edx: EdxPlatform, service: Served,
                                                                        role: str):
    _, page = launch(edx, Person(f"teacher_{role}", role=role, name="Dr. Karim"))
    assert page.status_code == 200, page.text[:500]
    assert "Class dashboard" in page.text and "Dr. Karim" in page.text


def refused(service: Served, browser: Browser, form: Form, status: int = 401) -> str:
    """Post a launch the tool must refuse: its page's text; nothing spent, no session opened."""
    counts = service.state.inbox.counts()
    answer = post(browser, form)
    assert answer.status_code == status, answer.text[:500]
    assert not spent(service, form), "a refused launch's nonce was recorded"
    assert browser.get(f"{service.url}/student").status_code == 401  # no launch in the session
    assert service.state.inbox.counts() == counts
    return answer.text


def started(edx: EdxPlatform, name: str) -> tuple[Browser, dict[str, str]]:
    browser = Browser()
    return browser, login(edx, browser, edx.launch_data(Person(name)))


def test_a_token_signed_by_another_key_is_refused(edx: EdxPlatform, service: Served):
    browser, preflight = started(edx, "mallory")
    forged = signed(edx, preflight, edx.consumer(private_key=platform_key()[0]))  # edX's kid, not its key
    assert "Signature verification failed" in refused(service, browser, forged)


def test_an_expired_token_is_refused(edx: EdxPlatform, service: Served, monkeypatch: pytest.MonkeyPatch):
    browser, preflight = started(edx, "late_lina")

    class TwoHoursAgo:
        @staticmethod
        def time() -> float:
            return time.time() - 7200  # edX signs for 3600 s: expired an hour ago

    monkeypatch.setattr(key_handlers, "time", TwoHoursAgo)  # the clock of edX's PlatformKeyHandler only
    form = signed(edx, preflight, edx.consumer())
    monkeypatch.undo()
    assert form.claims()["exp"] < time.time()
    assert "expired" in refused(service, browser, form)


def test_a_token_for_another_tool_is_refused(edx: EdxPlatform, service: Served):
    browser, preflight = started(edx, "aud_arif")
    other = {**preflight, "client_id": "another-tool"}  # edX's block of another tool, this browser's login
    form = signed(edx, other, edx.consumer(client_id="another-tool"))
    assert form.claims()["aud"] == "another-tool"
    assert "client_id=another-tool] not found" in refused(service, browser, form)


def test_a_token_of_another_deployment_is_refused(edx: EdxPlatform, service: Served):
    browser, preflight = started(edx, "dep_dipu")
    form = signed(edx, preflight, edx.consumer(deployment_id="2"))
    assert form.claims()[CLAIM + "deployment_id"] == "2"
    assert "deployment" in refused(service, browser, form).lower()


def test_a_replayed_launch_is_refused(edx: EdxPlatform, service: Served):
    browser, preflight = started(edx, "replay_rumi")
    cookies: Any = browser.cookies.copy()  # what a thief of the login's cookies and the form would hold
    form = gate(browser, edx, preflight)
    assert post(browser, form).status_code == 200
    thief = Browser()
    thief.cookies.update(cookies)
    answer = post(thief, form)
    assert answer.status_code == 401 and "replayed nonce" in answer.text
    assert thief.get(f"{service.url}/student").status_code == 401
