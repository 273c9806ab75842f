"""Exactly once across processes: grading processes sharing one gradebook never grade an upload twice
or lose one, whether both run at once or one is killed (SIGKILL) mid-grading."""

from __future__ import annotations

import dataclasses
import os
import signal
import sqlite3
import time
from pathlib import Path

from conftest import make_result, sandbox_works
from served import EXAMPLES

from autograder.config import Kit
from autograder.ledger.book import Gradebook
from autograder.ledger.grading_claims import Grader
from autograder.ledger.inbox import Inbox
from autograder.service.limits import SharedUploadRate
from autograder.service.production import start_grading, stop_process
from autograder.service.settings import ServiceSettings


def _add(inbox: Inbox, student: str, data: bytes = b"PK...") -> int:
    return inbox.add(assignment="nn_module", student=student, user_id="", lineitem="", lang="en",
                     filename=f"{student}.zip", kind="zip", upload=data).id


# -- the claims, two inboxes on one file (two processes' connections) ---------------------------------
def test_two_grading_inboxes_never_take_the_same_row_nor_record_the_others(kit: Kit, tmp_path: Path):
    path = tmp_path / "gradebook.sqlite"
    one, two = Inbox(Gradebook(path)), Inbox(Gradebook(path))
    two.me = dataclasses.replace(Grader.this_process(), owner="other-process")
    try:
        first = [_add(one, s) for s in ("ada", "bob", "cy")]
        again = _add(one, "ada", b"PK... second")  # ada's second upload: ada is one process's to grade
        taken_one = [r.id for r in one.take(2)]
        taken_two = [r.id for r in two.take(5)]
        assert taken_one == first[:2] and taken_two == [first[2]]  # never ada's second while one grades ada
        assert two.take(5) == []
        result = make_result(kit.assignment("nn_module"), "ada", {"tinynet": 5})
        two.finish(first[0], result)  # not its claim: nothing recorded, the row still one's
        found = one.get(first[0])
        assert found is not None and found.status == "grading" and one.book.history("nn_module", "ada") == []
        one.finish(first[0], result)
        assert one.book.history("nn_module", "ada") and one.graded_by(first[0]) == (one.me.host, os.getpid())
        assert [r.id for r in two.take(5)] == [again]  # ada is free again
    finally:
        one.close()
        two.close()


def test_rows_a_dead_process_held_are_queued_again_and_a_live_ones_are_not(tmp_path: Path):
    path = tmp_path / "gradebook.sqlite"
    dead, live, me = Inbox(Gradebook(path)), Inbox(Gradebook(path)), Inbox(Gradebook(path))
    dead.me = dataclasses.replace(dead.me, owner="dead", pid=2**22 + 7, started="1")  # no such process
    live.me = dataclasses.replace(live.me, owner="live")
    try:
        held_live, held_dead = _add(dead, "bob"), _add(dead, "ada")
        assert [r.id for r in live.take(1)] == [held_live] and [r.id for r in dead.take(1)] == [held_dead]
        assert [r.id for r in me.take(5)] == [held_dead]  # the dead one's: taken again, once more attempted
        again = me.get(held_dead)
        assert again is not None and again.attempts == 2
        assert me.graded_by(held_dead) == (me.me.host, os.getpid())
        bob = me.get(held_live)
        assert bob is not None and bob.status == "grading" and bob.attempts == 1
    finally:
        for inbox in (dead, live, me):
            inbox.close()


def test_two_web_workers_count_one_students_uploads_in_one_window(tmp_path: Path):
    now = [1000.0]
    path = tmp_path / "gradebook.sqlite"
    one, two = SharedUploadRate(path, 3, lambda: now[0]), SharedUploadRate(path, 3, lambda: now[0])
    try:
        assert [one.allow("ada"), two.allow("ada"), one.allow("ada")] == [0, 0, 0]
        assert two.allow("ada") == 60 and one.allow("ada") == 60  # the fourth, whichever worker takes it
        assert two.allow("bob") == 0  # each student has a window of their own
        now[0] += 60.5
        assert two.allow("ada") == 0
    finally:
        one.close()
        two.close()


# -- real grading processes ---------------------------------------------------------------------------
def _rows(path: Path) -> list[tuple[int, str, str, int]]:
    db = sqlite3.connect(path)
    try:
        return [(int(r[0]), str(r[1]), str(r[2]), int(r[3])) for r in
                db.execute("SELECT id, student, status, attempts FROM received ORDER BY id")]
    finally:
        db.close()


def _claims(path: Path) -> dict[int, int]:
    db = sqlite3.connect(path)
    try:
        return {int(r[0]): int(r[1]) for r in db.execute("SELECT row_id, pid FROM grading_claims")}
    finally:
        db.close()


def _ledger(path: Path) -> dict[str, int]:
    db = sqlite3.connect(path)
    try:
        return {str(r[0]): int(r[1]) for r in
                db.execute("SELECT student, COUNT(*) FROM gradings GROUP BY student")}
    finally:
        db.close()


def _wait(what, timeout: float = 600.0, every: float = 0.2):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = what()
        if found:
            return found
        time.sleep(every)
    raise AssertionError(f"not within {timeout} s")


def test_two_grading_processes_and_one_killed_mid_grading_grade_every_upload_once(kit: Kit, tmp_path: Path):
    settings = ServiceSettings(kit, tmp_path / "data", demo=True, sandbox=sandbox_works(kit))
    path = settings.gradebook
    students = sorted(p.stem for p in EXAMPLES.glob("*.zip"))
    settings.data.mkdir()
    inbox = Inbox(Gradebook(path))
    try:
        for student in students:  # waiting before any grading process runs: both race for them
            _add(inbox, student, (EXAMPLES / f"{student}.zip").read_bytes())
    finally:
        inbox.close()
    first, second = start_grading(settings), start_grading(settings)
    try:
        _wait(lambda: all(status == "graded" for _, _, status, _ in _rows(path)))
        assert _ledger(path) == dict.fromkeys(students, 1)  # one grading of each upload in the ledger
        assert all(attempts == 1 for *_, attempts in _rows(path))  # and each taken once: graded once
        assert set(_claims(path).values()) <= {first.pid, second.pid}

        # a second round: one process killed while it holds a row it grades
        inbox = Inbox(Gradebook(path))
        try:
            later = [_add(inbox, f"{s}-2", (EXAMPLES / f"{s}.zip").read_bytes()) for s in students]
        finally:
            inbox.close()

        def held_by_first() -> list[int]:
            states = {row_id: status for row_id, _, status, _ in _rows(path)}
            return [r for r, pid in _claims(path).items() if pid == first.pid and states[r] == "grading"]

        assert first.pid is not None

        def stopped_holding() -> list[int]:
            """Rows the first process grades, seen while it is stopped (SIGSTOP): it cannot finish them."""
            if not held_by_first():
                return []
            os.kill(first.pid, signal.SIGSTOP)  # type: ignore[arg-type]
            held = held_by_first()
            if not held:
                os.kill(first.pid, signal.SIGCONT)  # type: ignore[arg-type]
            return held

        victims = _wait(stopped_holding, every=0.05)
        os.kill(first.pid, signal.SIGKILL)
        first.join()  # reaped: its pid is gone from this machine, so its claims lapse at once
        _wait(lambda: all(status == "graded" for _, _, status, _ in _rows(path)))
        counts = _ledger(path)
        assert {s: counts.get(f"{s}-2") for s in students} == dict.fromkeys(students, 1)
        rows = {row_id: attempts for row_id, _, _, attempts in _rows(path)}
        claims = _claims(path)
        assert victims and all(r in later and claims[r] == second.pid and rows[r] == 2 for r in victims)
    finally:
        for process in (first, second):
            stop_process(process)
