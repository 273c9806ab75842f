"""Grading side: call a probe, turning the student's exceptions into catalogue messages."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from autograder.checks import StudentCodeError, TaskSession, fail

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
MESSAGE_LIMIT = 300

# The engine catalogue's messages for a student's exception (autograder/messages/<lang>.toml);
# an assignment's own catalogue may restate them.
NOT_IMPLEMENTED = "common.not_implemented"
IMPORT_ERROR = "common.import_error"
RAISED = "common.raised"


def clean(text: str, limit: int = MESSAGE_LIMIT, scrub: tuple[re.Pattern[str], ...] = ()) -> str:
    """A student's exception message without memory addresses or colour codes (feedback must be
    repeatable); each `scrub` pattern (say, a temporary folder) becomes <path>."""
    text = _ADDRESS.sub("", _ANSI.sub("", text))
    for pattern in scrub:
        text = pattern.sub("<path>", text)
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + "..."


@dataclass(frozen=True)
class ProbeCaller:
    """How one assignment's checks call probes: which parts of messages to scrub."""

    scrub: tuple[re.Pattern[str], ...] = ()

    def error_params(self, err: StudentCodeError, call: str) -> dict[str, str]:
        """The placeholders of the common.* messages: call, type, message, where."""
        where = f" (at {err.where})" if err.where else ""
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

    def raised_name(self, obs: Any) -> str:
        """How an exception a probe caught and reported ({type, message} or None) reads in feedback."""
        if obs is None:
            return "no exception"
        return f"{obs['type']}: {clean(str(obs['message']), 200, self.scrub)}"

    def fail_if_not_implemented(self, raised: Any, call: str) -> None:
        """A probe caught a stub's NotImplementedError ({type, message}): no points for a stub."""
        if raised is not None and raised.get("type") == "NotImplementedError":
            fail(NOT_IMPLEMENTED, call=call, type="NotImplementedError",
                 message=clean(str(raised.get("message", "")), scrub=self.scrub), where="")


_DEFAULT = ProbeCaller()
call = _DEFAULT.call
student_error = _DEFAULT.student_error
error_params = _DEFAULT.error_params
raised_name = _DEFAULT.raised_name
fail_if_not_implemented = _DEFAULT.fail_if_not_implemented


def scalar_type(obs: Mapping[str, Any], want: str = "float") -> str | None:
    """Why a returned scalar (a probe's {type, as_float}) is not exactly `want` (None: it is)."""
    if obs["type"] == want:
        return None
    held = obs.get("as_float")
    return str(obs["type"]) + (f" holding {held:.6g}" if isinstance(held, float) else "")
