"""One release rule for the page and the LMS, through the tests' LTI platform: what a student sees of an
exam before its deadline (public checks only, or nothing) is exactly what AGS passback sends, and
after the deadline both show everything; homework is released at once. A regrade after the deadline
keeps the upload's receipt time (no late penalty for an on-time upload) and shows in its history.

The service's clock is fixed (ServiceSettings.clock): the deadline passes when a test moves it.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from lms import INSTRUCTOR, Lms, Person, launched, wait_until
from lti_platform import LocalPlatform
from served import Served, example, upload, wait_graded

from autograder.config import ExamConfig, Kit
from autograder.grading.results import SubmissionResult, result_from_dict
from autograder.ledger.inbox import Received
from autograder.service.settings import Clock, Limits

T0 = datetime(2025, 12, 14, 6, 0, tzinfo=UTC)  # when the tests upload: the exams are open
DEADLINE = T0 + timedelta(hours=1)
AFTER = DEADLINE + timedelta(minutes=90)  # after the deadline, before the cutoff: 2 started hours late


def service_options(kit: Kit) -> dict[str, Any]:
    return {"kit": exam_kit(kit), "limits": Limits(uploads_per_minute=50), "clock": Clock(T0)}


def exam_kit(kit: Kit) -> Kit:
    """nn_module as homework, and as two exams (its content) with a late policy: check public / none."""
    target = kit.assignment("nn_module")
    assignments = dict(kit.assignments)
    for check in ("public", "none"):
        exam = ExamConfig(check=check, start=T0 - timedelta(hours=1), deadline=DEADLINE,
                          cutoff=DEADLINE + timedelta(hours=3), late_penalty=10, late_period="hour")
        assignments[f"exam_{check}"] = dataclasses.replace(target, id=f"exam_{check}", content="nn_module",
                                                           title=f"Exam ({check})", exam=exam)
    return dataclasses.replace(kit, assignments=assignments)


@pytest.fixture
def clock(service: Served) -> Iterator[Clock]:
    """The service's clock, at T0 for each test, and back at T0 after it."""
    service.state.settings.clock.fixed = T0
    yield service.state.settings.clock
    service.state.settings.clock.fixed = T0


def lms_for(platform: LocalPlatform, service: Served, assignment: str) -> Lms:
    return Lms(platform, service.url, platform.add_lineitem(assignment, 100.0), assignment=assignment)


class Passbacks:
    """Each passback the queue starts after a grading, kept so a test can wait until it is done."""

    def __init__(self, service: Served):
        self.futures: list[Future[Any]] = []
        self.lock = threading.Lock()
        self.queue = service.state.queue
        self.original = self.queue.on_graded

    def __enter__(self) -> Passbacks:
        def kept(row: Received, result: SubmissionResult) -> Any:
            assert self.original is not None
            future = self.original(row, result)
            with self.lock:
                self.futures.append(future)  # type: ignore[arg-type]
            return future
        self.queue.on_graded = kept
        return self

    def __exit__(self, *exc: object) -> None:
        self.queue.on_graded = self.original

    def settled(self, count: int) -> None:
        """Wait until `count` passbacks were started and have finished."""
        wait_until(lambda: len(self.futures) >= count, timeout=180)
        for future in list(self.futures):
            future.result(timeout=120)


def stored(service: Served, row_id: int) -> SubmissionResult:
    data = service.state.inbox.result(row_id)
    assert data is not None
    return result_from_dict(data)


def public_part(result: SubmissionResult) -> tuple[float, float]:
    checks = [c for t in result.tasks for c in t.checks if c.public]
    return round(sum(c.score for c in checks), 6), sum(c.max_score for c in checks)


def released(service: Served, platform: LocalPlatform, lms: Lms, user_id: str,
             score: float) -> dict[str, Any]:
    """The platform's score for `user_id` once the release clock sent `score` as final."""
    service.state.passback.wake()  # type: ignore[union-attr]
    def final() -> dict[str, Any] | None:
        found = platform.scores(lms.lineitem).get(user_id)
        ok = found is not None and found["gradingProgress"] == "FullyGraded" and found["scoreGiven"] == score
        return found if ok else None
    return dict(wait_until(final, timeout=120))


def test_an_exam_with_public_checks_sends_the_lms_what_the_page_shows_until_the_deadline(
        service: Served, platform: LocalPlatform, clock: Clock):
    lms = lms_for(platform, service, "exam_public")
    with Passbacks(service) as passbacks:
        browser, page = launched(lms, Person("uid-pub-1", "pub1"))
        sent = upload(browser, service.url, [example("maya.zip")], page)
        assert sent.status_code == 202, sent.text
        status = wait_graded(browser, service.url, sent.json()["status_url"], timeout=180)
        passbacks.settled(1)
    full = stored(service, status["id"])
    shown, shown_max = public_part(full)
    assert "public checks only" in status["note"]
    assert (status["score"], status["max_score"]) == (shown, shown_max)
    assert shown_max < full.max_score and shown < full.score
    score = platform.scores(lms.lineitem)["uid-pub-1"]
    assert (score["scoreGiven"], score["scoreMaximum"]) == (shown, shown_max)  # the page's numbers, no more
    assert (score["activityProgress"], score["gradingProgress"]) == ("Submitted", "Pending")
    for task in full.tasks:  # the comment's per-task breakdown is of the public checks too
        public = [c for c in task.checks if c.public]
        assert f"{task.task} {sum(c.score for c in public):g}/{sum(c.max_score for c in public):g}" in \
            score["comment"]
    assert f"{full.score:g}/{full.max_score:g}" not in score["comment"]
    assert "Public checks only until the deadline" in score["comment"]

    clock.fixed = AFTER  # the deadline passed: the page and the LMS show the whole grade
    final = released(service, platform, lms, "uid-pub-1", full.score)
    page_now = browser.get(service.url + status["status_url"]).json()
    assert (page_now["score"], page_now["max_score"]) == (final["scoreGiven"], final["scoreMaximum"]) == \
        (full.score, full.max_score) and page_now["note"] == ""
    assert final["activityProgress"] == "Completed"


def test_an_exam_that_shows_nothing_sends_the_lms_nothing_until_the_deadline(
        service: Served, platform: LocalPlatform, clock: Clock):
    lms = lms_for(platform, service, "exam_none")
    with Passbacks(service) as passbacks:
        browser, page = launched(lms, Person("uid-none-1", "none1"))
        sent = upload(browser, service.url, [example("maya.zip")], page)
        status = wait_graded(browser, service.url, sent.json()["status_url"], timeout=180)
        passbacks.settled(1)
    assert status["score"] is None and status["feedback_url"] is None
    assert "shown after the deadline" in status["note"]
    assert browser.get(service.url + sent.json()["status_url"] + "/feedback").status_code == 404
    assert "uid-none-1" not in platform.scores(lms.lineitem)  # the LMS knows no more than the student

    clock.fixed = AFTER
    full = stored(service, status["id"])
    final = released(service, platform, lms, "uid-none-1", full.score)
    assert final["scoreMaximum"] == full.max_score
    page_now = browser.get(service.url + status["status_url"]).json()
    assert page_now["score"] == full.score and page_now["feedback_url"]


def test_homework_is_released_at_once_with_the_same_score_on_the_page_and_in_the_lms(
        service: Served, platform: LocalPlatform, clock: Clock):
    lms = lms_for(platform, service, "nn_module")
    with Passbacks(service) as passbacks:
        browser, page = launched(lms, Person("uid-hw-1", "hw1"))
        sent = upload(browser, service.url, [example("ayesha.zip")], page)
        status = wait_graded(browser, service.url, sent.json()["status_url"], timeout=180)
        passbacks.settled(1)
    full = stored(service, status["id"])
    score = platform.scores(lms.lineitem)["uid-hw-1"]
    assert (status["score"], status["max_score"]) == (score["scoreGiven"], score["scoreMaximum"]) == \
        (full.score, full.max_score)
    assert score["gradingProgress"] == "FullyGraded" and status["note"] == ""
    for task in full.tasks:
        assert f"{task.task} {task.score:g}/{task.max_score:g}" in score["comment"]


def test_a_regrade_after_the_deadline_keeps_the_receipt_time_and_is_not_late(
        service: Served, platform: LocalPlatform, clock: Clock):
    lms = lms_for(platform, service, "exam_public")
    browser, page = launched(lms, Person("uid-late-1", "late1"))
    sent = upload(browser, service.url, [example("maya.zip")], page)  # at T0: on time
    status = wait_graded(browser, service.url, sent.json()["status_url"], timeout=180)
    on_time = stored(service, status["id"])
    assert on_time.exam["late"]["status"] == "on_time" and on_time.penalty == 0

    clock.fixed = AFTER
    teacher, dashboard = launched(lms, Person("uid-teacher-9", "teacher9", roles=[INSTRUCTOR]))
    answer = teacher.post(service.url + "/instructor/regrade", data={"csrf_token": teacher.csrf(dashboard),
                                                                     "student": "late1"})
    assert "Queued 1 submissions again." in answer.text
    [upload_row, regrade] = service.state.inbox.gradings(status["id"])
    assert regrade.regrade_of == upload_row.id and regrade.received_at == upload_row.received_at
    wait_until(lambda: (r := service.state.inbox.get(regrade.id)) is not None and r.status == "graded",
               timeout=180)
    again = stored(service, regrade.id)
    assert again.exam["late"]["status"] == "on_time" and again.penalty == 0 and again.score == on_time.score
    assert "after the deadline" not in " ".join(again.notes)

    listed = browser.get(service.url + "/student/submissions.json").json()["submissions"]
    assert [s["id"] for s in listed] == [status["id"]]  # the regrade is not an upload
    assert [h["kind"] for h in listed[0]["history"]] == ["graded", "regraded"]
    assert listed[0]["score"] == on_time.score
    page_text = browser.get(service.url + "/student").text
    assert re.search(r'<li class="regraded">regraded <time datetime="[^"]+">', page_text)

    late = upload(browser, service.url, [example("ayesha.zip")], page)  # a new upload now: it is late
    assert late.status_code == 202, late.text
    late_status = wait_graded(browser, service.url, late.json()["status_url"], timeout=180)
    late_result = stored(service, late_status["id"])
    assert late_result.exam["late"]["status"] == "late" and late_result.exam["late"]["periods"] == 2
    assert late_result.penalty == pytest.approx(late_result.raw_score * 0.2)
