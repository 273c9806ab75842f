"""Exam files that hold another variant's numbers and not their own (host side; read, never run).

Each exam variant writes its own numbers into the reference code (graders' reference_variants):
`nn.Linear(3, 24)` for one student, `nn.Linear(3, 32)` for another. An option's *marks* are the
constants its reference code has that the same code with the knob's other options lacks, so what
every option shares (`3`, the output width `1`) is nobody's mark. A student's file is listed when,
in its code (docstrings and comments aside), it holds every mark of another option of a knob and
not all of its own, with at least MIN_EVIDENCE such constants that are neither the student's own
marks nor everyday numbers (0, 1, 2, 0.5), nor the lesson's option (everyone saw the lesson), nor
in the stub's code. The listing names the classmates whose variant has those options:
strong evidence for the instructor's review, separate from similarity, never a deduction.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from autograder.config import Assignment
from autograder.exam.variants import Variant, VariantSpace, show
from autograder.integrity.similarity import CLASS, Document
from autograder.pysource import parse_python

MIN_EVIDENCE = 2
EVERYDAY = frozenset({("n", -1.0), ("n", 0.0), ("n", 1.0), ("n", 2.0), ("n", 0.5)})
Mark = tuple[str, Any]  # ("n", 16.0) or ("s", "eta")


@dataclass(frozen=True)
class ConstantsFinding:
    """A task file holding the numbers of another exam variant than the student's own."""

    student: str
    task: str
    found: dict[str, Any]  # knob -> the option whose marks the file holds
    own: dict[str, Any]  # knob -> the student's own option
    evidence: tuple[str, ...]  # the constants that point to the other option, as written
    lines: tuple[int, ...]  # where they are
    owners: tuple[str, ...]  # classmates whose variant has every option found

    def found_text(self) -> str:
        return ", ".join(f"{k} = {show(v)}" for k, v in self.found.items())

    def own_text(self) -> str:
        return ", ".join(f"{k} = {show(v)}" for k, v in self.own.items())


def code_constants(text: str) -> dict[Mark, list[int]] | None:
    """The constants of a file's code (docstrings and bare strings aside) -> their lines."""
    try:
        tree = parse_python(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    bare = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    found: dict[Mark, list[int]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or id(node) in bare or isinstance(node.value, bool):
            continue
        mark = _mark(node.value)
        if mark is not None:
            found.setdefault(mark, []).append(node.lineno)
    return found


def _mark(value: Any) -> Mark | None:
    if isinstance(value, int | float):
        return ("n", float(value))
    if isinstance(value, str) and value.isidentifier():
        return ("s", value)
    return None


def _shown(mark: Mark) -> str:
    kind, value = mark
    return f'"{value}"' if kind == "s" else f"{value:g}"


@dataclass(frozen=True)
class KnobMarks:
    knob: str
    marks: tuple[frozenset[Mark], ...]  # per option, in grading.toml's order
    lesson: int | None  # the option the lesson's own reference has


def option_marks(assignment: Assignment, graders: Any) -> dict[str, list[KnobMarks]]:
    """Task -> the marks of every option of every knob its reference code depends on."""
    space = VariantSpace.of(assignment)
    params_module, rewriter = graders.module("params"), graders.module("reference_variants")
    if not space.knobs or params_module is None or rewriter is None:
        return {}
    from autograder.integrity.corpus import stub_text

    out: dict[str, list[KnobMarks]] = {}
    for task in assignment.tasks:
        path = assignment.solutions / task.file
        if not path.is_file():
            continue
        lesson_text = path.read_text(encoding="utf-8")
        lesson = Counter(_counted(lesson_text))
        natural = set(code_constants(stub_text(assignment, task.file, task.id)) or {})  # in every file
        knobs = []
        for knob, options in space.knobs:
            counts = [
                Counter(
                    _counted(
                        rewriter.variant_source(task.file, lesson_text, params_module.for_variant({knob: o}))
                    )
                )
                for o in options
            ]
            common = counts[0].copy()
            for c in counts[1:]:
                common &= c
            marks = tuple(frozenset(set(c - common) - natural) for c in counts)
            if any(marks):
                lesson_at = next((i for i, c in enumerate(counts) if c == lesson), None)
                knobs.append(KnobMarks(knob, marks, lesson_at))
        if knobs:
            out[task.id] = knobs
    return out


def _counted(text: str) -> list[Mark]:
    return [m for m, lines in (code_constants(text) or {}).items() for _ in lines]


def find_swapped_constants(
    documents: Sequence[Document],
    marks: Mapping[str, list[KnobMarks]],
    space: VariantSpace,
    variant_of: Callable[[str], Variant | None],
) -> list[ConstantsFinding]:
    """This class's task files that hold another variant's marks and not their own."""
    students = sorted({d.source.name for d in documents if d.source.side == CLASS})
    variants = {s: variant_of(s) for s in students}
    position = {knob: i for i, (knob, _) in enumerate(space.knobs)}
    findings = []
    for doc in documents:
        variant = variants.get(doc.source.name) if doc.source.side == CLASS else None
        if variant is None or doc.task not in marks:
            continue
        held = code_constants(doc.text)
        if not held:
            continue
        found: dict[str, int] = {}
        evidence: set[Mark] = set()
        for km in marks[doc.task]:
            own = variant.indices[position[km.knob]]
            if km.marks[own] and km.marks[own] <= held.keys():
                continue  # their own numbers are there: whatever else is, is not a swap
            best: tuple[int, int, set[Mark]] | None = None
            for i, option_marks_ in enumerate(km.marks):
                if i in (own, km.lesson) or not option_marks_ or not option_marks_ <= held.keys():
                    continue
                telling = set(option_marks_ - km.marks[own]) - EVERYDAY
                if telling and (best is None or len(telling) > len(best[2])):
                    best = (i, len(telling), telling)
            if best is not None:
                found[km.knob] = best[0]
                evidence |= best[2]
        if not found or len(evidence) < MIN_EVIDENCE:
            continue
        own_choices = {k: variant.choices[k] for k in found}
        found_choices = {k: space.options(k)[i] for k, i in found.items()}
        owners = tuple(
            s
            for s in students
            if s != doc.source.name
            and variants[s] is not None
            and all(variants[s].indices[position[k]] == i for k, i in found.items())  # type: ignore[union-attr]
        )
        findings.append(
            ConstantsFinding(
                doc.source.name,
                doc.task,
                found_choices,
                own_choices,
                tuple(sorted(_shown(m) for m in evidence)),
                tuple(sorted({line for m in evidence for line in held[m]})),
                owners,
            )
        )
    return sorted(findings, key=lambda f: (f.student, f.task))
