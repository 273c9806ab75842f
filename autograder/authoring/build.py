"""Build an assignment's student folder (stubs, public checks, README) from marked solutions."""

from __future__ import annotations

import ast
import dataclasses
import fnmatch
import shutil
import tempfile
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import jinja2

from autograder.authoring.kit_wheel import TORCH_INSTALL, install_command, kit_wheel, wheel_name
from autograder.authoring.markers import (
    BEGIN_MARKER,
    StubItem,
    has_markers,
    solution_lines,
    split_lines,
    strip_solutions,
    stub_items,
)
from autograder.config import Assignment, Kit, load_kit
from autograder.errors import ConfigError, MarkerError
from autograder.manifest import MANIFEST_FILE, ManifestTask, make_manifest

TEMPLATE_DIR = Path(__file__).resolve().parents[1] / "templates"
README_TEMPLATE = "student_readme.md.j2"
# The README in Bangla (README.bn.md), beside the English one, for an assignment with a Bangla catalogue.
README_BN_TEMPLATE = "student_readme.bn.md.j2"
GRADERS_DIR = "graders"
CHECKS_DIR = "checks"
# graders/notebook/test_<task>.py: the source notebook's test cells (plain asserts, not pytest modules).
NOTEBOOK_DIR = "notebook"
# Never copied from graders/ to the student's checks/ (matched against every file and folder name).
PRIVATE_NAMES = ("hidden", "__pycache__", "*reference*", "*.pyc", "misconceptions.toml", "correct")
# Local clutter that is not part of a generated folder (ignored by diff_assignment), and the kit's
# wheel, which `build` writes beside the generated files (not committed: it is built from the kit).
CLUTTER_NAMES = ("__pycache__", "*.pyc", ".pytest_cache", ".hypothesis", "torch_autograder-*.whl")



class TaskSpec(NamedTuple):
    """A task as the student folder shows it: its id, its file, its points (and for its manifest, the
    public checks grading.toml hides and its time limit)."""

    id: str
    file: str
    points: float
    title: str = ""
    hidden: tuple[str, ...] = ()
    time_limit: float = 20.0


@dataclass(frozen=True)
class TaskDoc:
    """One task's README section."""

    id: str
    title: str
    file: str
    points: str
    items: tuple[StubItem, ...]


def _exercise(kit: Kit, assignment_id: str) -> Assignment:
    """The assignment as grading.toml declares it (read by config.py, the one parser), if not an exam."""
    assignment = kit.assignment(assignment_id)
    if assignment.exam is not None:
        raise ConfigError(
            f"{kit.root / 'grading.toml'}: assignments.{assignment_id} is an exam, where every student "
            f"gets their own numbers: build one folder per student with `autograder exam build --roster "
            f"ROSTER.csv --out DIR --assignment {assignment_id}`."
        )
    return assignment


def _points(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _is_private(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatch(name, pattern) for pattern in patterns)


def _tree_files(root: Path, skip: tuple[str, ...]) -> dict[str, bytes]:
    """Relative POSIX path -> bytes for every file under `root`, skipping names in `skip`."""
    files: dict[str, bytes] = {}
    if not root.is_dir():
        return files
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(_is_private(part, skip) for part in rel.parts) or not path.is_file():
            continue
        files[rel.as_posix()] = path.read_bytes()
    return files


def _render_readme(context: dict[str, Any], template: str = README_TEMPLATE) -> bytes:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # noqa: S701  a Markdown README, not HTML: escaping would garble it
    )
    return env.get_template(template).render(**context).encode("utf-8")


def bangla_titles(source_dir: Path) -> dict[str, str] | None:
    """The [titles] of the assignment's Bangla catalogue (its own and its tasks' titles), None when it
    has no Bangla catalogue (no README.bn.md is written then)."""
    path = source_dir / GRADERS_DIR / "messages" / "bn.toml"
    if not path.is_file():
        return None
    try:
        titles = tomllib.loads(path.read_text(encoding="utf-8")).get("titles", {})
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    return {key: value for key, value in titles.items() if isinstance(value, str) and "{" not in value}


def public_checks(graders_dir: Path) -> dict[str, bytes]:
    """The files of a graders folder a student may have (no hidden checks, no references)."""
    files = _tree_files(graders_dir, PRIVATE_NAMES)
    # The notebook's test cells reach students in the released notebook; `autograder check` cannot
    # run them, and in an exam bundle their lesson numbers would contradict the student's own.
    return {rel: data for rel, data in files.items() if rel.split("/")[0] != NOTEBOOK_DIR}


def public_points(checks: Mapping[str, bytes], task: TaskSpec) -> float:
    """What the public checks of `task` in `checks` are worth: the `@points(N)` of each test_ function
    of public/test_<task>.py that grading.toml does not hide (read, not imported: no torch needed)."""
    source = checks.get(f"public/test_{task.id}.py")
    if source is None:
        return 0.0
    total = 0.0
    for node in ast.parse(source.decode("utf-8")).body:
        if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test_"):
            continue
        if node.name.removeprefix("test_") in task.hidden:
            continue
        for deco in node.decorator_list:
            if (isinstance(deco, ast.Call) and getattr(deco.func, "id", getattr(deco.func, "attr", ""))
                    == "points" and deco.args and isinstance(deco.args[0], ast.Constant)
                    and isinstance(deco.args[0].value, int | float)):
                total += float(deco.args[0].value)
    return total


def generate(kit_root: Path, assignment_id: str) -> dict[str, bytes]:
    """Everything the student folder holds, as relative POSIX path -> bytes (nothing written)."""
    kit = load_kit(kit_root)
    assignment = _exercise(kit, assignment_id)
    source_dir = assignment.solutions
    if not source_dir.is_dir():
        raise ConfigError(f"{source_dir} not found; the reference solutions live there.")
    tasks = [TaskSpec(t.id, t.file, t.points, t.title or t.id, t.hidden, t.time_limit)
             for t in assignment.tasks]
    return render_student_folder(
        source_dir, assignment_id, assignment.title, tasks, list(assignment.given), language=kit.language,
        install=install_command(kit.student_install),
    )


def with_kit_wheel(files: Mapping[str, bytes], student_install: str) -> dict[str, bytes]:
    """`files` and, unless the kit is published elsewhere (grading.toml's student_install), the
    kit's wheel that their README's install command names."""
    if student_install:
        return dict(files)
    return dict(sorted({**files, wheel_name(): kit_wheel()}.items()))


def _shipped_languages(shipped: Mapping[str, bytes]) -> list[str]:
    """The feedback languages a student folder's checks can speak: its messages/<lang>.toml files."""
    found = {Path(rel).stem for rel in shipped if rel.startswith("messages/") and rel.endswith(".toml")}
    return ["en", *sorted(found - {"en"})]


def render_student_folder(
    source_dir: Path,
    assignment_id: str,
    title: str,
    tasks: Sequence[TaskSpec],
    given: Sequence[str],
    *,
    sources: Mapping[str, str] | None = None,
    checks: Mapping[str, bytes] | None = None,
    exam: Mapping[str, Any] | None = None,
    language: str = "en",
    install: str = "",
) -> dict[str, bytes]:
    """A student folder from the references in `source_dir`: stubs, given files, checks, README.

    `sources` replaces the text of reference files (an exam variant's), `checks` the files of
    checks/ (default: the public part of graders/; empty: only the manifest, which tells the check
    that it is off), `exam` adds the exam's part of the README (the student, their numbers, the
    window). checks/manifest.json lets `autograder check` run in the folder without the kit;
    `install` is the command the README gives to install it (default: the kit's wheel, which
    with_kit_wheel adds beside these files).
    """
    files: dict[str, bytes] = {}
    stripped_from: dict[str, str] = {}
    for path in sorted(source_dir.glob("*.py")):
        raw = path.read_bytes()
        text = sources[path.name] if sources is not None and path.name in sources else raw.decode("utf-8")
        shown = f"solutions/{source_dir.name}/{path.name}"
        if has_markers(text):
            stripped_from[path.name] = text
            files[path.name] = strip_solutions(text, path.stem, shown).encode("utf-8")
        else:
            files[path.name] = text.encode("utf-8") if sources is not None and path.name in sources else raw
    shipped = public_checks(source_dir / GRADERS_DIR) if checks is None else dict(checks)
    files.update({f"{CHECKS_DIR}/{rel}": data for rel, data in shipped.items()})

    docs: list[TaskDoc] = []
    for task in tasks:
        if task.file not in files:
            raise ConfigError(
                f"grading.toml: task {task.id} names {task.file}, which is not in {source_dir}."
            )
        text = stripped_from.get(task.file, "")
        items = stub_items(text, task.file) if text else ()
        docs.append(TaskDoc(task.id, task.title or task.id, task.file, _points(task.points), items))
    policy = str(exam.get("check", "public")) if exam else "public"
    manifest = make_manifest(
        assignment_id, title,
        [ManifestTask(t.id, t.file, float(t.points), public_points(shipped, t),
                      tuple(item.name for item in doc.items), float(t.time_limit), tuple(t.hidden))
         for t, doc in zip(tasks, docs, strict=True)],
        sorted(given), language, policy if shipped else "none", _shipped_languages(shipped),
    )
    files[f"{CHECKS_DIR}/{MANIFEST_FILE}"] = manifest.to_json().encode("utf-8")
    context = {
        "assignment_id": assignment_id,
        "title": title,
        "tasks": docs,
        "total_points": _points(sum(task.points for task in tasks)),
        "given": sorted(given),
        "has_checks": bool(shipped),
        "exam": dict(exam) if exam else None,
        "install": install or install_command(),
        "torch": TORCH_INSTALL,
    }
    titles = bangla_titles(source_dir)
    context["bn_readme"] = titles is not None
    files["README.md"] = _render_readme(context)
    if titles is not None:
        bangla = {**context, "title": titles.get(assignment_id, title),
                  "tasks": [dataclasses.replace(doc, title=titles.get(doc.id, doc.title)) for doc in docs]}
        files["README.bn.md"] = _render_readme(bangla, README_BN_TEMPLATE)
    return dict(sorted(files.items()))


def refuse_leaks(files: Mapping[str, bytes], references: Mapping[str, str], what: str) -> None:
    """MarkerError if a student folder holds a solution marker, a hidden or reference file, or (in
    the student's files and README) a line of a solution region. The public checks are exempt from
    the last test only: they are the exercise's, probes build the graders' own models. Run on every
    exam folder before anything is written."""
    secret_lines: set[str] = set()
    for name, text in references.items():
        if has_markers(text):
            secret_lines |= solution_lines(text, name)
    for rel, data in files.items():
        parts = rel.split("/")
        if any(_is_private(part, ("hidden", "*reference*")) for part in parts):
            raise MarkerError(f"{what}: {rel} is instructor-only (hidden checks or reference code)")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if has_markers(text):
            raise MarkerError(f"{what}: {rel} still holds a '{BEGIN_MARKER}' region")
        shown = sorted(secret_lines & {line.strip() for line in split_lines(text)})
        if shown and parts[0] != CHECKS_DIR:
            raise MarkerError(f"{what}: {rel} holds solution code ({shown[0]!r})")


def _refuse_unsafe_target(target: Path, kit_root: Path, source_dir: Path) -> None:
    target, kit_root, source_dir = target.resolve(), kit_root.resolve(), source_dir.resolve()
    if target == kit_root or target in kit_root.parents or source_dir.is_relative_to(target):
        raise ConfigError(f"refusing to replace {target}: it holds the kit or its solutions.")
    if target.is_relative_to(source_dir):
        raise ConfigError(f"refusing to write into the solutions folder {source_dir}.")
    if target.exists() and not target.is_dir():
        raise ConfigError(f"{target} exists and is not a folder; move it away first.")


def build_assignment(kit_root: Path, assignment_id: str, out_dir: Path | None = None) -> list[Path]:
    """Write the student folder for `assignment_id` from scratch; return the files written."""
    kit_root = Path(kit_root)
    target = Path(out_dir) if out_dir is not None else kit_root / "assignments" / assignment_id
    _refuse_unsafe_target(target, kit_root, kit_root / "solutions" / assignment_id)
    files = generate(kit_root, assignment_id)  # fails before anything old is deleted
    files = with_kit_wheel(files, load_kit(kit_root).student_install)
    if target.exists():
        shutil.rmtree(target)
    written: list[Path] = []
    for rel, data in files.items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written.append(path)
    return written


def diff_assignment(kit_root: Path, assignment_id: str) -> list[str]:
    """Relative paths where the committed student folder differs from a fresh build."""
    kit_root = Path(kit_root)
    committed = kit_root / "assignments" / assignment_id
    with tempfile.TemporaryDirectory() as tmp:
        fresh_dir = Path(tmp) / assignment_id
        build_assignment(kit_root, assignment_id, fresh_dir)
        fresh = _tree_files(fresh_dir, CLUTTER_NAMES)
    current = _tree_files(committed, CLUTTER_NAMES)
    paths = fresh.keys() | current.keys()
    return sorted(rel for rel in paths if fresh.get(rel) != current.get(rel))
