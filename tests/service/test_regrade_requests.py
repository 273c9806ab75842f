"""Regrade requests (the tests' LTI platform): a student asks about one upload, both sides see the thread.

A student (launched in Bangla) writes from their page about one of their uploads; the instructor's
page lists the open request and links to the student's page, which shows the thread; the answer
(with an adjustment on a task, closing the request) is one transaction of two signed records that
name each other; the student then reads the answer and the adjustment's reason in their language.
While the assignment's release holds the grade, the student's page shows no adjustment. A request
about another student's upload is 404, an empty one is refused, each with nothing recorded, and a
hostile message is text on both sides.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest
from inert import assert_inert, shown_escaped
from lms import INSTRUCTOR, Lms, Person, launched
from served import Served, example, upload, wait_graded

from autograder.ledger import records
from autograder.ledger.audit import audit

MESSAGE = "<img src=x onerror=alert('ask')> please look at tinynet again"
ANSWER = "<script>alert('answer')</script> you are right"
HOSTILE = (MESSAGE, ANSWER)


@pytest.fixture(scope="module")
def people(service: Served, lms: Lms) -> dict[str, Any]:
    """rina (in Bangla) and sami graded once each; the instructor launched."""
    rina, rina_page = launched(lms, Person("uid-rina", "rina", locale="bn-BD"))
    sami, sami_page = launched(lms, Person("uid-sami", "sami"))
    sent = {name: upload(browser, service.url, [example(archive)], page)
            for name, browser, page, archive in (("rina", rina, rina_page, "maya.zip"),
                                                 ("sami", sami, sami_page, "ayesha.zip"))}
    for name, browser in (("rina", rina), ("sami", sami)):
        assert sent[name].status_code == 202, sent[name].text
        done = wait_graded(browser, service.url, sent[name].json()["status_url"], timeout=300)
        assert done["status"] == "graded", done
    teacher, _ = launched(lms, Person("uid-teacher-q", "teacher-q", roles=[INSTRUCTOR], name="Dr. Karim"))
    inbox = service.state.inbox
    return {"rina": rina, "sami": sami, "teacher": teacher,
            "rina_upload": inbox.of_student("nn_module", "rina")[0].id,
            "sami_upload": inbox.of_student("nn_module", "sami")[0].id}


def messages(service: Served, student: str) -> list[dict[str, Any]]:
    with service.state.inbox.lock:
        return service.state.inbox.book.records(records.REGRADE_MESSAGE, "nn_module", student)


def test_a_request_is_about_ones_own_upload_and_says_something(service: Served, people: dict[str, Any]):
    rina = people["rina"]
    page = rina.get(service.url + "/student").text
    token = rina.csrf(page)
    other = rina.post(service.url + "/student/regrade",
                      data={"csrf_token": token, "upload": people["sami_upload"], "text": "mine?"})
    assert other.status_code == 404
    empty = rina.post(service.url + "/student/regrade",
                      data={"csrf_token": token, "upload": people["rina_upload"], "text": "  "})
    assert empty.status_code == 200 and 'class="error"' in empty.text
    unsigned = rina.post(service.url + "/student/regrade",
                         data={"upload": people["rina_upload"], "text": "x"})
    assert unsigned.status_code == 400
    assert messages(service, "rina") == []


def test_the_thread_is_seen_on_both_sides_and_the_answer_adjusts(service: Served, people: dict[str, Any]):
    rina, teacher = people["rina"], people["teacher"]
    page = rina.get(service.url + "/student").text
    sent = rina.post(service.url + "/student/regrade", data={
        "csrf_token": rina.csrf(page), "upload": people["rina_upload"], "text": MESSAGE})
    assert sent.status_code == 200 and shown_escaped(sent.text, MESSAGE)
    assert "অপেক্ষায়" in sent.text  # the student's page says, in Bangla, that it waits for an answer
    [asked] = messages(service, "rina")
    assert (asked["role"], asked["author"], asked["upload"]) == ("student", "rina", people["rina_upload"])
    dashboard = teacher.get(service.url + "/instructor").text
    assert 'href="/instructor/students/rina#thread"' in dashboard  # the open request, linked
    record = teacher.get(f"{service.url}/instructor/students/rina").text
    assert shown_escaped(record, MESSAGE) and "waiting for an answer" in record
    assert f'href="#upload-{people["rina_upload"]}"' in record  # which upload it is about
    answered = teacher.post(service.url + "/instructor/answer", data={
        "csrf_token": teacher.csrf(record), "student": "rina", "text": ANSWER, "scope": "task:tinynet",
        "points": "2", "closes": "1"})
    assert answered.status_code == 200 and "The answer is sent." in answered.text
    assert shown_escaped(answered.text, ANSWER) and "waiting for an answer" not in answered.text
    [_, reply] = messages(service, "rina")
    with service.state.inbox.lock:
        [adjustment] = service.state.inbox.book.records(records.ADJUSTMENT, "nn_module", "rina")
    assert reply["role"] == "instructor" and reply["closes"] == 1
    assert reply["author"] == "Dr. Karim (uid-teacher-q)"
    assert reply["adjustment"] == adjustment["id"] and adjustment["request"] == asked["id"]
    assert (adjustment["task"], adjustment["points"], adjustment["reason"]) == ("tinynet", 2.0, ANSWER)
    mine = rina.get(service.url + "/student").text
    assert shown_escaped(mine, MESSAGE) and shown_escaped(mine, ANSWER)
    assert "আপনার শিক্ষক task tinynet-এর পয়েন্ট +2 বদলেছেন" in mine  # the reason, in her language
    assert 'href="/instructor/students/rina#thread"' not in teacher.get(service.url + "/instructor").text
    record = teacher.get(f"{service.url}/instructor/students/rina").text
    for where, text in (("student", mine), ("record", record)):
        assert_inert(text, where, HOSTILE)
    sami = people["sami"].get(service.url + "/student").text
    assert not shown_escaped(sami, MESSAGE) and not shown_escaped(sami, ANSWER)  # her thread is hers
    with service.state.inbox.lock:
        book = service.state.inbox.book
        found = audit(book, book.signing_key(service.state.settings.kit.root))
    assert not found.problems and len(found.records["regrade_request"]) == 2


def test_a_held_release_hides_the_adjustments_from_the_student(service: Served, people: dict[str, Any]):
    teacher, rina = people["teacher"], people["rina"]
    dashboard = teacher.get(service.url + "/instructor").text
    token = teacher.csrf(dashboard)
    teacher.post(service.url + "/instructor/release", data={"csrf_token": token, "mode": "held"})
    held = rina.get(service.url + "/student").text
    assert 'id="adjustment-notes"' not in held and shown_escaped(held, ANSWER)  # the thread stays
    record = teacher.get(f"{service.url}/instructor/students/{quote('rina')}").text
    assert "held until you release them" in record and "The student sees no score yet" in record
    teacher.post(service.url + "/instructor/release", data={"csrf_token": token, "mode": "now"})
    assert 'id="adjustment-notes"' in rina.get(service.url + "/student").text


def test_the_student_reads_their_extension_in_their_language(service: Served, people: dict[str, Any]):
    teacher, rina = people["teacher"], people["rina"]
    record = teacher.get(f"{service.url}/instructor/students/rina").text
    sent = teacher.post(service.url + "/instructor/extend", data={
        "csrf_token": teacher.csrf(record), "student": "rina", "deadline_utc": "2030-03-01T06:00:00.000Z",
        "deadline": "2030-03-01T12:00", "exempt": "1", "reason": "a family matter"})
    assert "The extension is saved." in sent.text
    mine = rina.get(service.url + "/student").text
    assert '<time datetime="2030-03-01T06:00:00Z">' in mine  # her own deadline, a time her page writes
    assert "দেরির নিয়ম আপনার জন্য প্রযোজ্য নয়" in mine  # the exemption, in Bangla
    assert "a family matter" not in mine  # the reason is the instructor's note, not hers to read
    withdrawn = teacher.post(service.url + "/instructor/extend", data={
        "csrf_token": teacher.csrf(record), "student": "rina", "reason": "back on time"})
    assert "The extension is withdrawn." in withdrawn.text
    assert '<time datetime="2030-03-01T06:00:00Z">' not in rina.get(service.url + "/student").text
