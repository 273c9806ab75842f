"""JUnit XML: one file per student, a testsuite per task and a testcase per check, points as properties."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

from autograder import __version__
from autograder.grading.results import SubmissionResult
from autograder.platforms.export_files import ExportError, not_graded_reason, now_utc
from autograder.submissions.students import safe_name

_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    """Text XML 1.0 can hold: control characters (ANSI colours, NULs from student output) become `?`."""
    return _XML_INVALID.sub("?", text)


def _props(parent: ET.Element, values: dict[str, str]) -> None:
    props = ET.SubElement(parent, "properties")
    for name, value in values.items():
        ET.SubElement(props, "property", name=name, value=_xml_text(value))


def junit_tree(result: SubmissionResult, timestamp: str | None = None) -> ET.ElementTree:
    """`<testsuites>` with one `<testsuite>` per task and one `<testcase>` per check."""
    stamp = (timestamp or now_utc()).removesuffix("+00:00")  # junit-4.xsd: dateTime without zone
    checks = [c for t in result.tasks for c in t.checks]
    failures = sum(not c.passed for c in checks)
    root = ET.Element("testsuites", name=_xml_text(f"{result.assignment}: {result.student}"),
                      tests=str(len(checks)), failures=str(failures), errors="0",
                      time=f"{result.execution_time:.3f}")
    for task in result.tasks:
        suite = ET.SubElement(
            root, "testsuite", name=_xml_text(f"{result.assignment}.{task.task}"),
            tests=str(len(task.checks)), failures=str(sum(not c.passed for c in task.checks)),
            errors="0", skipped="0", time="0", timestamp=stamp,
        )
        _props(suite, {
            "assignment": result.assignment,
            "task": task.task,
            "student": result.student,
            "score": f"{task.score:g}",
            "max_score": f"{task.max_score:g}",
            "total_score": f"{result.score:g}",
            "total_max_score": f"{result.max_score:g}",
            "kit_version": __version__,
            "exported_at": stamp,
        })
        for check in task.checks:
            case = ET.SubElement(suite, "testcase", classname=_xml_text(f"{result.assignment}.{task.task}"),
                                 name=_xml_text(check.title), time="0")
            _props(case, {
                "points": f"{check.score:g}",
                "max_points": f"{check.max_score:g}",
                "check_id": check.check_id,
                "visibility": "public" if check.public else "hidden",
            })
            if not check.passed:
                first = next((ln.strip() for ln in check.feedback.splitlines() if ln.strip()), "")
                message = first[:200] or f"{check.score:g}/{check.max_score:g} points"
                failure = ET.SubElement(case, "failure", message=_xml_text(message),
                                        type=_xml_text(check.message_key or "failed"))
                failure.text = _xml_text(check.feedback)
        notes = [*filter(None, [not_graded_reason(result)]), *result.notes, *task.notes]
        if notes or task.output:
            out = ET.SubElement(suite, "system-out")
            out.text = _xml_text("\n".join([*notes, task.output]).strip("\n"))
    ET.indent(root)
    return ET.ElementTree(root)


def write_junit(result: SubmissionResult, path: Path) -> Path:
    """One student's JUnit XML file (UTF-8, with an XML declaration)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    junit_tree(result).write(path, encoding="utf-8", xml_declaration=True)
    return path


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
