"""LTI Deep Linking from the stand-in LMS (lti1p3platform on 127.0.0.1): the instructor's "add content".

An instructor's LtiDeepLinkingRequest lists the kit's assignments (en and bn); choosing one answers
with a signed LtiDeepLinkingResponse that the platform checks as Canvas and Moodle do and makes a
link and a line item of; a student's launch of that link grades into that line item. A student's
request, a forged one, a second answer and a form without its token are refused, and nothing is
made on either side by them. An instructor's launch says which assignment a link grades and why.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jwt
from browser import Browser
from cryptography.hazmat.primitives.asymmetric import rsa
from lms import (
    INSTRUCTOR,
    KEY_ID,
    Lms,
    Person,
    launched,
    resigned,
    wait_for_score,
)
from lti_platform import LocalPlatform
from served import Served, example, upload, wait_graded

from autograder.config import Kit

TEACHER = Person("uid-teacher-dl", "teacher", roles=[INSTRUCTOR])
ITEMS = "https://purl.imsglobal.org/spec/lti-dl/claim/content_items"
DATA = "https://purl.imsglobal.org/spec/lti-dl/claim/data"


LINEITEM = "made by hand"


def chooser(lms: Lms, person: Person = TEACHER) -> tuple[Browser, str]:
    """A browser after the instructor's deep-linking launch, and the page it opened."""
    browser = Browser()
    form = lms.start_deep_link(browser, person)
    assert form.launch_url.endswith("/lti/deep-link")  # the login chose the URL the LMS asked for
    answer = lms.post(browser, form)
    assert answer.status_code == 200, answer.text[:500]
    return browser, answer.text


def choose(browser: Browser, service: Served, page: str, assignment: str) -> tuple[str, str, Any]:
    """Choose `assignment`: the response page's form (where it posts, the JWT) and the answer."""
    answer = browser.post(service.url + "/lti/deep-link/choose",
                          data={"csrf_token": browser.csrf(page), "assignment": assignment})
    assert answer.status_code == 200, answer.text[:500]
    action = re.search(r'<form method="post" action="([^"]+)" id="deep-link-response">', answer.text)
    token = re.search(r'name="JWT" value="([^"]+)"', answer.text)
    assert action and token, answer.text[:500]
    return action.group(1), token.group(1), answer


def test_the_choice_makes_a_link_that_grades_into_its_line_item(service: Served, lms: Lms,
                                                                platform: LocalPlatform, kit: Kit):
    counts = service.state.inbox.counts()
    teacher, page = chooser(lms)
    assert "Add an assignment to your course" in page and 'lang="en"' in page
    for assignment in kit.assignments.values():
        assert f'id="offer-{assignment.id}"' in page and assignment.title in page
    start = page.index('id="offer-nn_module"')
    offered = page[start:page.index("</section>", start)]
    assert "100 points" in offered and "tinynet (15)" in offered and "Homework" in offered
    exam = page[page.index('id="offer-nn_module_exam"'):]
    assert '<time datetime="2025-12-14T04:00:00Z">' in exam  # opens at 10:00 +06:00
    assert '<time datetime="2025-12-14T11:00:00Z">' in exam  # nothing accepted after 17:00 +06:00
    action, token, answer = choose(teacher, service, page, "nn_module")
    assert action == platform.deep_link_return_url
    assert f"form-action 'self' {platform.base_url}" in answer.headers["Content-Security-Policy"]
    assert jwt.get_unverified_header(token)["kid"] == KEY_ID
    made = teacher.post(action, data={"JWT": token})
    assert made.status_code == 200, made.text
    [item] = platform.deep_linking.responses[-1][ITEMS]
    assert item["type"] == "ltiResourceLink" and item["url"] == service.url + "/lti/launch"
    assert item["custom"] == {"assignment": "nn_module"} and "available" not in item
    assert item["lineItem"] == {"scoreMaximum": 100.0, "label": kit.assignments["nn_module"].title,
                                "resourceId": "nn_module", "tag": "nn_module"}
    assert platform.deep_linking.responses[-1][DATA] == "dl-data-1"  # the request's, returned
    [link] = made.json()["links"]
    assert platform.store.lineitems[link["lineitem"].rsplit("/", 1)[1]]["scoreMaximum"] == 100
    assert service.state.inbox.counts() == counts  # nothing made on the kit's side
    again = teacher.post(service.url + "/lti/deep-link/choose",
                         data={"csrf_token": teacher.csrf(page), "assignment": "nn_module"})
    assert again.status_code == 401  # the request was answered: a second answer is not made
    linked = Lms(platform, service.url, link["lineitem"], link["custom"]["assignment"])
    student, student_page = launched(linked, Person("uid-dl-maya", "dlmaya"))
    sent = upload(student, service.url, [example("maya.zip")], student_page)
    assert sent.status_code == 202, sent.text
    status = wait_graded(student, service.url, sent.json()["status_url"])
    assert status["status"] == "graded" and status["max_score"] == 100
    score = wait_for_score(platform, link["lineitem"], "uid-dl-maya", status["score"])
    assert score["scoreMaximum"] == 100 and score["gradingProgress"] == "FullyGraded"
    _, teacher_page = launched(linked, Person("uid-teacher-dl2", "teacher2", roles=[INSTRUCTOR]))
    assert 'id="link-source" data-from="link"' in teacher_page and "custom parameter" in teacher_page
    assert 'id="link-fix"' not in teacher_page


def test_an_exam_goes_with_its_window_in_the_instructors_language(service: Served, lms: Lms,
                                                                  platform: LocalPlatform):
    teacher, page = chooser(lms, Person("uid-teacher-bn", "shikkhok", roles=[INSTRUCTOR], locale="bn-BD"))
    assert 'lang="bn"' in page and "আপনার কোর্সে একটি assignment যোগ করুন" in page and "100 পয়েন্ট" in page
    action, token, _ = choose(teacher, service, page, "nn_module_exam")
    made = teacher.post(action, data={"JWT": token})
    assert made.status_code == 200, made.text
    [link] = made.json()["links"]
    assert link["custom"] == {"assignment": "nn_module_exam"}
    assert link["available"] == {"startDateTime": "2025-12-14T10:00:00+06:00",
                                 "endDateTime": "2025-12-14T17:00:00+06:00"}
    assert link["submission"] == {"startDateTime": "2025-12-14T10:00:00+06:00",
                                  "endDateTime": "2025-12-14T13:00:00+06:00"}


def test_students_forgeries_and_missing_tokens_are_refused(service: Served, lms: Lms, platform: LocalPlatform,
                                                           tool_key: tuple[Path, dict[str, Any]]):
    links = len(platform.deep_linking.links)
    student = Browser()
    refused = lms.post(student, lms.start_deep_link(student, Person("uid-dl-student", "rafi")))
    assert refused.status_code == 403 and "Only an instructor can add assignments" in refused.text
    nothing = student.post(service.url + "/lti/deep-link/choose", data={"assignment": "nn_module"})
    assert nothing.status_code == 400  # no form of the tool's, no token
    platform.deep_linking.pending_data.clear()
    browser = Browser()
    form = lms.start_deep_link(browser, TEACHER)
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    forged = lms.post(browser, resigned(form, {}, other))
    assert forged.status_code == 401 and "Signature verification failed" in forged.text
    teacher, page = chooser(lms)
    no_token = teacher.post(service.url + "/lti/deep-link/choose", data={"assignment": "nn_module"})
    assert no_token.status_code == 400 and "form token is missing" in no_token.text
    unknown = teacher.post(service.url + "/lti/deep-link/choose",
                           data={"csrf_token": teacher.csrf(page), "assignment": "no_such"})
    assert unknown.status_code == 400 and "`no_such` is not an assignment" in unknown.text
    action, token, _ = choose(teacher, service, page, "nn_module")
    pem = tool_key[0].read_bytes()
    claims = jwt.decode(token, options={"verify_signature": False})
    for bad in ({**claims, "aud": ["https://another.lms"]}, {**claims, "iss": "another-tool"}):
        resent = teacher.post(action, data={"JWT": jwt.encode(bad, pem, algorithm="RS256",
                                                              headers={"kid": KEY_ID})})
        assert resent.status_code == 400
    not_ours = teacher.post(action, data={"JWT": jwt.encode(claims, other, algorithm="RS256",
                                                            headers={"kid": KEY_ID})})
    assert not_ours.status_code == 400 and "Signature verification failed" in not_ours.text
    assert len(platform.deep_linking.links) == links  # the LMS made nothing of any of them
    assert teacher.post(action, data={"JWT": token}).status_code == 200  # the genuine one it takes


def test_an_instructors_launch_says_which_assignment_the_link_grades(service: Served, lms: Lms,
                                                                     platform: LocalPlatform):
    _, page = launched(lms, Person("uid-teacher-hand", "teacher3", roles=[INSTRUCTOR]))
    assert 'id="link-source" data-from="platform"' in page and "platform.toml" in page
    assert 'id="link-fix"' in page
    assert "assignment=nn_module" in page and "nn_module_exam" in page  # the parameter, and the choices
    named = Lms(platform, service.url, lms.lineitem, "tensors_autograd")
    _, page = launched(named, Person("uid-teacher-named", "teacher4", roles=[INSTRUCTOR]))
    assert 'data-from="link"' in page and "`tensors_autograd`" in page
