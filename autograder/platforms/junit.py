"""JUnit XML: one file per student, a testsuite per task, a testcase per check, points as suite properties."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

from autograder import __version__, atomic
from autograder.grading.results import SubmissionResult
from autograder.platforms.export_files import ExportError, not_graded_reason, now_utc
from autograder.submissions.students import safe_name, shown_name

_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    """Text XML 1.0 can hold: control characters (ANSI colours, NULs from student output) become `?`."""
    return _XML_INVALID.sub("?", text)


# Why a check is an <error> and not a <failure>: the grader could not judge it at all (the file
# did not import, the sandbox stopped it, the grader itself broke), as JUnit keeps `error` for a
# test that did not run to its assertion. A wrong answer, a stub or an exception the student's
# function raised on the grader's input is a judged check: a <failure>.
_ERROR_KINDS = frozenset({
    "import_error", "missing_file", "time_limit", "cpu_limit", "exited", "crashed", "killed",
    "answer_too_large", "protocol", "grader_error",
})


def is_error(message_key: str) -> bool:
    """True when the check could not be judged (import error, time limit...): JUnit's `<error>`."""
    return message_key.rpartition(".")[2] in _ERROR_KINDS


def _props(parent: ET.Element, values: dict[str, str]) -> None:
    props = ET.SubElement(parent, "properties")
    for name, value in values.items():
        ET.SubElement(props, "property", name=name, value=_xml_text(value))


def _seconds(value: float) -> str:
    return f"{max(0.0, value):.3f}"


def junit_tree(result: SubmissionResult, timestamp: str | None = None) -> ET.ElementTree:
    """`<testsuites>` with one `<testsuite>` per task and one `<testcase>` per check.

    Valid against Jenkins' junit-10.xsd and the junit-4.xsd family: properties only on the
    testsuite (each check's points as `<check_id>.points` there), in the order junit-4 requires
    (properties, testcases, system-out). Every property name occurs once in the file, as readers
    that gather the properties of all suites in one mapping need (xunitparser stops at a repeated
    one): the task's own under `<task>.`, what the whole submission shares in the first suite only."""
    stamp = (timestamp or now_utc()).removesuffix("+00:00")  # junit-4.xsd: dateTime without zone
    checks = [c for t in result.tasks for c in t.checks]
    errors = sum(not c.passed and is_error(c.message_key) for c in checks)
    failures = sum(not c.passed for c in checks) - errors
    root = ET.Element("testsuites", name=_xml_text(f"{result.assignment}: {shown_name(result.student)}"),
                      tests=str(len(checks)), failures=str(failures), errors=str(errors),
                      time=_seconds(result.execution_time))
    shared = {
        "assignment": result.assignment,
        "student": shown_name(result.student),
        "total_score": f"{result.score:g}",
        "total_max_score": f"{result.max_score:g}",
        "kit_version": __version__,
        "exported_at": stamp,
    }
    for index, task in enumerate(result.tasks):
        task_errors = sum(not c.passed and is_error(c.message_key) for c in task.checks)
        suite = ET.SubElement(
            root, "testsuite", name=_xml_text(f"{result.assignment}.{task.task}"),
            tests=str(len(task.checks)),
            failures=str(sum(not c.passed for c in task.checks) - task_errors),
            errors=str(task_errors), skipped="0",
            time=_seconds(task.seconds or sum(c.seconds for c in task.checks)), timestamp=stamp,
        )
        values = {**(shared if index == 0 else {}), f"{task.task}.score": f"{task.score:g}",
                  f"{task.task}.max_score": f"{task.max_score:g}"}
        for check in task.checks:
            values |= {
                f"{check.check_id}.points": f"{check.score:g}",
                f"{check.check_id}.max_points": f"{check.max_score:g}",
                f"{check.check_id}.visibility": "public" if check.public else "hidden",
            }
        _props(suite, values)
        for check in task.checks:
            case = ET.SubElement(suite, "testcase", classname=_xml_text(f"{result.assignment}.{task.task}"),
                                 name=_xml_text(check.title), time=_seconds(check.seconds))
            if not check.passed:
                first = next((ln.strip() for ln in check.feedback.splitlines() if ln.strip()), "")
                message = first[:200] or f"{check.score:g}/{check.max_score:g} points"
                kind = "error" if is_error(check.message_key) else "failure"
                element = ET.SubElement(case, kind, message=_xml_text(message),
                                        type=_xml_text(check.message_key or "failed"))
                element.text = _xml_text(check.feedback)
        notes = [*filter(None, [not_graded_reason(result)]), *result.notes, *task.notes]
        if notes or task.output:
            out = ET.SubElement(suite, "system-out")
            out.text = _xml_text("\n".join([*notes, task.output]).strip("\n"))
    ET.indent(root)
    return ET.ElementTree(root)


def write_junit(result: SubmissionResult, path: Path) -> Path:
    """One student's JUnit XML file (UTF-8, with an XML declaration)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = io.BytesIO()
    junit_tree(result).write(data, encoding="utf-8", xml_declaration=True)
    return atomic.write_bytes(path, data.getvalue())  # whole or not at all


def junit_filename(student: str) -> str:
    """The file name of a student's JUnit XML: their id made safe for a file name."""
    return f"{safe_name(student)}.xml"


def write_junit_all(results: Iterable[SubmissionResult], out_dir: Path) -> list[Path]:
    """`OUT_DIR/<student>.xml` for every result; two students with the same file name are an error."""
    results = list(results)
    names: dict[str, str] = {}
    for result in results:
        name = junit_filename(result.student)
        if name in names and names[name] != result.student:
            raise ExportError(
                f"students {names[name]!r} and {result.student!r} would both be written to {name}"
            )
        names[name] = result.student
    return [write_junit(r, out_dir / junit_filename(r.student)) for r in results]
