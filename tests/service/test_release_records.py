"""`autograder release` and `adjust` on the service's ledger, through the tests' LTI platform.

Proves: a held assignment's grade is neither on the student's page nor sent to the LMS; `release
--now`, recorded by another process, is seen by the passback's release clock, which sends the held
score; an adjustment is sent as the adjusted score, but not while the assignment is held again;
`release --at` sends it when its time comes (the clock moved), FullyGraded, with the adjusted total
in the comment, and the student's page shows that same adjusted score.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from click.testing import CliRunner
from conftest import ROOT
from lms import Lms, Person, launched, wait_until
from lti_platform import LocalPlatform
from served import Served, example, upload, wait_graded

from autograder.cli import main
from autograder.config import Kit
from autograder.grading.results import result_from_dict
from autograder.service.settings import Clock

T0 = datetime(2025, 12, 14, 6, 0, tzinfo=UTC)
AT = T0 + timedelta(hours=1)


def service_options(kit: Kit) -> dict[str, Any]:
    return {"clock": Clock(T0)}


def cli(service: Served, *args: str) -> None:
    """An instructor's command on the service's ledger (the file: the data folder holds no OUT files)."""
    done = CliRunner().invoke(main, [args[0], str(service.state.settings.gradebook), *args[1:],
                                     "--assignment", "nn_module", "--kit", str(ROOT)])
    assert done.exit_code == 0, done.output


def test_release_hold_now_and_at_decide_what_the_lms_is_sent(service: Served, platform: LocalPlatform):
    passback = service.state.passback
    assert passback is not None
    lms = Lms(platform, service.url, platform.add_lineitem("nn_module", 100.0), assignment="nn_module")
    cli(service, "release", "--hold")
    browser, page = launched(lms, Person("uid-rel-1", "rel1"))
    sent = upload(browser, service.url, [example("ayesha.zip")], page)
    assert sent.status_code == 202, sent.text
    status = wait_graded(browser, service.url, sent.json()["status_url"], timeout=240)
    assert status["score"] is None and status["feedback_url"] is None  # held: the page shows no score
    assert "your instructor shows the scores and feedback when they release them" in status["note"]
    report = passback.publish("nn_module")
    assert report is not None and report.held == ["rel1"] and report.sent == []
    assert "uid-rel-1" not in platform.scores(lms.lineitem)
    data = service.state.inbox.result(status["id"])
    assert data is not None
    graded = result_from_dict(data)

    cli(service, "release", "--now")  # another process: the release clock finds it in the ledger
    first = wait_until(lambda: platform.scores(lms.lineitem).get("uid-rel-1"), timeout=120)
    assert (first["scoreGiven"], first["gradingProgress"]) == (graded.score, "FullyGraded")
    page_now = browser.get(service.url + sent.json()["status_url"]).json()
    assert page_now["score"] == graded.score

    cli(service, "release", "--hold")
    cli(service, "adjust", "rel1", "--points", "-3", "--reason", "late cover page", "--author", "prof")
    held = passback.publish("nn_module")
    assert held is not None and held.held == ["rel1"]
    assert platform.scores(lms.lineitem)["uid-rel-1"]["scoreGiven"] == graded.score  # not sent while held

    cli(service, "release", "--at", AT.isoformat())
    assert passback.publish("nn_module").held == ["rel1"]  # type: ignore[union-attr]  # before its time
    waiting = browser.get(service.url + sent.json()["status_url"]).json()
    assert waiting["score"] is None  # the page says when: the release's moment, for the browser to write
    assert ["time", AT.isoformat().replace("+00:00", "Z")] in waiting["note_parts"]
    service.state.settings.clock.fixed = AT
    try:
        passback.wake()
        def adjusted() -> dict[str, Any] | None:
            found = platform.scores(lms.lineitem).get("uid-rel-1")
            return found if found is not None and found["scoreGiven"] == graded.score - 3 else None
        final = wait_until(adjusted, timeout=120)
        page_after = browser.get(service.url + sent.json()["status_url"]).json()
        assert page_after["score"] == graded.score - 3  # the page shows what the LMS holds: adjusted
    finally:
        service.state.settings.clock.fixed = T0
    assert final["gradingProgress"] == "FullyGraded"
    assert f"{graded.score - 3:g}/{graded.max_score:g}" in final["comment"]
