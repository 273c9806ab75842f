"""The service's rules on their own: the release rule, which grading counts, regrades in the inbox, the
door an upload passes, the data folder's modes, frame-ancestors in PLATFORM.toml, times in texts."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import re
import stat
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import ROOT, make_result

from autograder.config import ExamConfig, Kit, load_kit
from autograder.errors import ConfigError
from autograder.grading.provenance import grader_digest
from autograder.ledger import grading_claims
from autograder.ledger.book import Gradebook
from autograder.ledger.inbox import DUPLICATE_SECONDS, Inbox
from autograder.platforms.lti.errors import LtiError
from autograder.platforms.lti.scores import score_body, score_fingerprint
from autograder.service import door, security
from autograder.service.lti_launch import Launch
from autograder.service.release import ALL, NONE, PUBLIC, next_change, release_of, visible
from autograder.service.settings import load_launch
from autograder.service.texts import texts, with_times

HOUR = timedelta(hours=1)
T0 = datetime(2025, 12, 14, 6, 0, tzinfo=UTC)
EXAMPLES = ROOT / "examples" / "class"


def exam(kit: Kit, check: str, deadline: datetime = T0 + HOUR):
    config = ExamConfig(check=check, start=T0 - HOUR, deadline=deadline, cutoff=deadline + 2 * HOUR)
    return dataclasses.replace(kit.assignment("nn_module"), exam=config)


# -- the release rule ------------------------------------------------------------------------------
def test_the_release_rule_holds_an_exam_back_until_its_deadline_and_homework_never(kit: Kit):
    homework = kit.assignment("nn_module")
    assert release_of(homework, "ada", T0) .level == ALL
    public, hidden = exam(kit, "public"), exam(kit, "none")
    assert release_of(public, "ada", T0) == release_of(public, "bob", T0)
    assert (release_of(public, "ada", T0).level, release_of(public, "ada", T0).until) == (PUBLIC, T0 + HOUR)
    assert release_of(hidden, "ada", T0).level == NONE
    assert release_of(public, "ada", T0 + HOUR).level == ALL  # the deadline itself releases
    assert next_change(public, ["ada"], T0) == T0 + HOUR and next_change(public, ["ada"], T0 + HOUR) is None
    assert next_change(homework, ["ada"], T0) is None


def test_what_is_visible_is_the_public_checks_before_release_and_all_after(kit: Kit):
    target = exam(kit, "public")
    result = make_result(target, "ada", {"tinynet": 5, "delivery": 10})
    shown = visible(result, release_of(target, "ada", T0))
    assert shown is not None and all(c.public for t in shown.tasks for c in t.checks)
    assert shown.max_score == sum(c.max_score for t in result.tasks for c in t.checks if c.public)
    assert shown.score == sum(c.score for t in result.tasks for c in t.checks if c.public) < result.score
    assert visible(result, release_of(exam(kit, "none"), "ada", T0)) is None
    assert visible(result, release_of(target, "ada", T0 + 2 * HOUR)) == result


def test_a_partly_released_score_goes_to_the_lms_as_pending():
    final = score_body("u1", 21, 48, "c", "2025-01-01T00:00:00.000+00:00")
    pending = score_body("u1", 21, 48, "c", "2025-01-01T00:00:00.000+00:00", final=False)
    assert (final["activityProgress"], final["gradingProgress"]) == ("Completed", "FullyGraded")
    assert (pending["activityProgress"], pending["gradingProgress"]) == ("Submitted", "Pending")
    # a final score's fingerprint is what it was before pending scores existed: nothing is sent again
    before = hashlib.sha256(json.dumps(["u1", 21, 48, "c"]).encode()).hexdigest()
    assert score_fingerprint("u1", 21, 48, "c") == before != score_fingerprint("u1", 21, 48, "c", final=False)


# -- counts = "latest" | "best" --------------------------------------------------------------------
def test_counts_is_a_key_of_grading_toml_and_changes_no_grader_digest(kit: Kit, tmp_path: Path):
    assert kit.assignment("nn_module").counts == "latest"
    text = (ROOT / "grading.toml").read_text(encoding="utf-8")
    (tmp_path / "solutions").symlink_to(ROOT / "solutions")
    title = 'title = "Building models with nn.Module"'
    (tmp_path / "grading.toml").write_text(text.replace(title, title + '\ncounts = "best"'))
    best = load_kit(tmp_path)
    assert best.assignment("nn_module").counts == "best"
    assert best.assignment("nn_module_exam").counts == "best"  # `extends` takes it along
    assert grader_digest(best, best.assignment("nn_module"), "en") == \
        grader_digest(kit, kit.assignment("nn_module"), "en")
    (tmp_path / "grading.toml").write_text(text.replace(title, title + '\ncounts = "first"'))
    with pytest.raises(ConfigError, match=r"assignments\.nn_module\.counts must be one of"):
        load_kit(tmp_path)


def graded(inbox: Inbox, kit: Kit, student: str, lost: dict[str, float], counts: str,
           digest: str = "d1", when: datetime = T0) -> int:
    """An upload of `student` graded with a hand-built result; its upload id."""
    row = inbox.add(assignment="nn_module", student=student, user_id="u", lineitem="", lang="en",
                    filename="f.zip", kind="zip", upload=os.urandom(8), now=when)
    finish(inbox, kit, row.id, student, lost, counts, digest)
    return row.id


def finish(inbox: Inbox, kit: Kit, row_id: int, student: str, lost: dict[str, float], counts: str,
           digest: str = "d1") -> None:
    with inbox.lock, inbox.db:
        grading_claims.claim_row(inbox.db, inbox.me, row_id)  # taken by this inbox's grading process
    result = make_result(kit.assignment("nn_module"), student, lost)
    result = dataclasses.replace(result, provenance={**result.provenance, "grader_digest": digest,
                                                     "signature": f"sig-{row_id}"})
    inbox.finish(row_id, result, counts=counts)


def current_score(inbox: Inbox, student: str) -> float:
    [found] = [r for r in inbox.book.current("nn_module") if r.student == student]
    return found.score


def test_latest_counts_the_newest_upload_even_when_an_older_one_finishes_last(kit: Kit, tmp_path: Path):
    inbox = Inbox(Gradebook(tmp_path / "gradebook.sqlite"))
    old = inbox.add(assignment="nn_module", student="ada", user_id="u", lineitem="", lang="en",
                    filename="a.zip", kind="zip", upload=b"old", now=T0)
    graded(inbox, kit, "ada", {"delivery": 10}, "latest", when=T0 + timedelta(minutes=1))
    finish(inbox, kit, old.id, "ada", {}, "latest")  # the older upload's grading lands later
    assert current_score(inbox, "ada") == 90  # the newer upload's grade stays current
    assert len(inbox.book.history("nn_module", "ada")) == 2  # the other is history, not lost
    inbox.book.close()


def test_best_counts_the_highest_grade_by_the_same_graders(kit: Kit, tmp_path: Path):
    inbox = Inbox(Gradebook(tmp_path / "gradebook.sqlite"))
    first = graded(inbox, kit, "ada", {"tinynet": 5}, "best")
    graded(inbox, kit, "ada", {"delivery": 10}, "best", when=T0 + timedelta(minutes=1))
    assert current_score(inbox, "ada") == 95  # a worse upload does not replace the best one
    graded(inbox, kit, "ada", {"tinynet": 5}, "best", when=T0 + timedelta(minutes=2))
    assert current_score(inbox, "ada") == 95  # a tie: the newer one (same grade)
    graded(inbox, kit, "ada", {"delivery": 10, "tinynet": 5}, "best", digest="d2",
           when=T0 + timedelta(minutes=3))
    assert current_score(inbox, "ada") == 85  # new graders: the old best is stale and gives way
    regrade = inbox.copy_for_regrade(inbox.get(first))  # type: ignore[arg-type]
    assert regrade is not None
    finish(inbox, kit, regrade.id, "ada", {"tinynet": 5}, "best", digest="d2")
    assert current_score(inbox, "ada") == 95  # regraded by the new graders, it is the best again
    inbox.book.close()


def test_a_regrade_keeps_the_receipt_time_and_is_no_upload_of_its_own(kit: Kit, tmp_path: Path):
    inbox = Inbox(Gradebook(tmp_path / "gradebook.sqlite"))
    upload = inbox.get(graded(inbox, kit, "ada", {}, "latest"))
    assert upload is not None
    regrade = inbox.copy_for_regrade(upload, now=T0 + 5 * HOUR)
    assert regrade is not None and regrade.received_at == upload.received_at
    assert regrade.regrade_of == upload.id and regrade.upload_id == upload.id
    assert inbox.copy_for_regrade(upload) is None  # one regrade of an upload waits at a time
    assert [r.id for r in inbox.of_student("nn_module", "ada")] == [upload.id]
    assert [r.id for r in inbox.gradings(upload.id)] == [upload.id, regrade.id]
    assert inbox.to_regrade("nn_module", "latest", "nobody") == []
    inbox.book.close()


def test_the_same_bytes_at_once_are_one_upload_and_later_a_new_one(tmp_path: Path):
    inbox = Inbox(Gradebook(tmp_path / "gradebook.sqlite"))
    fields = dict(assignment="nn_module", student="ada", user_id="u", lineitem="", lang="en",
                  filename="a.zip", kind="zip", upload=b"same")
    first, again = inbox.accept(**fields, now=T0), inbox.accept(**fields, now=T0 + timedelta(seconds=1))
    assert not first[1] and again == (first[0], True)
    other = inbox.accept(**{**fields, "student": "bob"}, now=T0)
    assert not other[1]  # another student's same bytes are theirs
    with inbox.lock, inbox.db:
        inbox.db.execute("UPDATE received SET status = 'graded'")
    later = inbox.accept(**fields, now=T0 + timedelta(seconds=DUPLICATE_SECONDS + 1))
    assert not later[1] and later[0].id != first[0].id
    inbox.book.close()


# -- the door --------------------------------------------------------------------------------------
def zipped(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


@pytest.mark.parametrize(("name", "kind", "data", "says"), [
    ("empty.zip", "zip", zipped({}), "holds none of this assignment's files (tinynet.py, delivery.py"),
    ("notes.zip", "zip", zipped({"notes.txt": b"hi", "helper.py": b"x = 1\n"}), "holds none of"),
    ("broken.zip", "zip", b"PK\x03\x04 not really", "is not a readable zip file"),
    # Issue #37: the real reason, not "holds none of this assignment's files"
    ("many.zip", "zip", zipped({"tinynet.py": b"x = 1\n", **{f"d/{i}.txt": b"" for i in range(2001)}}),
     "holds 2002 entries, more than a submission may (2000)"),
    ("hw.ipynb", "ipynb", b"{not json", "is not a readable notebook"),
    ("hw.ipynb", "ipynb", json.dumps({"cells": [], "nbformat": 4, "metadata": {}}).encode(), "no code cell"),
])
def test_an_upload_nothing_can_be_graded_of_is_refused_naming_the_students_file(
        kit: Kit, name: str, kind: str, data: bytes, says: str):
    found = door.refusal(name, kind, data, kit.assignment("nn_module"), texts("en"))
    assert found is not None and says in found and f"`{name}`" in found and "nothing was submitted" in found
    assert re.search("[\u0980-\u09ff]", door.refusal(name, kind, data, kit.assignment("nn_module"),
                                                     texts("bn")) or "")


def test_a_gradable_upload_passes_the_door(kit: Kit):
    target = kit.assignment("nn_module")
    assert door.refusal("maya.zip", "zip", (EXAMPLES / "maya.zip").read_bytes(), target, texts("en")) is None
    assert door.refusal("x.zip", "zip", zipped({"tinynet.py": b"x = 1\n"}), target, texts("en")) is None


def test_the_graders_copy_is_named_as_the_student_named_it():
    assert door.spool_name("Maya HW2.zip", "zip") == "Maya HW2.zip"
    assert door.spool_name("<img src=x>.ipynb", "ipynb") == "<img src=x>.ipynb"
    assert door.spool_name("2 files (a.py, b.py)", "zip") == "files.zip"  # .py files the page packed
    assert door.spool_name("a/../b\0.zip", "zip") == "a_.._b_.zip"
    assert door.spool_name(".zip", "zip") == "files.zip"
    assert len(door.spool_name("ন" * 200 + ".zip", "zip").encode()) <= door.MAX_SPOOL_NAME


# -- files, headers' configuration, locales, texts ------------------------------------------------
def test_the_data_folder_is_its_owners_only(tmp_path: Path):
    fresh = tmp_path / "fresh" / "data"
    security.private_data(fresh)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o700
    assert stat.S_IMODE((fresh / "gradebook.sqlite").stat().st_mode) == 0o600
    data = tmp_path / "data"  # a folder from before, with a gradebook another umask made 0644
    data.mkdir(mode=0o755)
    for name in ("gradebook.sqlite", "gradebook.sqlite-wal", "session.key", "notes.txt"):
        (data / name).write_text("x")
        os.chmod(data / name, 0o644)
    security.private_data(data)
    for name in ("gradebook.sqlite", "gradebook.sqlite-wal", "session.key"):
        assert stat.S_IMODE((data / name).stat().st_mode) == 0o600, name
    assert stat.S_IMODE((data / "notes.txt").stat().st_mode) == 0o644  # not the service's: left alone


BASE = ('issuer = "https://lms.example"\nclient_id = "c"\ndeployment_id = "d"\n'
        'token_url = "https://lms.example/token"\nkey_id = "k"\nprivate_key = "tool.pem"\n[launch]\n'
        'auth_login_url = "https://sso.lms.example/auth"\n'
        'platform_jwks = \'{"keys": [{"kty": "RSA", "kid": "k1", "n": "sXch", "e": "AQAB"}]}\'\n')


def test_the_lms_origins_that_may_frame_the_tool_come_from_platform_toml(tmp_path: Path):
    path = tmp_path / "platform.toml"
    path.write_text(BASE)
    assert load_launch(path).framing_origins == ("https://lms.example", "https://sso.lms.example")
    path.write_text(BASE + 'frame_ancestors = ["https://school.instructure.com", "https://*.moodle.example"]\n')
    assert load_launch(path).framing_origins == ("https://school.instructure.com", "https://*.moodle.example")
    wrongs = (('["https://lms.example/path"]', "is not an origin"), ('["http://lms.example"]', "https"),
              ("3", "must be a list of origins"))
    for wrong, says in wrongs:
        path.write_text(BASE + f"frame_ancestors = {wrong}\n")
        with pytest.raises(LtiError, match=says):
            load_launch(path)


def test_times_are_written_in_the_launchs_locale_when_it_is_of_the_pages_language():
    who = Launch("ada", "u", "Ada", "nn_module", "bn", False, locale="bn-IN")
    assert who.time_locale == "bn-IN"
    assert dataclasses.replace(who, locale="en-US").time_locale == "bn-BD"  # a Bangla page, Bangla dates
    assert dataclasses.replace(who, lang="en", locale="en-US").time_locale == "en-US"
    assert dataclasses.replace(who, lang="en", locale="x<y").time_locale == "en-GB"
    text, parts = with_times(texts("en")["hidden_until_deadline"], deadline=T0)
    assert "2025-12-14 06:00:00 UTC" in text
    assert ["time", "2025-12-14T06:00:00Z"] in parts
    assert "".join(p[1] if p[0] == "text" else "2025-12-14 06:00:00 UTC" for p in parts) == text


def test_a_refusals_reason_shows_no_server_path(kit: Kit, tmp_path: Path):
    """Issue #37: the ledger's refusals name its file; a page names it "the gradebook", and no other path."""
    from types import SimpleNamespace

    from autograder.service.state import page_text

    data = tmp_path / "srv" / "data"
    state = SimpleNamespace(inbox=SimpleNamespace(book=SimpleNamespace(path=data / "gradebook.sqlite")),
                            settings=SimpleNamespace(data=data, kit=kit))
    said = page_text(f"'ada' has no grade of 'nn_module' in {data}/gradebook.sqlite; see /etc/x/y.log",
                     state)  # type: ignore[arg-type]
    assert said == "'ada' has no grade of 'nn_module' in the gradebook; see (a file on the server)"
    assert page_text("give 2/3 of the points, or 1/2", state) == "give 2/3 of the points, or 1/2"  # type: ignore[arg-type]
