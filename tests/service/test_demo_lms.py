"""`serve --demo` shows the whole loop: the stand-in LMS page shows the scores passed back, and when;
the demo's exam opens at the server's start, its deadline five minutes later.

One demo server (the service in the test process, its clock fixed): a demo student's homework upload
reaches the stand-in LMS as a final score; a second demo student (`?as=`) writes the exam before its
deadline and the stand-in gets the public checks' score as Pending, then the whole grade once the clock
passes the deadline (the release clock sends it by itself); after the cutoff the exam refuses uploads.
The stand-in's token endpoint refuses an assertion not signed by the demo tool's key.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import jwt
import pytest
from browser import Browser
from conftest import sandbox_works
from inert import table_rows
from lms import wait_until
from served import Served, example, serving, upload, wait_graded

from autograder.config import Kit
from autograder.platforms.lti.ags import ASSERTION_TYPE
from autograder.platforms.lti.keys import generate_key_pair
from autograder.service import demo, demo_lms
from autograder.service.settings import Clock, Limits, ServiceSettings

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # the server's start: the exam's window is moved to it
EXAM = "nn_module_exam"


@pytest.fixture(scope="module")
def service(kit: Kit, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    settings = ServiceSettings(kit, tmp_path_factory.mktemp("demo") / "data", demo=True,
                               sandbox=sandbox_works(kit), limits=Limits(uploads_per_minute=50),
                               clock=Clock(T0))
    with serving(demo.demo_settings(settings)) as served:
        yield served


def lms_rows(browser: Browser, url: str) -> list[dict[str, str]]:
    page = browser.get(f"{url}/demo/lms")
    assert page.status_code == 200
    assert 'id="stand-in-banner"' in page.text, "the stand-in LMS is not labelled as one"
    rows = table_rows(page.text, "lms-scores")[1:]  # the header row first
    return [dict(zip(("received", "lineitem", "user", "score", "progress", "comment"),
                     row["cells"], strict=True)) | {"time": row["times"][0]}  # type: ignore[index]
            for row in rows]


def score_of(browser: Browser, url: str, user: str, lineitem: str, progress: str) -> dict[str, str]:
    def found() -> dict[str, str] | None:
        return next((r for r in lms_rows(browser, url)
                     if r["user"] == user and r["lineitem"] == lineitem and r["progress"] == progress), None)
    return dict(wait_until(found, timeout=120))


def launched(url: str, query: str) -> tuple[Browser, str]:
    browser = Browser()
    page = browser.get(f"{url}/demo/student?{query}")
    assert page.status_code == 200 and page.url.endswith("/student"), page.url
    return browser, page.text


def test_the_stand_in_lms_shows_each_score_passed_back_and_when(service: Served) -> None:
    index = Browser().get(f"{service.url}/demo").text
    assert 'id="demo-lms"' in index and "?as=NAME" in index, "the demo links its LMS and its other students"
    before = datetime.now(UTC).replace(microsecond=0)
    browser, page = launched(service.url, "as=ana")
    assert lms_rows(browser, service.url) == [], "nothing was sent yet"
    sent = upload(browser, service.url, [example("ayesha.zip")], page)
    graded = wait_graded(browser, service.url, sent.json()["status_url"])
    row = score_of(browser, service.url, "demo-ana", "nn_module", "Completed · FullyGraded")
    assert row["score"] == f"{graded['score']:g} / 100", row
    assert graded["score"] == 100, graded
    assert datetime.fromisoformat(row["time"]) >= before, "the row says when the score arrived"
    assert "100/100" in row["comment"], row


def test_the_demo_exam_opens_now_and_its_deadline_releases_the_grade(service: Served) -> None:
    exam = service.state.settings.kit.assignment(EXAM).exam
    assert exam is not None and exam.start is not None and exam.deadline is not None
    assert exam.start <= T0 < exam.deadline == T0 + demo.DEMO_DEADLINE, exam
    browser, page = launched(service.url, f"as=bo&assignment={EXAM}")
    sent = upload(browser, service.url, [example("ayesha.zip")], page)
    graded = wait_graded(browser, service.url, sent.json()["status_url"])
    assert graded["status"] == "graded", graded
    pending = score_of(browser, service.url, "demo-bo", EXAM, "Submitted · Pending")
    public, whole = pending["score"], None
    clock = service.state.settings.clock
    try:
        clock.fixed = exam.deadline + timedelta(minutes=1)  # the deadline passed
        service.state.passback.wake()  # type: ignore[union-attr]
        whole = score_of(browser, service.url, "demo-bo", EXAM, "Completed · FullyGraded")
        assert whole["score"].endswith("/ 100") and whole["score"] != public, (public, whole)
        clock.fixed = exam.cutoff + timedelta(minutes=1)  # type: ignore[operator]
        late = upload(browser, service.url, [example("ayesha.zip")])
        assert late.status_code >= 400, "an upload after the demo exam's cutoff was accepted"
    finally:
        clock.fixed = T0


def test_the_stand_in_refuses_a_token_not_signed_by_the_demo_tool(service: Served) -> None:
    other, _ = generate_key_pair()
    claims: dict[str, Any] = {"iss": demo_lms.CLIENT_ID, "sub": demo_lms.CLIENT_ID, "aud": demo_lms.TOKEN_URL,
                              "iat": int(datetime.now(UTC).timestamp()),
                              "exp": int(datetime.now(UTC).timestamp()) + 60, "jti": "x"}
    forged = jwt.encode(claims, other, algorithm="RS256")
    session = demo_lms.session_for(service.state.settings.data)
    try:
        answer = session.post(demo_lms.TOKEN_URL, data={"grant_type": "client_credentials",
                                                        "client_assertion_type": ASSERTION_TYPE,
                                                        "client_assertion": forged})
        assert answer.status_code == 401, answer.text
        scores = session.post(demo_lms.lineitem_url("nn_module") + "/scores", json={"userId": "x"},
                              headers={"Authorization": "Bearer guessed"})
        assert scores.status_code == 401, scores.text
    finally:
        session.close()
