"""The student's self-check: a folder's public checks, run in this process with no kit and no sandbox.

It is the student's own code on their own machine, so nothing is isolated; everything it needs
comes from the folder's checks/ (its manifest, public checks, probes and messages).
"""

from __future__ import annotations

import time
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.config import TaskConfig
from autograder.grading import judge
from autograder.grading.course import Graders, load_graders
from autograder.grading.results import CheckResult
from autograder.grading.student_locate import find_student_checks, read_student_manifest, selected_tasks
from autograder.grading.student_results import (
    CHECKED,
    ENDED,
    MISSING,
    NO_IMPORT,
    NOT_DEFINED,
    NOT_STARTED,
    STOPPED,
    CheckReport,
    TaskOutcome,
)
from autograder.manifest import MANIFEST_FILE, Manifest, ManifestTask, read_manifest, student_folder
from autograder.sandbox.inside.runtime import load_lazy_torch
from autograder.sandbox.local import InProcessSession


@dataclass
class LoadedChecks:
    """A folder's manifest and its graders, loaded once (a notebook re-checks with them)."""

    checks_dir: Path
    manifest: Manifest
    graders: Graders | None  # None: the exam turns the self-check off, nothing was imported
    lang: str


_CACHE: dict[tuple[Path, str, Manifest], LoadedChecks] = {}


def load_checks(checks_dir: Path, lang: str | None = None) -> LoadedChecks:
    """Read the manifest and import the public checks of `checks_dir` (cached per folder and language)."""
    checks_dir = checks_dir.resolve()
    manifest = read_manifest(checks_dir / MANIFEST_FILE)
    chosen = lang or manifest.language
    key = (checks_dir, chosen, manifest)  # a folder replaced by a fresh copy is loaded again
    if key not in _CACHE:
        assignment = manifest.as_assignment(checks_dir.parent)
        graders = None if manifest.check == "none" else load_graders(assignment, checks_dir, chosen)
        _CACHE[key] = LoadedChecks(checks_dir, manifest, graders, chosen)
    return _CACHE[key]


def _not_implemented(results: tuple[CheckResult, ...]) -> bool:
    """Every check stopped at a stub's NotImplementedError (a catalogue key `*.not_implemented`)."""
    return bool(results) and all(
        not r.passed and r.message_key.rsplit(".", 1)[-1] == "not_implemented" for r in results)


def _import_error(error: Mapping[str, str]) -> str:
    text = f"{error.get('type', 'Error')}: {error.get('message', '')}"
    return text + (f" ({error['where']})" if error.get("where") else "")


def output_note(loaded: LoadedChecks) -> Callable[[int, int], str]:
    """The note printed after a task whose output was cut (student_process.capped_output)."""
    labels = empty_report(loaded).labels

    def note(dropped: int, limit: int) -> str:
        return _format(labels, "selfcheck_output_capped", dropped=dropped, limit=limit)

    return note


def _format(labels: Mapping[str, str], key: str, **values: object) -> str:
    from autograder.grading.student_report import DEFAULT_LABELS

    try:
        return (labels.get(key) or DEFAULT_LABELS[key]).format(**values)
    except (KeyError, IndexError, ValueError):
        return DEFAULT_LABELS[key].format(**values)


def _own_names(namespace: Mapping[str, Any], task: ManifestTask, module: str) -> list[str]:
    """The task's names the notebook defined itself: not those it imported from the task's own file
    (`from tinynet import TinyNet` in a cell), which is then checked as a file."""
    return [name for name in task.names if name in namespace
            and getattr(namespace[name], "__module__", None) != module]


def check_task(loaded: LoadedChecks, task: ManifestTask, folder: Path,
               namespace: Mapping[str, Any] | None = None, forked: bool = False,
               spawned: bool = False) -> TaskOutcome:
    """One task's public checks on `folder`'s file, or on `namespace` (a notebook's names; a task
    none of whose names the notebook defined is checked in its file beside the notebook, if any).

    `forked` (Linux): the probes run in forks of this process timed as the grade times its runs
    (grading/task_runs.py: a lost call costs the checks that make it, the others go on in a fresh
    fork), so the verdicts are the grade's; `spawned` too, in a spawned process per run (Windows,
    macOS: grading/student_spawn.py; files only); else in this process, untimed."""
    graders = loaded.graders
    assert graders is not None, "a self-check that is turned off checks no task"
    checks = tuple(c for c in graders.for_task(task.id) if c.public)
    max_score = sum(c.points for c in checks)
    config = TaskConfig(task.id, task.file, task.points, time_limit=task.time_limit,
                        cpu_limit=task.time_limit, hidden=task.hidden)
    own = _own_names(namespace, task, config.module) if namespace is not None else []
    absent = [name for name in task.names if namespace is not None and name not in own]
    if namespace is not None and task.names and len(absent) == len(task.names):
        if not (folder / task.file).is_file():
            return TaskOutcome(task.id, task.file, NOT_DEFINED, max_score, detail=", ".join(absent))
        namespace = None
    module = None
    if namespace is not None:
        module = types.ModuleType(config.module)
        module.__dict__.update(namespace)
    elif not (folder / task.file).is_file():
        return TaskOutcome(task.id, task.file, MISSING, max_score)
    session: Any
    if forked:
        from autograder.grading.student_fork import ForkedRun
        from autograder.grading.task_runs import TaskRuns

        kind = ForkedRun
        if spawned and module is None:
            from autograder.grading.student_spawn import SpawnedRun as kind

        def start(budget: float, counter: int) -> ForkedRun:
            return kind(task.id, folder, config.module, graders.probes_source, module, budget, counter)

        first = start(config.time_limit, 0)
        if first.lost is not None:  # the import itself was lost: every check, as graded
            first.lost.call = f"import {config.module}"
            key, feedback = judge.lost_feedback(graders, config, first.lost)
            first.close()
            results = judge.failed_all(checks, key, feedback)
            word = STOPPED if first.lost.reason in ("time_limit", "cpu_limit") else ENDED
            return TaskOutcome(task.id, task.file, word, max_score, results, detail=f"{task.time_limit:g}")
        status = first.status
        session = TaskRuns(task.id, config.time_limit, first, start)
    else:
        session = InProcessSession(task.id, folder, config.module, graders.probes_source, module)
        status = session.status
    if module is None and not status.get("imported"):
        if forked:
            session.close()
        return TaskOutcome(task.id, task.file, NO_IMPORT, max_score,
                           detail=_import_error(status.get("error", {})))
    try:
        results = tuple(judge.run_check(c, session, graders, config) for c in checks)
    finally:
        if forked:
            session.close()
    status_word = NOT_STARTED if _not_implemented(results) else CHECKED
    return TaskOutcome(task.id, task.file, status_word, max_score, results)


def empty_report(loaded: LoadedChecks) -> CheckReport:
    labels = dict(loaded.graders.messages.get("ui", {})) if loaded.graders else {}
    if not labels:  # checks turned off: only the engine's labels are needed
        from autograder.grading.course import ENGINE_MESSAGES, load_messages

        labels = load_messages([ENGINE_MESSAGES], loaded.lang).get("ui", {})
    titles = dict(loaded.graders.messages.get("titles", {})) if loaded.graders else {}
    title = titles.get(loaded.manifest.assignment) or loaded.manifest.title
    return CheckReport(loaded.manifest.assignment, title, loaded.lang,
                       off=loaded.manifest.check == "none", labels=labels,
                       built_with=loaded.manifest.kit_version)


def require_sound_install(lang: str) -> None:
    """BrokenInstall (exit 2) when this Python, torch or NumPy cannot run the checks."""
    from autograder.grading.student_environment import (
        BrokenInstall,
        describe_faults,
        probe_torch,
        version_faults,
    )

    faults = version_faults() or probe_torch()
    if faults:
        raise BrokenInstall(describe_faults(faults, lang))


def run_check(folder: Path, task: str | None = None, lang: str | None = None,
              namespace: Mapping[str, Any] | None = None, checks_dir: Path | None = None) -> CheckReport:
    """The public checks of `folder` (or of `namespace`, with `folder` for its helper files), in this
    process: no bytecode written, temporary files removed, output capped."""
    from autograder.grading.student_process import capped_output, empty_folder, no_bytecode, private_tmp

    started = time.monotonic()
    checks_dir = checks_dir or find_student_checks(folder, lang)
    folder = student_folder(folder, checks_dir)
    manifest = read_student_manifest(checks_dir.resolve(), lang)
    if manifest.check != "none":  # before the checks are imported: they import torch
        require_sound_install(lang or manifest.language)
    with no_bytecode():
        loaded = load_checks(checks_dir, lang)
    report = empty_report(loaded)
    if report.off:
        return report
    load_lazy_torch()  # before the private temporary folder, whose name torch's compiler would keep
    with no_bytecode(), private_tmp() as tmp:
        tasks = selected_tasks(loaded.manifest, task, lang)
        outcomes = []
        for chosen in tasks:
            with capped_output(output_note(loaded)):
                outcomes.append(check_task(loaded, chosen, folder.resolve(), namespace))
            empty_folder(tmp)
    return CheckReport(report.assignment, report.title, report.lang, tuple(outcomes), False,
                       time.monotonic() - started, report.labels, report.built_with, str(folder))
