"""`publish lti` follows the release rule and sends the adjusted score (the tests' LTI platform, 127.0.0.1).

Proves: a held assignment sends nothing (the report names who is held) and records nothing sent; a
release at a moment sends nothing before it and everything from it; the score sent is the grade as
it counts (the instructor's adjustment applied, in the comment too); an exam before its deadline
with public checks is sent as its public part, Pending, and a student's extension holds theirs
longer; the CLI says who is held.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import ROOT, make_result
from lti_platform import LocalPlatform

from autograder.cli.lti import publish
from autograder.config import ExamConfig, Kit
from autograder.ledger import instructor
from autograder.ledger.book import Gradebook
from autograder.ledger.release import AT, HELD
from autograder.platforms.lti.ags import RetryPolicy
from autograder.platforms.lti.config import PlatformConfig, load_platform
from autograder.platforms.lti.publish import publish_lti

CLIENT_ID, KEY_ID = "autograder-tool", "tool-key-1"
FAST = RetryPolicy(attempts=2, base_delay=0.01, max_delay=0.05, connect_timeout=2.0, read_timeout=10.0)
T0 = datetime(2025, 12, 14, 6, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
USERS = {"jdoe": "user-jdoe", "ayesha": "user-ayesha"}


@pytest.fixture
def platform(tool_key: tuple[Path, dict[str, Any]]) -> Iterator[LocalPlatform]:
    with LocalPlatform(tool_key[1], client_id=CLIENT_ID, max_lifetime=60.0) as running:
        yield running


@pytest.fixture
def setup(tmp_path: Path, kit: Kit, platform: LocalPlatform,
          tool_key: tuple[Path, dict[str, Any]]) -> tuple[Path, Path, Path, str]:
    """OUT with jdoe (85) and ayesha (100), a roster, PLATFORM.toml: (out, platform, roster, line item)."""
    target = kit.assignment("nn_module")
    out = tmp_path / "out"
    book = Gradebook(out / "gradebook.sqlite")
    try:
        book.record(make_result(target, "jdoe", {"delivery": 10, "dropout": 5}))
        book.record(make_result(target, "ayesha"))
    finally:
        book.close()
    roster = tmp_path / "roster.csv"
    roster.write_text("student,lti_user_id\n" + "".join(f"{s},{u}\n" for s, u in USERS.items()), "utf-8")
    lineitem = platform.add_lineitem("nn.Module", 100.0)
    values = {"issuer": platform.issuer, "client_id": CLIENT_ID, "deployment_id": platform.deployment_id,
              "token_url": platform.token_url, "key_id": KEY_ID, "private_key": str(tool_key[0]),
              "assignment": "nn_module", "lineitem": lineitem}
    toml = tmp_path / "platform.toml"
    toml.write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in values.items()), "utf-8")
    return out, toml, roster, lineitem


def record(out: Path, act: Any) -> None:
    book = Gradebook(out / "gradebook.sqlite")
    try:
        act(book)
    finally:
        book.close()


def test_publish_follows_the_release_and_sends_the_adjusted_score(kit: Kit, platform: LocalPlatform,
                                                                   setup: tuple[Path, Path, Path, str]):
    out, toml, roster, lineitem = setup
    target = kit.assignment("nn_module")
    config: PlatformConfig = load_platform(toml)
    record(out, lambda b: instructor.release(b, target.id, HELD, "prof"))
    held = CliRunner().invoke(publish, ["lti", str(out), "--platform", str(toml), "--roster", str(roster),
                                        "--kit", str(ROOT), "--retries", "2", "--retry-delay", "0.01"])
    assert held.exit_code == 0, held.output
    assert "held by the release rule (sent once released): ayesha, jdoe" in held.output
    assert "held 2 (not released yet)" in held.output and platform.scores(lineitem) == {}

    record(out, lambda b: instructor.adjust(b, target, "jdoe", 4, "the grader missed your fix", "prof",
                                            task="delivery"))
    record(out, lambda b: instructor.release(b, target.id, AT, "prof", at=T0 + HOUR))
    before = publish_lti(out, config, roster=roster, retry=FAST, kit=kit, now=T0)
    assert sorted(before.held) == ["ayesha", "jdoe"] and before.sent == []
    after = publish_lti(out, config, roster=roster, retry=FAST, kit=kit, now=T0 + HOUR)
    assert sorted(after.sent) == ["ayesha", "jdoe"]
    jdoe = platform.scores(lineitem)["user-jdoe"]
    assert (jdoe["scoreGiven"], jdoe["gradingProgress"]) == (89.0, "FullyGraded")
    assert "89/100" in jdoe["comment"]


def test_publish_sends_an_exams_public_part_until_each_students_own_deadline(
        kit: Kit, platform: LocalPlatform, setup: tuple[Path, Path, Path, str]):
    out, toml, roster, lineitem = setup
    target = kit.assignment("nn_module")
    exam = dataclasses.replace(target, exam=ExamConfig(check="public", deadline=T0 + HOUR, late_penalty=10,
                                                       cutoff=T0 + 4 * HOUR))
    exam_kit = dataclasses.replace(kit, assignments={**kit.assignments, "nn_module": exam})
    later = [instructor.ExtensionAsked("jdoe", T0 + 3 * HOUR)]
    record(out, lambda b: instructor.extend(b, exam, later, "prof"))
    config = load_platform(toml)
    publish_lti(out, config, roster=roster, retry=FAST, kit=exam_kit, now=T0 + 2 * HOUR)
    scores = platform.scores(lineitem)
    ayesha, jdoe = scores["user-ayesha"], scores["user-jdoe"]
    assert (ayesha["scoreGiven"], ayesha["gradingProgress"]) == (100.0, "FullyGraded")  # past her deadline
    assert jdoe["gradingProgress"] == "Pending" and jdoe["scoreMaximum"] == 50.0  # the public half only
    assert "Public checks only until the deadline (2025-12-14 09:00:00 UTC)" in jdoe["comment"]
    publish_lti(out, config, roster=roster, retry=FAST, kit=exam_kit, now=T0 + 3 * HOUR)
    jdoe = platform.scores(lineitem)["user-jdoe"]
    assert (jdoe["scoreGiven"], jdoe["scoreMaximum"], jdoe["gradingProgress"]) == (85.0, 100.0, "FullyGraded")
