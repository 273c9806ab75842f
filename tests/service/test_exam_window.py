"""The exam's rules on the served pages: inside the window an upload is graded and, before the deadline,
the student sees the public checks only (check = "public"); before the exam opens nothing is accepted."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from browser import Browser
from conftest import sandbox_works
from served import example, serving, upload, wait_graded

from autograder.config import ExamConfig, Kit
from autograder.service.settings import ServiceSettings

HOUR = timedelta(hours=1)


def with_exam(kit: Kit, opens: timedelta, check: str = "public") -> Kit:
    now = datetime.now(UTC)
    target = kit.assignment("nn_module")
    exam = ExamConfig(check=check, start=now + opens, deadline=now + opens + 2 * HOUR,
                      cutoff=now + opens + 3 * HOUR)
    assignments = {**kit.assignments, "nn_module": dataclasses.replace(target, exam=exam)}
    return dataclasses.replace(kit, assignments=assignments)


def test_an_open_exam_grades_and_shows_only_the_public_checks_until_the_deadline(kit: Kit, tmp_path: Path):
    settings = ServiceSettings(with_exam(kit, -HOUR), tmp_path / "data", demo=True,
                               sandbox=sandbox_works(kit))
    with serving(settings) as served:
        browser = Browser()
        page = browser.get(f"{served.url}/demo/student").text
        sent = upload(browser, served.url, [example("maya.zip")], page)
        assert sent.status_code == 202, sent.text
        status = wait_graded(browser, served.url, sent.json()["status_url"])
        assert status["status"] == "graded" and "public checks only" in status["note"]
        stored = served.state.inbox.result(status["id"])
        assert stored is not None
        public = [c for t in stored["tasks"] for c in t["checks"] if c["public"]]
        hidden = [c for t in stored["tasks"] for c in t["checks"] if not c["public"]]
        assert public and hidden and status["max_score"] == sum(c["max_score"] for c in public)
        feedback = browser.get(served.url + status["feedback_url"]).text
        assert len(re.findall(r'<div class="check (?:passed|failed)">', feedback)) == len(public)
        shown_titles = {p["title"] for p in public}
        assert all(c["title"] not in feedback for c in hidden if c["title"] not in shown_titles)


def test_nothing_is_accepted_before_the_exam_opens(kit: Kit, tmp_path: Path):
    settings = ServiceSettings(with_exam(kit, HOUR), tmp_path / "data", demo=True, sandbox=sandbox_works(kit))
    with serving(settings) as served:
        browser = Browser()
        page = browser.get(f"{served.url}/demo/student").text
        refused = upload(browser, served.url, [example("maya.zip")], page)
        assert refused.status_code == 403 and "The exam opens at" in refused.json()["error"]
        assert served.state.inbox.of_student("nn_module", "demo-student") == []
