"""Grading side: call a probe, turning the student's exceptions into catalogue messages."""

from __future__ import annotations

import copy
import hashlib
import re
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from autograder.checks import StudentCodeError, TaskSession, WorkerLost, fail

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
MESSAGE_LIMIT = 300
# The worker's folder of one task (relay.py: mkdtemp(prefix="task-")), up to the student's file name:
# the student knows their file as `unit_rows.py`, and the folder differs on every run.
_TASK_FOLDER = re.compile(r"(?:[A-Za-z]:)?[^\s'\"():]*[/\\]task-[A-Za-z0-9_]+[/\\]")
# task session -> the answers `call_once` keeps for it (they go with the session)
_ANSWERS: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()

# The engine catalogue's messages for a student's exception (autograder/messages/<lang>.toml);
# an assignment's own catalogue may restate them.
NOT_IMPLEMENTED = "common.not_implemented"
IMPORT_ERROR = "common.import_error"
RAISED = "common.raised"
WRAPPED = "common.wrapped_error"
# Exception types a contract names, as probes report an exception's classes (module.qualname).
QUALIFIED = {
    "RuntimeError": "builtins.RuntimeError",
    "ValueError": "builtins.ValueError",
    "TypeError": "builtins.TypeError",
    "KeyError": "builtins.KeyError",
    "UnpicklingError": "_pickle.UnpicklingError",  # pickle.UnpicklingError is _pickle's
}


def raised_as(obs: Any, name: str) -> bool:
    """The exception that reached the caller (a probe's {type, mro, ...}) is a `name` or a subclass.

    Only the outer exception counts: one caught and re-raised as another type (`raise X from err`)
    is not a `name` for the caller's `except name:`, even though `name` is in its chain."""
    if obs is None or "mro" not in obs:
        return False
    return QUALIFIED.get(name, name) in obs["mro"]


def clean(text: str, limit: int = MESSAGE_LIMIT, scrub: tuple[re.Pattern[str], ...] = ()) -> str:
    """A student's exception message without memory addresses or colour codes (feedback must be
    repeatable); each `scrub` pattern (say, a temporary folder) becomes <path>."""
    text = _ADDRESS.sub("", _ANSI.sub("", text))
    for pattern in scrub:
        text = pattern.sub("<path>", text)
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + "..."


def student_paths(text: str) -> str:
    """`text` (a student's output) with each path into the worker's task folder cut to the file name."""
    return _TASK_FOLDER.sub("", text)


@dataclass(frozen=True)
class ProbeCaller:
    """How one assignment's checks call probes: which parts of messages to scrub."""

    scrub: tuple[re.Pattern[str], ...] = ()

    def error_params(self, err: StudentCodeError, call: str) -> dict[str, str]:
        """The placeholders of the common.* messages: call, type, message, where."""
        where = f" (`{err.where}`)" if err.where else ""  # the same in every language
        return {"call": call, "type": err.type_name, "message": clean(err.message, scrub=self.scrub),
                "where": where}

    def student_error(self, err: StudentCodeError, call: str,
                      hints: Mapping[str, str] | None = None) -> NoReturn:
        """Fail the check because the student's code raised; the message says which call and why.

        A stub's NotImplementedError and an import failure have their own messages; `hints` maps a
        text in the exception's message (or its type name) to a more specific message key.
        """
        params = self.error_params(err, call)
        if err.type_name == "NotImplementedError":
            fail(NOT_IMPLEMENTED, **params)
        if err.probe == "import":
            fail(IMPORT_ERROR, **params)
        for needle, key in (hints or {}).items():
            if needle in err.message or needle == err.type_name:
                fail(key, **params)
        fail(RAISED, **params)

    def call(self, worker: TaskSession, probe: str, what: str,
             hints: Mapping[str, str] | None = None, **kwargs: Any) -> Any:
        """worker.call(probe, **kwargs); a StudentCodeError becomes a failed check about `what`."""
        try:
            return worker.call(probe, **kwargs)
        except StudentCodeError as err:
            self.student_error(err, what, hints)
        except WorkerLost as lost:  # its feedback names the student's call, never the probe
            lost.call = lost.call or what
            raise

    def call_once(self, worker: TaskSession, probe: str, what: str,
                  hints: Mapping[str, str] | None = None, **kwargs: Any) -> Any:
        """`call(...)` once per task session for the very same inputs: the checks of a task that ask one
        question of one run (each judging its own property of the answer) get a copy of one answer
        instead of each paying for the run. A failure is not kept: the next check asks again."""
        answers = _ANSWERS.setdefault(worker, {})
        key = call_key(probe, kwargs)
        if key not in answers:
            answers[key] = self.call(worker, probe, what, hints, **kwargs)
        return copied(answers[key])

    def raised_name(self, obs: Any) -> str:
        """How an exception a probe caught and reported reads in feedback: {type, message} (or None),
        with `mro` (module.qualname of its classes) and `chain` (type names, outermost first) when
        the probe gives them: a look-alike of a named type says what it really is, a chain is shown."""
        if obs is None:
            return "no exception"
        shown, mro = obs["type"], obs.get("mro") or []
        if shown in QUALIFIED and mro and mro[0] != QUALIFIED[shown]:
            shown = f"{mro[0]} (not {QUALIFIED[shown]})"
        text = f"{shown}: {clean(str(obs['message']), 200, self.scrub)}"
        chain = obs.get("chain") or []
        if len(chain) > 1:
            text += f" (its chain: {' from '.join(chain)})"
        return text

    def require_raised(self, obs: Any, name: str, call_text: str, wrong_key: str, field: str = "raised",
                       **params: Any) -> None:
        """Fail unless the exception that reached the caller is a `name`: `wrong_key` (with `params`,
        the exception in `field`) for another one, common.wrapped_error when `name` is only deeper
        in its chain (caught and re-raised as another type: the caller's `except name` misses it)."""
        if raised_as(obs, name):
            return
        if obs is not None and name in (obs.get("chain") or [])[1:]:
            fail(WRAPPED, call=call_text, want=name, raised=self.raised_name(obs))
        fail(wrong_key, **{field: self.raised_name(obs)}, **params)

    def raised_error(self, raised: Any, call: str, hints: Mapping[str, str] | None = None) -> None:
        """A probe's caught exception (or None) judged as if it had escaped the probe."""
        if raised is not None:
            err = StudentCodeError("case", raised["type"], raised.get("message", ""))
            self.student_error(err, call, hints)

    def fail_if_not_implemented(self, raised: Any, call: str) -> None:
        """A probe caught a stub's NotImplementedError ({type, message}): no points for a stub."""
        if raised is not None and raised.get("type") == "NotImplementedError":
            fail(NOT_IMPLEMENTED, call=call, type="NotImplementedError",
                 message=clean(str(raised.get("message", "")), scrub=self.scrub), where="")


def call_key(probe: str, kwargs: Mapping[str, Any]) -> str:
    """The identity of a call: its probe and its inputs, every array by all of its bytes (a digest
    fed as it walks them: spelling a large array out with repr cost ms a call)."""
    digest = hashlib.sha256()
    _feed(digest, probe)
    _feed(digest, kwargs)
    return digest.hexdigest()


def _feed(digest: Any, value: Any) -> None:
    # Every part is tagged and its length given, so no two different inputs feed the same bytes.
    if hasattr(value, "tobytes") and hasattr(value, "dtype") and hasattr(value, "shape"):
        data = value.tobytes()
        shape = repr(tuple(value.shape)).encode()
        digest.update(b"A%d:%s:%s:" % (len(data), str(value.dtype).encode(), shape))
        digest.update(data)
    elif isinstance(value, Mapping):
        items = sorted(((str(k), v) for k, v in value.items()), key=lambda item: item[0])
        digest.update(b"M%d:" % len(items))
        for k, v in items:
            _feed(digest, k)
            _feed(digest, v)
    elif isinstance(value, list | tuple):
        digest.update(b"L%d:" % len(value))
        for v in value:
            _feed(digest, v)
    else:
        text = repr(value).encode("utf-8", "backslashreplace")
        digest.update(b"V%d:" % len(text))
        digest.update(text)


def copied(value: Any) -> Any:
    """A copy of a probe's answer that its checks may change freely: plain data (dicts, lists, arrays,
    scalars) copied by structure, anything else by deepcopy (deepcopy's memo cost most of a call)."""
    kind = type(value)
    if kind in _ATOMIC:
        return value
    if kind is dict:
        return {k: copied(v) for k, v in value.items()}
    if kind is list:
        return [copied(v) for v in value]
    if kind is tuple:
        return tuple(copied(v) for v in value)
    if kind is np.ndarray and value.dtype != object:
        return value.copy()
    return copy.deepcopy(value)


_ATOMIC = frozenset({str, int, float, bool, type(None), bytes, complex})


_DEFAULT = ProbeCaller()
call = _DEFAULT.call
call_once = _DEFAULT.call_once
student_error = _DEFAULT.student_error
error_params = _DEFAULT.error_params
raised_name = _DEFAULT.raised_name
require_raised = _DEFAULT.require_raised
raised_error = _DEFAULT.raised_error
fail_if_not_implemented = _DEFAULT.fail_if_not_implemented


def scalar_type(obs: Mapping[str, Any], want: str = "float") -> str | None:
    """Why a returned scalar (a probe's {type, as_float}) is not exactly `want` (None: it is)."""
    if obs["type"] == want:
        return None
    held = obs.get("as_float")
    return str(obs["type"]) + (f" holding {held:.6g}" if isinstance(held, float) else "")
