"""`autograder serve` launched from a real LTI 1.3 platform (lti1p3platform) on 127.0.0.1.

login -> launch -> upload -> feedback -> the AGS score on the platform, for a student and an
instructor; forged, expired, wrong-audience and replayed launches refused; two students who
cannot see each other's work; CSRF, size, count and rate limits; no secret in a page or a log.
"""

from __future__ import annotations

import io
import json
import logging
import re
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
from browser import Browser
from cryptography.hazmat.primitives.asymmetric import rsa
from lms import (
    INSTRUCTOR,
    Lms,
    Person,
    launched,
    resigned,
    wait_for_score,
    wait_until,
)
from lti_platform import LocalPlatform
from served import Served, example, upload, wait_graded

from autograder.config import Kit
from autograder.service.limits import UploadRate
from autograder.service.settings import Limits


# -- the whole way, for a student and an instructor -----------------------------------------------
def service_options(kit: Kit) -> dict[str, Any]:
    """Small limits: the tests reach them."""
    return {"limits": Limits(max_upload_bytes=1024 * 1024, max_files=5, uploads_per_minute=50)}


def test_student_login_launch_upload_feedback_and_ags_score(service: Served, lms: Lms,
                                                            platform: LocalPlatform):
    browser, page = launched(lms, Person("uid-ayesha-1", "ayesha"))
    assert "Submit your work" in page and "ayesha" in page and "DEMO" not in page
    sent = upload(browser, service.url, [example("maya.zip")], page)
    assert sent.status_code == 202, sent.text
    status = wait_graded(browser, service.url, sent.json()["status_url"])
    assert status["status"] == "graded" and 0 < status["score"] < status["max_score"] == 100
    feedback = browser.get(service.url + status["feedback_url"])
    total = re.search(r'<b id="total">([\d.]+)</b>', feedback.text)
    assert total and float(total.group(1)) == status["score"]
    assert 'class="check failed"' in feedback.text and 'lang="en"' in feedback.text
    score = wait_for_score(platform, lms.lineitem, "uid-ayesha-1", status["score"])
    assert score["scoreMaximum"] == 100 and score["gradingProgress"] == "FullyGraded"
    listed = browser.get(service.url + "/student").text
    assert status["filename"] in listed and f'{status["score"]:g}' in listed
    repacked = io.BytesIO()  # the same files in other bytes (not a double send): their grade stands
    with zipfile.ZipFile(io.BytesIO(example("maya.zip")[1])) as archive, \
            zipfile.ZipFile(repacked, "w", zipfile.ZIP_STORED) as again_zip:
        for info in archive.infolist():
            again_zip.writestr(info.filename, archive.read(info))
    same = upload(browser, service.url, [("maya-again.zip", repacked.getvalue())], page)
    assert same.status_code == 202, same.text
    again = wait_graded(browser, service.url, same.json()["status_url"])
    assert again["score"] == status["score"] and again["id"] != status["id"]
    assert len(service.state.inbox.book.history("nn_module", "ayesha")) == 1  # not graded twice


def test_instructor_sees_the_class_regrades_and_publishes(service: Served, lms: Lms, platform: LocalPlatform):
    student, page = launched(lms, Person("uid-karim-1", "karim"))
    sent = upload(student, service.url, [example("ayesha.zip")], page)
    graded = wait_graded(student, service.url, sent.json()["status_url"])
    wait_for_score(platform, lms.lineitem, "uid-karim-1", graded["score"])
    teacher, page = launched(lms, Person("uid-teacher-1", "teacher", roles=[INSTRUCTOR]))
    assert "Class dashboard" in page and "karim" in page
    report = teacher.get(service.url + "/instructor/report")
    graded_now = len(service.state.inbox.book.current("nn_module"))
    assert report.status_code == 200 and f'<b id="students">{graded_now}</b>' in report.text
    live = teacher.get(service.url + "/instructor/queue.json").json()
    assert live["counts"]["graded"] >= graded_now and isinstance(live["queue"], list)
    published = teacher.post(service.url + "/instructor/publish", data={"csrf_token": teacher.csrf(page)})
    assert published.status_code == 200
    assert re.search(r"up to date [1-9]", published.text), published.text[-800:]
    before = service.state.inbox.of_student("nn_module", "karim")
    again = teacher.post(service.url + "/instructor/regrade", data={"csrf_token": teacher.csrf(page),
                                                                    "student": "karim"})
    assert "Queued 1 submissions again." in again.text
    assert service.state.inbox.of_student("nn_module", "karim") == before  # a regrade is no upload
    [regrade] = service.state.inbox.gradings(graded["id"])[1:]
    assert regrade.regrade_of == graded["id"] and regrade.received_at == before[0].received_at
    wait_until(lambda: (r := service.state.inbox.get(regrade.id)) is not None and r.status == "graded",
               timeout=180)
    newest = student.get(service.url + graded["status_url"]).json()
    assert newest["score"] == graded["score"]  # the same files, the same grade
    assert [h["kind"] for h in newest["history"]] == ["graded", "regraded"]
    assert len(service.state.inbox.book.history("nn_module", "karim")) == 2  # a regrade grades again
    nobody = teacher.post(service.url + "/instructor/regrade", data={"csrf_token": teacher.csrf(page),
                                                                     "student": "no-such-student"})
    assert 'class="error"' in nobody.text and "no graded submission of `no-such-student`" in nobody.text
    assert "Queued 0" not in nobody.text
    assert student.get(service.url + "/instructor").status_code == 403  # a student is no instructor


def test_the_launch_locale_sets_the_language(service: Served, lms: Lms):
    browser, page = launched(lms, Person("uid-nusrat-1", "nusrat", locale="bn-BD"))
    assert 'lang="bn"' in page and "আপনার কাজ জমা দিন" in page
    sent = upload(browser, service.url, [example("maya.zip")], page)
    assert sent.json()["status_text"] in ("পাওয়া গেছে, grader-এর অপেক্ষায়", "মূল্যায়ন চলছে")
    status = wait_graded(browser, service.url, sent.json()["status_url"], timeout=180)
    feedback = browser.get(service.url + status["feedback_url"]).text
    assert 'lang="bn"' in feedback and "স্কোর" in feedback


# -- launches refused -----------------------------------------------------------------------------
def refused(lms: Lms, browser: Browser, form: Any) -> str:
    answer = lms.post(browser, form)
    assert answer.status_code == 401, answer.text[:300]
    return answer.text


def test_a_forged_id_token_is_refused(lms: Lms):
    browser = Browser()
    form = lms.start(browser, Person("uid-eve", "eve"))
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    assert "Signature verification failed" in refused(lms, browser, resigned(form, {}, other))


def test_an_expired_id_token_is_refused(lms: Lms):
    browser = Browser()
    form = lms.start(browser, Person("uid-late", "late"))
    expired = resigned(form, {"iat": int(time.time()) - 600, "exp": int(time.time()) - 300})
    assert "expired" in refused(lms, browser, expired)


def test_a_wrong_audience_is_refused(lms: Lms):
    browser = Browser()
    form = lms.start(browser, Person("uid-aud", "aud"))
    text = refused(lms, browser, resigned(form, {"aud": "another-tool", "azp": "another-tool"}))
    assert "client_id=another-tool] not found" in text


def test_a_replayed_launch_is_refused(lms: Lms):
    browser = Browser()
    form = lms.start(browser, Person("uid-replay", "replay"))
    cookies = browser.cookies.copy()  # what a thief of the login's cookies and the form would hold
    assert lms.post(browser, form).status_code == 200
    refused(lms, browser, form)  # the same browser again: its session moved on
    thief = Browser()
    thief.cookies.update(cookies)
    assert "replayed nonce" in refused(lms, thief, form)


# -- one student's work is theirs alone ---------------------------------------------------------
def test_two_students_see_only_their_own_submissions(service: Served, lms: Lms):
    rahim, page = launched(lms, Person("uid-rahim-1", "rahim"))
    sent = upload(rahim, service.url, [example("rahim.zip")], page)
    mine = sent.json()
    wait_graded(rahim, service.url, mine["status_url"])
    tanvir, _ = launched(lms, Person("uid-tanvir-1", "tanvir"))
    assert tanvir.get(service.url + mine["status_url"]).status_code == 404
    assert tanvir.get(service.url + mine["status_url"] + "/feedback").status_code == 404
    listed = tanvir.get(service.url + "/student/submissions.json").json()["submissions"]
    assert mine["id"] not in [s["id"] for s in listed]
    assert rahim.get(service.url + mine["status_url"] + "/feedback").status_code == 200
    assert Browser().get(service.url + mine["status_url"]).status_code == 401  # no launch, no page


# -- what the upload refuses --------------------------------------------------------------------
def test_csrf_size_count_and_rate_limits(service: Served, lms: Lms):
    browser, page = launched(lms, Person("uid-arif-1", "arif"))
    no_token = browser.post(service.url + "/student/submissions", files=[("files", example("maya.zip"))])
    assert no_token.status_code == 400 and "form token is missing" in no_token.json()["error"]
    big = upload(browser, service.url, [("big.zip", b"\0" * (2 * 1024 * 1024))], page)
    assert big.status_code == 413 and "larger than 1 MB" in big.json()["error"]
    many = upload(browser, service.url, [(f"f{i}.py", b"x = 1\n") for i in range(6)], page)
    assert many.status_code == 400 and "at most 5" in many.json()["error"]
    odd = upload(browser, service.url, [("notes.txt", b"hello")], page)
    assert odd.status_code == 400 and "notes.txt" in odd.json()["error"]
    service.state.rate = UploadRate(1)
    try:
        first = upload(browser, service.url, [("tinynet.py", b"x = 1\n")], page)
        second = upload(browser, service.url, [("tinynet.py", b"x = 2\n")], page)
    finally:
        service.state.rate = UploadRate(50)
    assert first.status_code == 202
    assert second.status_code == 429 and "wait" in second.json()["error"]


def test_no_secret_in_any_page_or_log(service: Served, lms: Lms, tool_key: tuple[Path, dict[str, Any]],
                                      caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.INFO, logger="autograder.service")
    teacher = Browser()
    form = lms.start(teacher, Person("uid-teacher-2", "teacher2", roles=[INSTRUCTOR]))
    page = lms.post(teacher, form).text
    pages = [page, teacher.get(service.url + "/instructor/report").text,
             teacher.get(service.url + "/lti/jwks").text]
    pem = tool_key[0].read_text()
    body = "".join(pem.splitlines()[1:-1])
    session_key = (service.state.settings.data / "session.key").read_bytes()
    jwks = json.loads(pages[-1])
    assert [set(k) for k in jwks["keys"]] == [{"kty", "n", "e", "kid", "alg", "use"}]  # no private part
    for text in pages:
        assert body[40:120] not in text and session_key.hex() not in text and form.id_token not in text
    assert "launch: teacher2" in caplog.text
    assert form.id_token not in caplog.text and body[40:120] not in caplog.text
