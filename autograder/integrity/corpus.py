"""The documents similarity compares: this class's task files, earlier terms', public solutions, and
the boilerplate nobody's evidence is made of (the stub, the given files, the code its docstrings spell)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from autograder.authoring.markers import strip_solutions
from autograder.config import Assignment
from autograder.errors import AutograderError
from autograder.integrity.similarity import CLASS, Document, Source
from autograder.pysource import parse_python
from autograder.submissions.collect import collect
from autograder.submissions.files import Collected
from autograder.submissions.students import student_name

SOURCES_FILE = "similarity/submissions.json"  # what an OUT keeps so a later term can compare with it
_CODE_SPAN = re.compile(r"`([^`\n]+)`")


class CorpusError(AutograderError):
    """An archive or public-solutions path cannot be read."""


def listed(folder: Path) -> list[Path]:
    """One entry per student: folders, zips, notebooks and .py files, in name order; hidden ones skipped."""
    return sorted(
        p
        for p in folder.iterdir()
        if not p.name.startswith((".", "_")) and (p.is_dir() or p.suffix.lower() in (".zip", ".py", ".ipynb"))
    )


def documents_of(source: Source, files: Mapping[str, bytes], assignment: Assignment) -> list[Document]:
    """The task files of one submission, as text (undecodable bytes replaced)."""
    docs = []
    for task in assignment.tasks:
        data = files.get(task.file)
        if data is not None:
            docs.append(Document(source, task.id, task.file, data.decode("utf-8", "replace")))
    return docs


def class_documents(assignment: Assignment, submissions: Mapping[str, Collected]) -> list[Document]:
    """This class's documents, from submissions already read (student -> collected files)."""
    return [
        d
        for student, collected in sorted(submissions.items())
        for d in documents_of(Source(CLASS, student), collected.files, assignment)
    ]


def read_submissions(folder: Path, assignment: Assignment) -> dict[str, Collected]:
    """Every submission in `folder`, read as grading reads it (student -> collected files)."""
    return {student_name(p): collect(p, assignment.given, assignment) for p in listed(folder)}


def read_other(path: Path, assignment: Assignment, side: str) -> list[Document]:
    """An earlier term or public solutions: an earlier OUT, a folder of submissions, or one solution
    (a folder holding task files, a zip, a notebook)."""
    path = Path(path)
    origin = path.name or str(path)
    if not path.exists():
        raise CorpusError(f"{path}: not found; give a folder of submissions, an earlier OUT, or one solution")
    kept = path / SOURCES_FILE
    if kept.is_file():
        try:
            data = json.loads(kept.read_text(encoding="utf-8"))
            stored = {
                str(s): {str(f): str(t).encode() for f, t in files.items()} for s, files in data.items()
            }
        except (OSError, ValueError, AttributeError) as exc:
            raise CorpusError(
                f"{kept}: cannot be read ({exc}); run `autograder similarity` on that term "
                "again, or give its submissions folder"
            ) from None
        return [
            d
            for student, files in sorted(stored.items())
            for d in documents_of(Source(side, student, origin), files, assignment)
        ]
    task_files = {t.file for t in assignment.tasks}
    single = path.is_file() or any((path / f).is_file() for f in task_files)
    docs = []
    for entry in [path] if single else listed(path):
        collected = collect(entry, assignment.given, assignment)
        source = Source(side, student_name(entry), "" if single else origin)  # one solution: its own name
        docs += documents_of(source, collected.files, assignment)
    if not docs:
        raise CorpusError(
            f"{path}: holds none of the task files ({', '.join(sorted(task_files))}); give a "
            "folder of submissions, an earlier OUT, or one solution"
        )
    return docs


def keep_sources(out: Path, documents: list[Document]) -> Path:
    """OUT/similarity/submissions.json: this class's task files, for a later term's archive."""
    data: dict[str, dict[str, str]] = {}
    for d in documents:
        if d.source.side == CLASS:
            data.setdefault(d.source.name, {})[d.file] = d.text
    path = out / SOURCES_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, sort_keys=True), encoding="utf-8")
    return path


def stub_text(assignment: Assignment, file: str, task: str) -> str:
    shipped = assignment.root / "assignments" / (assignment.content or assignment.id) / file
    if shipped.is_file():
        return shipped.read_text(encoding="utf-8")
    reference = assignment.solutions / file
    if not reference.is_file():
        return ""
    return strip_solutions(reference.read_text(encoding="utf-8"), task, file)


def dictated_code(source: str) -> list[str]:
    """The code spans of a stub's docstrings and comments that parse as Python: the stub spells them
    (each after the stub's imports, so `nn.Linear` is torch's there too)."""
    imports = "".join(line + "\n" for line in source.splitlines() if line.startswith(("import ", "from ")))
    spans = []
    for span in _CODE_SPAN.findall(source):
        try:
            parse_python(span)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        spans.append(imports + span)
    return spans


def boilerplate(assignment: Assignment) -> dict[str, list[str]]:
    """Task -> what is nobody's evidence: its stub, the code its docstrings spell, the given files."""
    given = []
    for name in assignment.given:
        for folder in (
            assignment.root / "assignments" / (assignment.content or assignment.id),
            assignment.solutions,
        ):
            if (folder / name).is_file():
                given.append((folder / name).read_text(encoding="utf-8"))
                break
    out = {}
    for task in assignment.tasks:
        stub = stub_text(assignment, task.file, task.id)
        out[task.id] = [stub, *dictated_code(stub), *given]
    return out
