"""An exam's upload window on the service, for a student with an extension (the ledger's).

Proves: after the class's cutoff an upload is refused, but not from a student whose own deadline
(and so their cutoff) is later, until their own cutoff; an exempt student has no cutoff at all;
the student's extension is read from the ledger the inbox shares.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from pathlib import Path

from autograder.config import ExamConfig, Kit
from autograder.exam.timing import Extension
from autograder.ledger import instructor
from autograder.ledger.book import Gradebook
from autograder.ledger.inbox import Inbox
from autograder.service.exam_rules import refusal, refusal_for

DEADLINE = datetime(2025, 12, 14, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


def test_an_extension_moves_the_students_own_cutoff(kit: Kit, tmp_path: Path):
    window = ExamConfig(check="public", start=DEADLINE - 3 * HOUR, deadline=DEADLINE, cutoff=DEADLINE + HOUR,
                        late_penalty=10)
    target = dataclasses.replace(kit.assignment("nn_module"), exam=window)
    after = DEADLINE + 2 * HOUR
    assert refusal(target, after) == ("closed", {"cutoff": DEADLINE + HOUR})
    later = Extension(DEADLINE + 3 * HOUR)
    assert refusal(target, after, later) is None
    assert refusal(target, DEADLINE + 5 * HOUR, later) == ("closed", {"cutoff": DEADLINE + 4 * HOUR})
    assert refusal(target, DEADLINE + 50 * HOUR, Extension(exempt=True)) is None
    assert refusal(target, DEADLINE - 4 * HOUR, later) == ("not_open", {"start": DEADLINE - 3 * HOUR})

    book = Gradebook(tmp_path / "g.sqlite")
    try:
        inbox = Inbox(book)
        instructor.extend(book, target, [instructor.ExtensionAsked("ada", DEADLINE + 3 * HOUR)], "prof")
        assert refusal_for(target, "ada", inbox, after) is None
        assert refusal_for(target, "bob", inbox, after) is not None
    finally:
        book.close()
