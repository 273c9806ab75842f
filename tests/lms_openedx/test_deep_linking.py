"""Deep linking with Open edX's own code: edX's LtiDeepLinkingRequest opens the tool's picker, the tool's
signed LtiDeepLinkingResponse is checked by edX against the keyset the tool publishes, each content item
passes edX's serializer, and what edX keeps of it (the URL, the custom `assignment`) is what its next
launch carries. A student's deep-linking request is refused."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from browser import Browser
from served import Served

from autograder.config import Kit

from .edx_platform import EdxPlatform, Person
from .launches import launch, login, post, signed

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
SETTINGS = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
TEACHER = Person("teacher_dl", role="instructor", name="Dr. Nasreen")


def picker(edx: EdxPlatform, person: Person = TEACHER) -> tuple[Browser, str]:
    """An instructor's "add content" in Studio: edX's deep-linking launch, and the tool's picker page."""
    browser = Browser()
    preflight = login(edx, browser, edx.launch_data(person, deep_linking=True))
    assert preflight["redirect_uri"] == f"{edx.tool}/lti/deep-link"  # edX's target_link_uri, honoured
    answer = browser.get(edx.launch_gate_url, params=preflight)
    assert answer.status_code == 200, answer.text[:500]
    form = answer.json()
    page = browser.post(form["launch_url"], data={"id_token": form["id_token"], "state": form["state"]})
    assert page.status_code == 200, page.text[:500]
    return browser, page.text


def choose(edx: EdxPlatform, service: Served, browser: Browser, page: str, assignment: str) -> dict[str, Any]:
    """Pick `assignment`; the tool's page posts its JWT to edX's return URL: what edX saved of it."""
    answer = browser.post(f"{service.url}/lti/deep-link/choose",
                          data={"csrf_token": browser.csrf(page), "assignment": assignment})
    assert answer.status_code == 200, answer.text[:500]
    action = re.search(r'<form method="post" action="([^"]+)" id="deep-link-response">', answer.text)
    token = re.search(r'name="JWT" value="([^"]+)"', answer.text)
    assert action and token, answer.text[:500]
    assert action.group(1) == edx.deep_link_return_url
    saved = browser.post(action.group(1), data={"JWT": token.group(1)})
    assert saved.status_code == 200, f"edX refused the tool's response: {saved.text[:800]}"
    assert saved.json() == {"saved": 1}
    [item] = edx.content_items
    return item


def test_the_instructors_pick_is_what_edx_launches_next(edx: EdxPlatform, service: Served, kit: Kit):
    browser, page = picker(edx)
    assert "Add an assignment to your course" in page and 'id="offer-tensors_autograd"' in page
    item = choose(edx, service, browser, page, "tensors_autograd")
    attributes = item["attributes"]  # edX's LtiDlLtiResourceLinkSerializer's validated data
    assert item["content_type"] == "ltiResourceLink"
    assert attributes["url"] == f"{service.url}/lti/launch"
    assert attributes["custom"] == {"assignment": "tensors_autograd"}
    points = kit.assignments["tensors_autograd"].max_score
    assert dict(attributes["lineItem"]) == {"label": kit.assignments["tensors_autograd"].title,
                                            "scoreMaximum": points, "resourceId": "tensors_autograd",
                                            "tag": "tensors_autograd"}
    student = Person("linked_lima")
    browser = Browser()
    preflight = login(edx, browser, edx.launch_data(student, content_item=0))
    form = signed(edx, preflight, edx.consumer())
    assert form.claims()[CLAIM + "custom"] == {"assignment": "tensors_autograd"}  # set_dl_content_launch_...
    assert form.claims()[CLAIM + "target_link_uri"] == f"{service.url}/lti/launch"
    opened = post(browser, form)
    assert opened.status_code == 200 and "Tensors, autograd" in opened.text


def test_an_exams_window_reaches_edx(edx: EdxPlatform, service: Served, kit: Kit):
    browser, page = picker(edx)
    attributes = choose(edx, service, browser, page, "nn_module_exam")["attributes"]
    exam = kit.assignments["nn_module_exam"].exam
    assert exam is not None and exam.start and exam.deadline and exam.cutoff
    assert attributes["custom"] == {"assignment": "nn_module_exam"}
    assert attributes["lineItem"]["scoreMaximum"] == kit.assignments["nn_module_exam"].max_score

    def window(name: str) -> tuple[datetime, datetime]:
        return attributes[name]["startDateTime"], attributes[name]["endDateTime"]

    assert window("available") == (exam.start, exam.cutoff)  # edX parsed them: the same instants
    assert window("submission") == (exam.start, exam.deadline)


def test_a_students_deep_linking_request_is_refused(edx: EdxPlatform, service: Served):
    student = Person("dl_student_sami")
    browser = Browser()
    preflight = login(edx, browser, edx.launch_data(student, deep_linking=True))
    assert browser.get(edx.launch_gate_url, params=preflight).status_code == 403  # edX's own gate refuses
    # A platform that let it through: the tool refuses it itself.
    form = signed(edx, preflight, edx.consumer(), staff_only_deep_linking=False)
    claims = form.claims()
    assert claims[CLAIM + "message_type"] == "LtiDeepLinkingRequest" and SETTINGS in claims
    counts = service.state.inbox.counts()
    answer = post(browser, form)
    assert answer.status_code == 403 and "Only an instructor can add assignments" in answer.text
    assert browser.post(f"{service.url}/lti/deep-link/choose", data={"assignment": "nn_module"}).status_code \
        in (400, 401)  # no pending request, no form of the tool's
    assert service.state.inbox.counts() == counts
    _, teacher_page = launch(edx, Person("teacher_after", role="instructor"))
    assert teacher_page.status_code == 200  # the platform's other launches still work
