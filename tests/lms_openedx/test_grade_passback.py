"""Grade passback to Open edX's own code: the tool's client assertion is checked by edX's `access_token`
(against the keyset the tool publishes), its bearer token and scopes by edX's consumer and permission
class, its score by edX's LtiAgsScoreSerializer and LtiAgsScore model. An exam's score is held until its
release, then sent once, final."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from served import Served, example, upload, wait_graded

from autograder.grading.results import SubmissionResult
from autograder.ledger.inbox import Received

from .conftest import EXAM, EXAM_DEADLINE, EXAM_OPENS
from .edx_platform import EdxPlatform, Person, platform_key
from .launches import launch

SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"


@contextmanager
def passbacks(service: Served) -> Iterator[list[Future[Any]]]:
    """Each passback the grading queue starts after a grading, kept so the test can wait for it."""
    queue = service.state.queue
    original = queue.on_graded
    assert original is not None
    futures: list[Future[Any]] = []
    lock = threading.Lock()

    def kept(row: Received, result: SubmissionResult) -> Any:
        future = original(row, result)
        with lock:
            futures.append(future)  # type: ignore[arg-type]
        return future

    queue.on_graded = kept  # type: ignore[attr-defined]
    try:
        yield futures
    finally:
        queue.on_graded = original  # type: ignore[attr-defined]


def settled(futures: list[Future[Any]], count: int = 1, timeout: float = 180.0) -> None:
    until(lambda: len(futures) >= count, timeout)
    for future in list(futures):
        future.result(timeout=timeout)


def until(what: Callable[[], Any], timeout: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = what()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout} s")


def drained(service: Served) -> None:
    """Everything the passback thread was given so far is done (it runs one task at a time, in order)."""
    assert service.state.passback is not None
    service.state.passback.executor.submit(lambda: None).result(timeout=120)


def test_a_graded_upload_reaches_edx_as_its_serializer_takes_it(edx: EdxPlatform, service: Served):
    student = Person("ayesha_openedx", name="Ayesha Rahman")
    tokens = len(edx.token_answers)
    with passbacks(service) as futures:
        browser, page = launch(edx, student, custom={"assignment": "nn_module"})
        sent = upload(browser, service.url, [example("maya.zip")], page.text)
        assert sent.status_code == 202, sent.text
        status = wait_graded(browser, service.url, sent.json()["status_url"], timeout=300)
        assert status["status"] == "graded" and 0 < status["score"] < status["max_score"] == 100
        settled(futures)
    granted = edx.token_answers[tokens:]
    assert granted and all("refused" not in t for t in granted), granted  # edX took the client assertion
    assert SCORE_SCOPE in granted[-1]["scope"].split()
    assert edx.score_refusals == []
    [score] = edx.scores_of(student)  # validated by edX's serializer and its model's full_clean
    assert score.user_id == student.external_id
    assert score.data["score_given"] == status["score"] and score.data["score_maximum"] == 100
    assert score.data["activity_progress"] == "Completed" and score.data["grading_progress"] == "FullyGraded"
    assert abs((score.data["timestamp"] - datetime.now(score.data["timestamp"].tzinfo)).total_seconds()) < 600
    assert score.data["comment"].startswith(f"nn_module: {status['score']:g}/100.")


def test_an_exams_score_is_held_until_its_release_then_sent_once(edx: EdxPlatform, service: Served):
    clock = service.state.settings.clock
    student = Person("exam_emon")
    clock.fixed = EXAM_OPENS + timedelta(minutes=30)  # the exam is open
    try:
        with passbacks(service) as futures:
            browser, page = launch(edx, student, custom={"assignment": EXAM})
            assert page.status_code == 200, page.text[:500]
            sent = upload(browser, service.url, [example("maya.zip")], page.text)
            assert sent.status_code == 202, sent.text
            graded = wait_graded(browser, service.url, sent.json()["status_url"], timeout=300)
            assert graded["status"] == "graded"
            settled(futures)
        drained(service)
        assert edx.scores_of(student) == []  # held: before its deadline the exam shows nothing
        clock.fixed = EXAM_DEADLINE + timedelta(minutes=5)  # released: the deadline passed
        assert service.state.passback is not None
        service.state.passback.wake()
        until(lambda: edx.scores_of(student))
        for _ in range(2):  # the release clock's next looks, and the instructor's publish: nothing again
            service.state.passback.wake()
            time.sleep(0.6)
            drained(service)
        report = service.state.passback.publish(EXAM)
        assert report is not None and report.sent == [] and report.up_to_date
    finally:
        clock.fixed = None
    [score] = edx.scores_of(student)
    assert score.data["grading_progress"] == "FullyGraded" and score.data["activity_progress"] == "Completed"
    assert score.data["score_maximum"] == 100 and score.data["score_given"] > 0
    assert edx.score_refusals == []


def test_a_token_edx_no_longer_accepts_is_fetched_again(edx: EdxPlatform, service: Served):
    """edX answers 403, not RFC 6750's 401, to a bearer token it cannot verify (its authentication class
    names no WWW-Authenticate scheme, so DRF says 403): here its key changed since the token was issued."""
    first, second = Person("token_tania"), Person("token_tuhin")
    original = edx.private_key, edx.key_id
    with passbacks(service) as futures:
        browser, page = launch(edx, first, custom={"assignment": "nn_module"})
        sent = upload(browser, service.url, [example("maya.zip")], page.text)
        wait_graded(browser, service.url, sent.json()["status_url"], timeout=300)
        settled(futures)
        assert len(edx.scores_of(first)) == 1  # the tool holds a token for edX's line item now
        browser, page = launch(edx, second, custom={"assignment": "nn_module"})
        tokens = len(edx.token_answers)
        edx.private_key, edx.key_id = platform_key()  # edX's key is rotated: the held token is void
        try:
            sent = upload(browser, service.url, [example("ayesha.zip")], page.text)
            wait_graded(browser, service.url, sent.json()["status_url"], timeout=300)
            settled(futures, 2)
            assert len(edx.scores_of(second)) == 1, "the score was refused with the void token"
            assert len(edx.token_answers) == tokens + 1  # one fresh token, asked for once
        finally:
            edx.private_key, edx.key_id = original
