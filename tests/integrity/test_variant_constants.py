"""An exam file that holds another student's variant numbers, and not its own, is listed with that
variant's owners; its own numbers, the lesson's, or numbers every variant shares are not."""

from __future__ import annotations

import pytest

from autograder.exam.variants import VariantSpace
from autograder.grading.course import load_graders
from autograder.integrity.similarity import CLASS, Document, Source
from autograder.integrity.variant_constants import code_constants, find_swapped_constants, option_marks

SECRET = b"test-exam-secret-0123456789abcdef"


@pytest.fixture(scope="module")
def exam(kit):
    assignment = kit.assignment("nn_module_exam")
    graders = load_graders(assignment)
    return assignment, graders, VariantSpace.of(assignment), option_marks(assignment, graders)


def _source(assignment, graders, file: str, choices: dict) -> str:
    lesson = (assignment.solutions / file).read_text(encoding="utf-8")
    params = graders.module("params").for_variant(choices)
    return graders.module("reference_variants").variant_source(file, lesson, params)


def _students(space: VariantSpace, knob: str) -> dict[int, list[str]]:
    """Option index of `knob` -> students (s000, s001, ...) who drew it."""
    position = [k for k, _ in space.knobs].index(knob)
    drawn: dict[int, list[str]] = {}
    for n in range(200):
        student = f"s{n:03d}"
        drawn.setdefault(space.derive(SECRET, student).indices[position], []).append(student)
    return drawn


def test_marks_are_what_each_option_alone_writes(exam):
    _, _, space, marks = exam
    delivery = {m.knob: m for m in marks["delivery"]}
    hidden = delivery["delivery_hidden"]
    options = space.options("delivery_hidden")
    assert hidden.lesson == options.index([16, 8])
    assert hidden.marks[options.index([24, 12])] == {("n", 24.0), ("n", 12.0)}
    assert ("n", 3.0) not in set().union(*hidden.marks)  # the input width: every option has it
    heads = {m.knob: m for m in marks["containers"]}["twohead_heads"]
    assert {("s", "eta"), ("s", "delay")} <= heads.marks[
        space.options("twohead_heads").index({"eta": 1, "delay": 3})
    ]
    assert "tinynet" not in marks  # the graders' TinyNet width is in no student's code


def test_another_students_numbers_are_listed_with_their_owner(exam):
    assignment, graders, space, marks = exam
    drawn = _students(space, "delivery_hidden")
    lesson = space.options("delivery_hidden").index([16, 8])
    own_i, other_i = [i for i in sorted(drawn) if i != lesson][:2]
    ada, bob = drawn[own_i][0], drawn[other_i][0]
    variant = {s: space.derive(SECRET, s) for s in (ada, bob)}
    files = {
        ada: _source(assignment, graders, "delivery.py", variant[bob].choices),  # bob's file, handed in
        bob: _source(assignment, graders, "delivery.py", variant[bob].choices),
        drawn[own_i][1]: _source(
            assignment, graders, "delivery.py", variant[ada].choices
        ),  # ada's numbers, own
        drawn[other_i][1]: (assignment.solutions / "delivery.py").read_text(encoding="utf-8"),  # the lesson's
    }
    docs = [Document(Source(CLASS, s), "delivery", "delivery.py", text) for s, text in files.items()]
    everyone = sorted(files)

    def variant_of(student):
        return space.derive(SECRET, student)

    found = find_swapped_constants(docs, marks, space, variant_of)
    assert [(f.student, f.task) for f in found] == [(ada, "delivery")], found
    finding = found[0]
    assert finding.found["delivery_hidden"] == space.options("delivery_hidden")[other_i]
    assert finding.own["delivery_hidden"] == space.options("delivery_hidden")[own_i]
    assert bob in finding.owners and ada not in finding.owners
    assert set(finding.owners) <= set(everyone)
    assert finding.lines and all(isinstance(n, int) for n in finding.lines)


def test_numbers_in_docstrings_and_everyday_numbers_are_not_evidence():
    text = 'def f(x):\n    """nn.Linear(3, 24) then nn.Linear(24, 12)"""\n    return x * 2 + 1\n'
    assert code_constants(text) == {("n", 2.0): [3], ("n", 1.0): [3]}
    assert code_constants("def broken(:\n") is None
