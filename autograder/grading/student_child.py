"""The self-check in child processes: one warm child made by `spawn`, and on Linux forks of it per task.

The parent stays light (no torch, no hypothesis) and only waits. The warm child imports torch,
the checks, the probes and torch's lazily imported parts before it says it is ready: none of that
is on any task's clock. On Linux it then runs each task's checks itself and their probe calls in
forks of that warm state, timed as the grade times them (grading/student_fork.py, task_runs.py:
a lost call costs the checks that make it, the task's other checks go on in a fresh fork).
Elsewhere (Windows and macOS, where a fork of torch is not safe) it checks the tasks itself and
the parent times each one from its start, and a fresh child (warm again, off the clock) goes on
after a task that was lost. Either way a task is timed on its own clock (the time a busy machine
made it wait for a CPU is not charged: sandbox/inside/clock.py), and a task that runs past its
limit or dies costs that task alone. Outcomes come back as JSON bytes over a pipe, never pickle.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
import time
from collections.abc import Mapping
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from autograder.errors import AutograderError, ConfigError
from autograder.grading.student_environment import BrokenInstall, Fault, version_faults
from autograder.grading.student_locate import find_student_checks, read_student_manifest, selected_tasks
from autograder.grading.student_results import ENDED, STOPPED, CheckReport, TaskOutcome, outcome_from_dict
from autograder.grading.task_runs import MAX_RUNS, TIME_BOUND_FACTOR
from autograder.manifest import Manifest, ManifestTask, student_folder
from autograder.sandbox.inside.clock import MAX_STRETCH, TaskClock

LOAD_BUDGET = 300.0  # seconds for the child to start and import torch, the checks and the probes
GRACE = 5.0  # beyond a task's own time limit (its checks' own work, hypothesis shrinking a failure)
TICK = 0.25  # how often a waiting process looks at the task's clock again
FORKS = sys.platform == "linux"  # where a warm process may fork the task's (Windows has no fork,
# macOS's system libraries are not safe to use in a forked child); elsewhere each run is spawned
START_METHOD = "AUTOGRADER_START_METHOD"  # "spawn" forces spawned runs on Linux (the tests' way)
SPAWN_LOAD = 60.0  # wall seconds a spawned run may take to start (off its clock), for the guard


def forks() -> bool:
    """Whether a task's runs are forks of the warm child (else spawned processes)."""
    chosen = os.environ.get(START_METHOD, "")
    return FORKS if chosen not in ("fork", "spawn") else chosen == "fork" and hasattr(os, "fork")


def _send(conn: Connection, message: dict[str, Any]) -> None:
    conn.send_bytes(json.dumps(message, ensure_ascii=False).encode("utf-8"))


def _stopped(task: ManifestTask, status: str) -> TaskOutcome:
    return TaskOutcome(task.id, task.file, status, task.public_points, detail=f"{task.time_limit:g}")


# -- in the warm child ---------------------------------------------------------------------------
def child_main(conn: Connection, folder: str, checks_dir: str, lang: str | None, tasks: list[str],
               tmp: str, fork_tasks: bool = False) -> None:
    """In the child: check the install, load and warm everything, then check `tasks` one by one."""
    from autograder.grading import student_process

    sys.dont_write_bytecode = True  # no __pycache__ in the student's folder or their checks/
    # torch's compiler keeps a cache folder in the temporary folder (made by an optimizer's first
    # step): this check's, which the parent removes, unless the student chose their own.
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(tmp, "torch"))
    tasks_tmp = os.path.join(tmp, "tasks")
    try:
        faults = _probe()
        if faults:
            _send(conn, {"broken": [{"key": f.key, "values": dict(f.values)} for f in faults]})
            return
        from autograder.grading.student_check import empty_report, load_checks
        from autograder.sandbox.inside.runtime import warm_torch

        # Before the private temporary folder: what torch keeps of the temporary folder's name
        # (its compiler's cache) must not point into a folder removed after the check.
        loaded = load_checks(Path(checks_dir), lang)
        warm_torch()
        report = empty_report(loaded)
        _send(conn, {"ready": {"lang": report.lang, "labels": dict(report.labels), "title": report.title}})
        by_id = {t.id: t for t in loaded.manifest.tasks}
        with student_process.private_tmp(tasks_tmp):
            for task_id in tasks:
                task = by_id[task_id]
                _send(conn, {"start": task_id, "timed": True, "spawned": not fork_tasks})
                outcome = _task_here(loaded, task, folder, forked=True, spawned=not fork_tasks)
                _send(conn, {"outcome": outcome})
                student_process.empty_folder(tasks_tmp)
    except AutograderError as exc:
        _send(conn, {"error": str(exc)})
    finally:
        conn.close()


def _probe() -> list[Fault]:
    from autograder.grading.student_environment import probe_torch

    return probe_torch()


def _task_here(loaded: Any, task: ManifestTask, folder: str,
               namespace: Mapping[str, Any] | None = None, forked: bool = False,
               spawned: bool = False) -> dict[str, Any]:
    """One task checked in this process: its probes here too, or (`forked`) in forks of it."""
    from autograder.grading.student_check import check_task, output_note
    from autograder.grading.student_process import capped_output
    from autograder.grading.student_results import outcome_to_dict

    with capped_output(output_note(loaded)):
        outcome = check_task(loaded, task, Path(folder), namespace, forked=forked, spawned=spawned)
    return outcome_to_dict(outcome)


# -- in the parent -------------------------------------------------------------------------------
def _receive(conn: Connection, budget: float) -> dict[str, Any] | None:
    """The child's next message, or None when it died or said nothing within `budget` seconds."""
    try:
        if not conn.poll(budget):
            return None
        message: dict[str, Any] = json.loads(conn.recv_bytes().decode("utf-8"))
        return message
    except (EOFError, OSError, ValueError):
        return None


def _timed_receive(conn: Connection, pid: int | None, limit: float) -> dict[str, Any] | None:
    """The child's next message within `limit` seconds on the task's own clock."""
    clock = TaskClock(pid).start()
    while True:
        remaining = clock.remaining(limit)
        if remaining <= 0:
            return None
        try:
            if conn.poll(min(remaining, TICK)):
                message: dict[str, Any] = json.loads(conn.recv_bytes().decode("utf-8"))
                return message
        except (EOFError, OSError, ValueError):
            return None


def broken_install(faults: list[Mapping[str, Any]], lang: str) -> BrokenInstall:
    from autograder.grading.student_environment import describe_faults

    return BrokenInstall(describe_faults([Fault(str(f["key"]), dict(f["values"])) for f in faults], lang))


def run_check_in_child(folder: Path, task: str | None = None, lang: str | None = None,
                       checks_dir: Path | None = None, start_method: str = "spawn",
                       fork_tasks: bool | None = None) -> CheckReport:
    """Like student_check.run_check, in a child started with `start_method` (default: spawn) that
    forks each task's runs where `fork_tasks` (default: on Linux, unless AUTOGRADER_START_METHOD=spawn),
    else spawns them (grading/student_spawn.py)."""
    import shutil
    import tempfile

    started = time.monotonic()
    checks_dir = (checks_dir or find_student_checks(folder, lang)).resolve()
    folder = student_folder(folder, checks_dir)
    manifest = read_student_manifest(checks_dir, lang)
    pending = list(selected_tasks(manifest, task, lang))
    faults = version_faults()
    if faults:
        raise broken_install([{"key": f.key, "values": f.values} for f in faults], lang or manifest.language)
    if manifest.check == "none":  # nothing of the student's runs: no child needed
        from autograder.grading.student_check import run_check

        return run_check(folder, task, lang, checks_dir=checks_dir)
    use_forks = forks() if fork_tasks is None else fork_tasks
    # The tasks' temporary files go there (the child points TMPDIR at it once torch is loaded);
    # removed at the end, whatever a lost child left in it.
    tmp = tempfile.mkdtemp(prefix="autograder-check-")
    try:
        outcomes, chosen, labels = _run_children(manifest, pending, folder, checks_dir, lang, tmp,
                                                 multiprocessing.get_context(start_method), use_forks)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    title = labels.pop("title", "") or manifest.title
    return CheckReport(manifest.assignment, title, chosen, tuple(outcomes), False,
                       time.monotonic() - started, labels, manifest.kit_version, str(folder))


def _run_children(manifest: Manifest, pending: list[ManifestTask], folder: Path, checks_dir: Path,
                  lang: str | None, tmp: str, context: Any, forks: bool
                  ) -> tuple[list[TaskOutcome], str, dict[str, str]]:
    outcomes: list[TaskOutcome] = []
    labels: dict[str, str] = {"title": manifest.title}
    chosen = lang or manifest.language
    while pending:
        receiver, sender = context.Pipe(duplex=False)
        # Not a daemon where it spawns its runs (multiprocessing lets no daemon have children);
        # it is killed below either way.
        child = context.Process(target=child_main, daemon=forks, name="autograder-check",
                                args=(sender, str(folder.resolve()), str(checks_dir), lang,
                                      [t.id for t in pending], tmp, forks))
        child.start()
        sender.close()  # the child's end: EOF here as soon as the child is gone
        try:
            message = _receive(receiver, LOAD_BUDGET)
            if message is not None and "broken" in message:
                raise broken_install(message["broken"], chosen)
            if message is None or "error" in message:
                why = message["error"] if message else "the check could not start (see the error above)"
                raise ConfigError(str(why))
            labels = {**message["ready"]["labels"], "title": str(message["ready"].get("title", ""))}
            chosen = message["ready"]["lang"]
            while pending:
                current = pending[0]
                reply = _receive(receiver, LOAD_BUDGET)  # "start": the previous task is done
                if reply is not None and "start" in reply:
                    if reply.get("timed"):  # the child times its runs; this only guards against a stuck child
                        bound = TIME_BOUND_FACTOR * current.time_limit + GRACE
                        loads = MAX_RUNS * SPAWN_LOAD if reply.get("spawned") else 0.0
                        reply = _receive(receiver, bound * MAX_STRETCH + GRACE + loads)
                    else:
                        reply = _timed_receive(receiver, child.pid, current.time_limit + GRACE)
                if reply is None or "outcome" not in reply:
                    child.join(1.0)  # a child that just died may not be reaped yet
                    outcomes.append(_stopped(current, STOPPED if child.is_alive() else ENDED))
                    pending.pop(0)
                    break
                outcomes.append(outcome_from_dict(reply["outcome"]))
                pending.pop(0)
        finally:
            receiver.close()
            if child.is_alive():
                child.kill()
            child.join()
    return outcomes, chosen, labels
