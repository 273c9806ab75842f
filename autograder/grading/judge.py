"""Run a task's checks against its worker and turn every outcome into a result with feedback."""

from __future__ import annotations

import copy
import inspect
import re
import time
from typing import Any

from autograder.checks import NOTES, Check, CheckFailed, StudentCodeError, TaskSession, WorkerLost
from autograder.config import TaskConfig
from autograder.grading.challenge import Challenge
from autograder.grading.course import Graders
from autograder.grading.hypothesis_setup import salt_seed, show_fixture_as
from autograder.grading.results import CheckResult

FEEDBACK_LIMIT = 4000


# How hypothesis begins the note that shows the failing input (its wording changed over versions).
FAILING_NOTES = (
    "Failing test case", "Failing explicit example", "Falsifying example", "Falsifying explicit example"
)
FIXTURES = frozenset({"worker", "params", "challenge"})  # what the judge passes: never the input
_ARGUMENT = re.compile(r" {4}(?! )")  # an argument's first line in the note; deeper lines continue it
# What hypothesis writes after a value ("  # or any other generated value"); a '#' inside a
# string's repr is followed by its closing quote, so it is never taken for one.
_COMMENT = re.compile(r"\s+# [^'\"]*$")
_DRAW = re.compile(r"Draw (\d+)(?: \((.+?)\))?: (.*)\Z", re.S)  # a note per st.data() draw

def render(graders: Graders, key: str, params: dict[str, Any], example: str = "") -> str:
    """Feedback text for catalogue message `key`: observed, expected, the idea, the failing input."""
    entry = graders.messages.get(key)
    labels = graders.messages.get("ui", {})
    if entry is None:
        text = f"Check failed ({key})."
    else:
        safe = {k: _short(v) for k, v in params.items()}
        lines = []
        for part in ("observed", "expected", "idea"):
            label = labels.get(part, part.capitalize())
            if part in entry:
                values = safe if graders.lang == "en" else _verbatim(entry[part], safe)
                try:
                    lines.append(f"{label}: {entry[part].format_map(values)}")
                except (KeyError, IndexError, ValueError) as exc:
                    lines.append(f"{label}: {entry[part]} [missing value {exc}]")
        text = "\n".join(lines)
    if example:
        text += f"\n{labels.get('failing_input', 'Failing input')}: {example}"
    return text[:FEEDBACK_LIMIT]


# Placeholders whose values are code (a call's `what`) or a student's exception text, shown as they are
# in every language: in another language than English they are set as code (`...`), so that a page
# shows them as code and the Latin-word scans (authoring/latin_scan.py) leave them alone.
VERBATIM = frozenset({"call", "what", "message"})
_CODE_SPAN = re.compile(r"`[^`]*`")


def _verbatim(template: str, values: dict[str, str]) -> dict[str, str]:
    """`values` with each VERBATIM one that `template` does not already put in a code span in backticks."""
    in_code = {name for span in _CODE_SPAN.findall(template)
               for name in re.findall(r"\{(\w+)[^{}]*\}", span)}
    return {k: f"`{v}`" if k in VERBATIM and k not in in_code and v and "`" not in v and "\n" not in v
            else v for k, v in values.items()}


def _short(value: Any, limit: int = 400) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + " ..."


def _one_line(lines: list[str]) -> str:
    """A value hypothesis pretty-printed over several lines, on one (`[0,\\n 1]` -> `[0, 1]`, and
    `(\\n 1,\\n 2,\\n)` -> `(1, 2)` as Python writes it; a one-item tuple keeps its comma)."""
    text = ""
    for line in lines:
        part = _COMMENT.sub("", line).strip()
        if part[:1] in _CLOSERS and text.endswith(","):
            opener = _opening(text)
            inside = text[opener + 1:-1]
            one_item_tuple = opener >= 0 and text[opener] == "(" and not _has_top_level_comma(inside)
            if not one_item_tuple:
                text = text[:-1]
        elif text.endswith(",") and part:
            text += " "
        text += part
    return text.removesuffix(",")


_CLOSERS = ")]}"


def _opening(text: str) -> int:
    """Where the bracket still open at the end of `text` opened (-1: none); strings are not parsed,
    which is enough for the reprs hypothesis prints of numbers, tuples, lists and arrays."""
    depth = 0
    for index in range(len(text) - 1, -1, -1):
        char = text[index]
        if char in _CLOSERS:
            depth += 1
        elif char in "([{":
            if depth == 0:
                return index
            depth -= 1
    return -1


def _has_top_level_comma(text: str) -> bool:
    depth = 0
    for char in text:
        if char in "([{":
            depth += 1
        elif char in _CLOSERS:
            depth -= 1
        elif char == "," and depth == 0:
            return True
    return False


def _arguments(note: str) -> list[tuple[str, str]]:
    """(name, value) of each argument of hypothesis's `Failing test case: f(...)` note."""
    groups: list[list[str]] = []
    for line in note.splitlines()[1:]:
        if line.strip() == ")":
            break
        if _ARGUMENT.match(line) and line.strip()[:1] not in _CLOSERS:  # a closing bracket continues
            if line.strip().startswith("#"):  # "# The test always failed when ... varied together."
                continue
            groups.append([line])
        elif groups:
            groups[-1].append(line)
    pairs = []
    for group in groups:
        name, _, value = _one_line(group).partition("=")
        pairs.append((name, value))
    return pairs


def falsifying_example(exc: BaseException) -> str:
    """The shrunk input hypothesis reports, as `name=value, ...` on one line: without the fixtures
    and hypothesis's comments, with what a check drew from st.data() in place of `data(...)`."""
    notes = [note for note in getattr(exc, "__notes__", []) or [] if isinstance(note, str)]
    for index, note in enumerate(notes):
        if not note.startswith(FAILING_NOTES):
            continue
        draws = []
        for later in notes[index + 1:]:
            if match := _DRAW.match(later):
                number, label, value = match.groups()
                draws.append(f"{label or f'draw_{number}'}={_one_line(value.splitlines())}")
        shown = []
        for name, value in _arguments(note):
            if name in FIXTURES:
                continue
            if value == "data(...)":
                shown += draws
            else:
                shown.append(f"{name}={value}")
        return ", ".join(shown)
    return ""


def lost_feedback(graders: Graders, task: TaskConfig, lost: WorkerLost) -> tuple[str, str]:
    """The feedback of a lost call: which of the student's calls, and where their code was when it
    was stopped (never a probe's name: the student knows their functions, not the grader's)."""
    from autograder.grading.task_runs import TIME_BOUND_FACTOR

    reason = lost.reason
    if reason == "cpu_limit" and task.cpu_limit >= task.time_limit:
        # Busy code reaches a CPU limit no lower than the time limit at the same moment as the time
        # limit: which one the sandbox saw first is a race, so the verdict is the time limit's, always.
        reason = "time_limit"
    key = f"engine.{reason}"
    if key not in graders.messages:
        key = "engine.killed"
    ui = graders.messages.get("ui", {})
    at = lost.stopped_at
    call = f"`{lost.call}`" if lost.call else f"`{at.function}`" if at else ui.get("your_code", "your code")
    stopped = ""
    if at is not None:
        stopped = ui.get("stopped_at", " (stopped at `{where}` in `{function}`: `{code}`)")
        stopped = stopped.format_map({"where": at.place, "function": at.function, "code": at.code or "..."})
    params = {"limit": f"{task.time_limit:g}", "call": call, "stopped": stopped, "memory": task.memory_mb,
              "bound": f"{TIME_BOUND_FACTOR * task.time_limit:g}", "probe": call}
    if reason == "cpu_limit":
        params["limit"] = f"{task.cpu_limit:g}"
    if reason == "tampered":
        params["probe"] = lost.detail or "?"  # what changed, not a call
    return key, render(graders, key, params)


def student_error_feedback(graders: Graders, err: StudentCodeError, example: str = "") -> tuple[str, str]:
    where = f" (`{err.where}`)" if err.where else ""  # the same in every language
    if err.type_name == "NotImplementedError":
        key = "engine.not_implemented"
        labels = graders.messages.get("ui", {})
        params = {"where": err.where or labels.get("your_code", "your code"), "message": err.message}
    else:
        key = "engine.student_error"
        params = {"type": err.type_name, "message": err.message, "where": where}
    return key, render(graders, key, params, example)


def _fixtures(check: Check, session: Any, params: Any, secret: bytes = b"") -> dict[str, Any]:
    wanted = inspect.signature(check.function).parameters
    fixtures = {"worker": session, "params": params, "challenge": Challenge(secret, check.id)}
    for name, value in fixtures.items():
        show_fixture_as(type(value), name)
    return {name: fixtures[name] for name in wanted if name in fixtures}


def _call(check: Check, session: TaskSession, graders: Graders) -> None:
    salt_seed(check.function, graders.secret)
    check.function(**_fixtures(check, session, graders.params, graders.secret))


class _Recording:
    """The worker a check is given while its examples are only being listed."""


# (check function, its seed) -> the inputs hypothesis gives it, in order, when every one passes
# (None: not replayable)
_EXAMPLES: dict[tuple[Any, int | None], list[dict[str, Any]] | None] = {}


def examples_of(check: Check, params: Any, secret: bytes = b"") -> list[dict[str, Any]] | None:
    """The inputs a hypothesis check meets, in its order, when every one of them passes.

    With its seed pinned, hypothesis draws the same inputs whatever the test does, as long as
    each passes: only a failure (shrinking), a rejected input (`assume`) or a draw inside the
    test changes what comes next. So they are listed once, with a body that records and
    passes (hypothesis's own `.hypothesis.inner_test` hook), before any submission is seen.
    """
    function = check.function
    handle = getattr(function, "hypothesis", None)
    if handle is None:
        return None
    key = (function, salt_seed(function, secret))
    if key in _EXAMPLES:
        return _EXAMPLES[key]
    fixtures = _fixtures(check, _Recording(), params)
    seen: list[dict[str, Any]] | None = []
    real = handle.inner_test

    def record(*args: Any, **kwargs: Any) -> None:
        assert seen is not None
        drawn = {k: v for k, v in kwargs.items() if k not in fixtures}
        if args or any(type(v).__module__.startswith("hypothesis") for v in drawn.values()):
            raise _NotReplayable  # positional or interactive draws: let hypothesis run it
        seen.append(copy.deepcopy(drawn))

    handle.inner_test = record
    try:
        function(**fixtures)
    except Exception:  # noqa: BLE001  not listable (it draws interactively, or could not run): never replayed
        seen = None
    finally:
        handle.inner_test = real
    _EXAMPLES[key] = seen
    return seen


class _NotReplayable(Exception):
    pass


def _replay_passes(check: Check, session: TaskSession, graders: Graders) -> bool:
    """Run a hypothesis check's listed inputs straight through; True when every one passes.

    Any failure returns False and the check is run again under hypothesis itself, which finds
    the same failure, shrinks it and words it: only passing runs skip hypothesis's machinery.
    """
    examples = examples_of(check, graders.params, graders.secret)
    if examples is None:
        return False
    inner = check.function.hypothesis.inner_test  # type: ignore[attr-defined]
    fixtures = _fixtures(check, session, graders.params, graders.secret)
    try:
        for drawn in examples:
            inner(**fixtures, **copy.deepcopy(drawn))
    except Exception:  # noqa: BLE001  student code raises anything: hypothesis reruns it and says what
        return False
    return True


def run_check(check: Check, session: TaskSession, graders: Graders, task: TaskConfig) -> CheckResult:
    """Run one check; anything but a clean return is a failure with feedback."""
    started = time.monotonic()
    key, feedback = "", ""
    notes: list[tuple[str, dict[str, Any]]] = []
    token = NOTES.set(notes)
    begin = getattr(session, "begin_check", None)
    if begin is not None:  # a loss in an earlier check does not stop this one (task_runs.py)
        begin()
    try:
        if not _replay_passes(check, session, graders):
            _call(check, session, graders)
    except CheckFailed as exc:
        key = exc.key
        feedback = render(graders, exc.key, exc.params, falsifying_example(exc))
    except WorkerLost as exc:
        key, feedback = lost_feedback(graders, task, exc)
    except StudentCodeError as exc:
        key, feedback = student_error_feedback(graders, exc, falsifying_example(exc))
    except AssertionError as exc:
        key = "assertion"
        feedback = render(graders, "engine.grader_error", {"type": "AssertionError", "message": str(exc)})
    except Exception as exc:  # noqa: BLE001  a check that cannot judge must fail closed, never pass
        key = "engine.grader_error"
        feedback = render(graders, key, {"type": type(exc).__name__, "message": str(exc)})
    finally:
        NOTES.reset(token)
    if not key and notes:  # a passing check's notes: feedback, never a charge (no message key)
        shown = dict.fromkeys(render(graders, k, p) for k, p in notes)  # once each, in order
        feedback = "\n".join(shown)[:FEEDBACK_LIMIT]
    score = 0.0 if key else check.points
    return CheckResult(
        check.id, check.task, check.name, check.title, score, check.points, check.public, feedback, key,
        time.monotonic() - started,
    )


def failed_all(checks: tuple[Check, ...], key: str, feedback: str) -> tuple[CheckResult, ...]:
    """Every check of a task fails for one reason (missing file, import error)."""
    return tuple(
        CheckResult(c.id, c.task, c.name, c.title, 0.0, c.points, c.public, feedback, key) for c in checks
    )
