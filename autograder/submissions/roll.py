"""The door of a batch: which entries of a submissions folder are whose, and which are refused and why.

Every entry is either a student's submission or named as skipped with its reason, never dropped
without a word. Two entries whose names map to one student id (`dup.zip` and `dup/`, `Rahim.zip`
and `rahim.zip`, a name in NFC and NFD) are refused together, naming each file: which of them is
the student's work is the instructor's call, so nothing is graded for that id until one is left.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from autograder.submissions.files import shown
from autograder.submissions.students import folder_name, raw_name, student_id

SUBMISSION_SUFFIXES = (".zip", ".py", ".ipynb")


@dataclass(frozen=True)
class Skipped:
    """An entry of the submissions folder that is not graded, and why (for the summary and report)."""

    name: str  # the entry's file name, as found
    reason: str
    student: str = ""  # the id it would have had, when it has one

    def describe(self) -> str:
        return f"{shown(self.name)}: {self.reason}"


@dataclass(frozen=True)
class Roll:
    """The submissions to grade, one per student id, and every entry skipped."""

    entries: tuple[tuple[str, Path], ...]  # (student id, submission), in id order
    skipped: tuple[Skipped, ...] = ()

    def beside(self, folders: Mapping[str, str]) -> Roll:
        """This roll with the ids whose folder another student already has (`folders`: folder ->
        student, as the ledger keeps them) refused: a 48-bit hash collision, never an overwrite."""
        clash = {s for s, _ in self.entries if folders.get(folder_name(s), s) != s}
        if not clash:
            return self
        skipped = [Skipped(p.name, f"its folder {folder_name(s)} is that of "
                                   f"`{shown(folders[folder_name(s)])}` in the ledger: rename it", s)
                   for s, p in self.entries if s in clash]
        return Roll(tuple(e for e in self.entries if e[0] not in clash),
                    tuple(sorted((*self.skipped, *skipped), key=lambda k: k.name)))

    @property
    def refused(self) -> tuple[str, ...]:
        """Student ids with more than one submission: nothing of theirs is graded this run."""
        return tuple(sorted({s.student for s in self.skipped if s.student}))


def _kind_reason(path: Path) -> str:
    if path.name.startswith((".", "_")):
        return "hidden or private entry (its name starts with . or _)"
    if path.is_dir() or path.suffix.lower() in SUBMISSION_SUFFIXES:
        return ""
    return "neither a folder, a .zip, a .py nor a notebook (.ipynb)"


def take_roll(folder: Path) -> Roll:
    """The roll of a submissions folder: each entry a student's, or skipped with its reason."""
    return roll_of(sorted(folder.iterdir(), key=lambda p: p.name))


def roll_of(paths: Iterable[Path]) -> Roll:
    """The roll of these entries (see `take_roll`)."""
    skipped: list[Skipped] = []
    by_id: dict[str, list[Path]] = defaultdict(list)
    for path in paths:
        reason = _kind_reason(path)
        if reason:
            skipped.append(Skipped(path.name, reason))
            continue
        student = student_id(raw_name(path))
        if not student:
            skipped.append(Skipped(path.name, "its name is empty once trimmed: name it by the student's id"))
            continue
        by_id[student].append(path)
    by_folder: dict[str, list[str]] = defaultdict(list)
    for student in by_id:
        by_folder[folder_name(student)].append(student)
    entries: list[tuple[str, Path]] = []
    for student, found in sorted(by_id.items()):
        clash = [s for s in by_folder[folder_name(student)] if s != student]
        if len(found) > 1:
            names = " and ".join(f"`{shown(p.name)}`" for p in found)
            reason = (f"{names} are all submissions of student `{shown(student)}`: none was graded; "
                      "leave the one to grade and run grade again")
            skipped += [Skipped(p.name, reason, student) for p in found]
        elif clash:  # two ids, one folder: a 48-bit hash collision, refused rather than overwritten
            reason = f"its folder {folder_name(student)} is also that of `{shown(clash[0])}`: rename one"
            skipped.append(Skipped(found[0].name, reason, student))
        else:
            entries.append((student, found[0]))
    return Roll(tuple(entries), tuple(sorted(skipped, key=lambda s: s.name)))
