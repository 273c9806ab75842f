"""The self-check in a child process made by `spawn` (the one start method of Windows, macOS and Linux).

The parent stays light (no torch, no hypothesis) and only waits: a task that runs past its time
limit, or a child that dies (a segfault, an `os._exit`), costs that task alone, and the tasks
after it run in a fresh child. Outcomes come back as JSON bytes over a pipe, never pickle.
"""

from __future__ import annotations

import json
import multiprocessing
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from autograder.errors import AutograderError, ConfigError
from autograder.grading.student_results import ENDED, STOPPED, CheckReport, TaskOutcome, outcome_from_dict
from autograder.manifest import find_checks, read_manifest

LOAD_BUDGET = 300.0  # seconds for the child to start and import torch, the checks and the probes
GRACE = 5.0  # beyond a task's own time limit (its checks' own work, hypothesis shrinking a failure)


def _send(conn: Connection, message: dict[str, Any]) -> None:
    conn.send_bytes(json.dumps(message, ensure_ascii=False).encode("utf-8"))


def child_main(conn: Connection, folder: str, checks_dir: str, lang: str | None, tasks: list[str]) -> None:
    """In the child: load the checks, then check `tasks` one by one, sending each outcome."""
    from autograder.grading.student_check import check_task, empty_report, load_checks
    from autograder.grading.student_results import outcome_to_dict

    try:
        loaded = load_checks(Path(checks_dir), lang)
        report = empty_report(loaded)
        _send(conn, {"ready": {"lang": report.lang, "labels": dict(report.labels)}})
        by_id = {t.id: t for t in loaded.manifest.tasks}
        for task_id in tasks:
            _send(conn, {"start": task_id})
            outcome = check_task(loaded, by_id[task_id], Path(folder))
            _send(conn, {"outcome": outcome_to_dict(outcome)})
    except AutograderError as exc:
        _send(conn, {"error": str(exc)})
    finally:
        conn.close()


def _receive(conn: Connection, budget: float) -> dict[str, Any] | None:
    """The child's next message, or None when it died or said nothing within `budget` seconds."""
    try:
        if not conn.poll(budget):
            return None
        message: dict[str, Any] = json.loads(conn.recv_bytes().decode("utf-8"))
        return message
    except (EOFError, OSError, ValueError):
        return None


def run_check_in_child(folder: Path, task: str | None = None, lang: str | None = None,
                       checks_dir: Path | None = None, start_method: str = "spawn") -> CheckReport:
    """Like student_check.run_check, in children started with `start_method` (default: spawn)."""
    started = time.monotonic()
    checks_dir = (checks_dir or find_checks(folder)).resolve()
    manifest = read_manifest(checks_dir / "manifest.json")
    pending = [t for t in manifest.tasks if task is None or t.id == task]
    if not pending:
        known = ", ".join(t.id for t in manifest.tasks)
        raise ConfigError(f"no task {task!r} in {manifest.assignment} (its tasks: {known})")
    context: Any = multiprocessing.get_context(start_method)  # typeshed's BaseContext lacks Process
    outcomes: list[TaskOutcome] = []
    labels: dict[str, str] = {}
    if manifest.check == "none":  # nothing of the student's runs: no child needed
        from autograder.grading.student_check import run_check

        return run_check(folder, task, lang, checks_dir=checks_dir)
    chosen = lang or manifest.language
    while pending:
        receiver, sender = context.Pipe(duplex=False)
        child = context.Process(target=child_main, daemon=True, name="autograder-check",
                                args=(sender, str(folder.resolve()), str(checks_dir), lang,
                                      [t.id for t in pending]))
        child.start()
        sender.close()  # the child's end: EOF here as soon as the child is gone
        try:
            message = _receive(receiver, LOAD_BUDGET)
            if message is None or "error" in message:
                why = message["error"] if message else "the check could not start (see the error above)"
                raise ConfigError(str(why))
            labels = message["ready"]["labels"]
            chosen = message["ready"]["lang"]
            while pending:
                current = pending[0]
                reply = _receive(receiver, LOAD_BUDGET)  # "start": the previous task is done
                if reply is not None and "start" in reply:
                    reply = _receive(receiver, current.time_limit + GRACE)
                if reply is None or "outcome" not in reply:
                    child.join(1.0)  # a child that just died may not be reaped yet
                    status = STOPPED if child.is_alive() else ENDED
                    outcomes.append(TaskOutcome(current.id, current.file, status, current.public_points,
                                                detail=f"{current.time_limit:g}"))
                    pending.pop(0)
                    break
                outcomes.append(outcome_from_dict(reply["outcome"]))
                pending.pop(0)
        finally:
            receiver.close()
            if child.is_alive():
                child.kill()
            child.join()
    return CheckReport(manifest.assignment, manifest.title, chosen, tuple(outcomes), False,
                       time.monotonic() - started, labels, manifest.kit_version)
