"""JUnit files validate against the common schemas; import errors and time limits are <error>s."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema
import xunitparser
from conftest import make_result

from autograder.config import Assignment, Kit
from autograder.grading.results import SubmissionResult
from autograder.platforms.junit import is_error, write_junit

SCHEMAS = Path(__file__).resolve().parents[1] / "data" / "junit"


@pytest.fixture(scope="module")
def assignment(kit: Kit) -> Assignment:
    return kit.assignment("nn_module")


@pytest.fixture(scope="module", params=["junit-10.xsd", "junit-4.xsd"])
def schema(request) -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(SCHEMAS / request.param))


def _broken(assignment: Assignment) -> SubmissionResult:
    """tinynet does not import, delivery timed out on its hidden check, dropout is plainly wrong."""
    result = make_result(assignment, "jdoe", {"delivery": 10, "dropout": 2.5})
    tasks = []
    for task in result.tasks:
        checks = list(task.checks)
        if task.task == "tinynet":
            checks = [dataclasses.replace(c, score=0.0, feedback="`tinynet.py` could not be imported",
                                          message_key="engine.import_error") for c in checks]
        if task.task == "delivery":
            checks[1] = dataclasses.replace(checks[1], message_key="engine.time_limit", seconds=2.25)
        checks = [dataclasses.replace(c, seconds=c.seconds or 0.125) for c in checks]
        tasks.append(dataclasses.replace(task, checks=tuple(checks), seconds=3.5, output="printed\n"))
    return dataclasses.replace(result, tasks=tuple(tasks), notes=("a note",))


def test_every_file_validates(tmp_path, assignment, schema):
    for result in [make_result(assignment, "ok"), make_result(assignment, "রহিম", {"tinynet": 1}),
                   _broken(assignment)]:
        path = write_junit(result, tmp_path / "x.xml")
        errors = list(schema.iter_errors(str(path)))
        assert errors == [], [str(e)[:300] for e in errors[:3]]


def test_xunitparser_reads_every_file_whole(tmp_path, assignment):
    """xunitparser gathers the properties of every suite in one mapping and stops at a name it has
    seen: each name is used once; its counts are the file's own."""
    for result in [make_result(assignment, "ok"), _broken(assignment)]:
        path = write_junit(result, tmp_path / "x.xml")
        suite, outcome = xunitparser.parse(str(path))
        checks = [c for t in result.tasks for c in t.checks]
        assert len(list(suite)) == len(checks) == outcome.testsRun
        assert (len(outcome.errors), len(outcome.failures)) == (
            sum(not c.passed and is_error(c.message_key) for c in checks),
            sum(not c.passed and not is_error(c.message_key) for c in checks))
        assert suite.properties["student"] == result.student
        assert suite.properties["total_score"] == f"{result.score:g}"
        for task in result.tasks:
            assert suite.properties[f"{task.task}.score"] == f"{task.score:g}"
            for check in task.checks:
                assert suite.properties[f"{check.check_id}.points"] == f"{check.score:g}"
        names = [p.get("name") for p in ET.parse(path).getroot().iter("property")]
        assert len(names) == len(set(names))


def test_the_schemas_catch_what_the_old_files_did(schema):
    """The schema files in the tests reject `<properties>` inside `<testcase>` (the old layout)."""
    old = ('<testsuites><testsuite name="s" tests="1" failures="0" errors="0">'
           '<testcase name="c" time="0"><properties><property name="points" value="1"/></properties>'
           '</testcase></testsuite></testsuites>')
    assert not schema.is_valid(old)


def test_import_errors_and_time_limits_are_errors_with_real_times(tmp_path, assignment):
    root = ET.parse(write_junit(_broken(assignment), tmp_path / "x.xml")).getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("14", "1", "3")
    suites = {s.get("name").split(".")[1]: s for s in root.findall("testsuite")}
    tinynet = suites["tinynet"]
    assert (tinynet.get("failures"), tinynet.get("errors"), tinynet.get("time")) == ("0", "2", "3.500")
    assert [c.find("error").get("type") for c in tinynet.findall("testcase")] == ["engine.import_error"] * 2
    delivery = suites["delivery"].findall("testcase")
    assert delivery[1].find("error") is not None and delivery[1].find("failure") is None
    assert (delivery[0].get("time"), delivery[1].get("time")) == ("0.125", "2.250")
    dropout = suites["dropout"].findall("testcase")
    assert dropout[1].find("failure") is not None and dropout[1].find("error") is None
    assert suites["dropout"].find("system-out").text == "a note\nprinted"


@pytest.mark.parametrize(("key", "error"), [
    ("engine.import_error", True), ("common.import_error", True), ("engine.time_limit", True),
    ("engine.missing_file", True), ("engine.killed", True), ("engine.not_implemented", False),
    ("engine.student_error", False), ("tinynet.names", False), ("", False),
])
def test_which_keys_are_errors(key, error):
    assert is_error(key) is error
