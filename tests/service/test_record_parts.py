"""The parts of the instructor's workflow pages, without a server: an upload's files read within bounds,
the forms' fields checked, the class table's CSV safe to open, who wrote a record.

Proves: a zip's members are listed with their text (a binary one named, not shown; a long one cut
at MAX_SHOWN; a corrupt one named as unreadable; at most MAX_MEMBERS), a download stops at
MAX_DOWNLOAD (a zip bomb), a notebook's files are its cells, a download's name is one file name;
points are finite and within the maximum, a moment is the script's UTC reading or the field in the
assignment's zone, a text is needed and bounded, a scope is one offered; every CSV cell that would
start a formula is inert; a record's author is the launch's name and LTI user id.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import zipfile
from datetime import UTC, datetime

import pytest

from autograder.config import ExamConfig, Kit
from autograder.service import upload_files
from autograder.service.class_table import ClassRow, View, class_csv
from autograder.service.lti_launch import Launch
from autograder.service.record_forms import FormProblem, moment_field, points_field, scope_field, text_field
from autograder.service.records_view import MAX_TEXT, Scope, author_of
from autograder.service.texts import texts


def archive(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as made:
        for name, data in members.items():
            made.writestr(name, data)
    return buffer.getvalue()


def test_a_zips_files_are_read_within_their_bounds():
    data = archive({"tinynet.py": b"import torch\n", "blob.bin": b"\x00\x01\x02",
                    "long.py": b"#" * (upload_files.MAX_SHOWN + 10), "dir/inner.py": "x = 'ক'\n".encode()})
    files = {f.name: f for f in upload_files.files_of("zip", data)}
    assert files["tinynet.py"].text == "import torch\n" and not files["tinynet.py"].truncated
    assert files["blob.bin"].binary and files["blob.bin"].text == ""
    assert files["long.py"].truncated and len(files["long.py"].text) == upload_files.MAX_SHOWN
    inner = files["dir/inner.py"]
    assert inner.text == "x = 'ক'\n" and inner.size == len("x = 'ক'\n".encode())
    many = archive({f"f{i}.py": b"" for i in range(upload_files.MAX_MEMBERS + 5)})
    assert len(upload_files.files_of("zip", many)) == upload_files.MAX_MEMBERS
    assert upload_files.files_of("zip", b"not a zip") == []


def test_a_corrupt_member_is_named_unreadable():
    data = bytearray(archive({"a.py": b"print('a')\n" * 50, "b.py": b"ok\n"}))
    start = data.index(b"print") if b"print" in data else data.index(b"a.py") + 4 + 10
    data[start:start + 8] = b"\xff" * 8  # the deflated bytes of a.py, broken
    files = {f.name: f for f in upload_files.files_of("zip", bytes(data))}
    assert files["a.py"].unreadable and files["b.py"].text == "ok\n"


def test_a_download_stops_at_its_bound():
    bomb = archive({"zeros.py": b"0" * (upload_files.MAX_DOWNLOAD + 1024)})
    assert len(bomb) < 100_000  # a small upload that inflates past the bound
    found = upload_files.file_bytes("zip", bomb, 0)
    assert found is not None and found[0] == "zeros.py" and len(found[1]) == upload_files.MAX_DOWNLOAD
    assert upload_files.file_bytes("zip", bomb, 1) is None and upload_files.file_bytes("zip", b"x", 0) is None


def test_a_notebooks_files_are_its_cells():
    notebook = {"cells": [{"cell_type": "markdown", "source": ["# TinyNet"]},
                          {"cell_type": "code", "source": ["class TinyNet:\n", "    pass\n"]}, "junk"]}
    data = json.dumps(notebook).encode()
    files = upload_files.files_of("ipynb", data)
    assert [(f.name, f.text) for f in files] == [("cell 1 (markdown)", "# TinyNet"),
                                                 ("cell 2 (code)", "class TinyNet:\n    pass\n")]
    assert upload_files.file_bytes("ipynb", data, 1) == ("cell 2 (code)", b"class TinyNet:\n    pass\n")
    assert upload_files.files_of("ipynb", b"{broken") == []


@pytest.mark.parametrize(("name", "expected"), [
    ("dir/sub/tinynet.py", "tinynet.py"), ("..\\evil.py", "evil.py"), ('a"b<c>.py', "a_b_c_.py"),
    ("", "fallback"), ("...", "fallback"), ("x\ny.py", "x_y.py"),
])
def test_a_download_name_is_one_plain_file_name(name: str, expected: str):
    assert upload_files.download_name(name, "fallback") == expected


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "101", "-100.5", "", "two"])
def test_points_are_a_finite_number_within_the_maximum(text: str):
    with pytest.raises(FormProblem) as problem:
        points_field({"points": text}, 100.0)
    assert problem.value.key == "form_bad_points" and problem.value.fields == {"limit": "100"}


def test_points_read_as_written():
    assert points_field({"points": " -2,5 "}, 100.0) == -2.5
    assert points_field({"points": "100"}, 100.0) == 100.0


def test_a_moment_is_the_scripts_utc_reading_or_the_field_in_the_assignments_zone(kit: Kit):
    homework = kit.assignment("nn_module")
    exam = dataclasses.replace(homework, exam=ExamConfig(timezone="Asia/Dhaka"))
    exact = {"deadline": "2025-12-20T23:59", "deadline_utc": "2025-12-20T17:59:00.000Z"}
    assert moment_field(exact, "deadline", homework) == datetime(2025, 12, 20, 17, 59, tzinfo=UTC)
    naive = {"deadline": "2025-12-20T23:59"}
    assert moment_field(naive, "deadline", homework) == datetime(2025, 12, 20, 23, 59, tzinfo=UTC)
    assert moment_field(naive, "deadline", exam) == datetime(2025, 12, 20, 17, 59, tzinfo=UTC)  # UTC+6
    assert moment_field({"deadline": "2025-12-20T23:59+01:00"}, "deadline", exam) == \
        datetime(2025, 12, 20, 22, 59, tzinfo=UTC)
    assert moment_field({"deadline": ""}, "deadline", homework) is None
    with pytest.raises(FormProblem, match="form_bad_moment"):
        moment_field({"deadline": "tomorrow"}, "deadline", homework)


def test_a_text_is_needed_and_bounded_and_a_scope_is_one_offered():
    assert text_field({"reason": "  fair \r\n point "}, "reason", "form_need_reason") == "fair \n point"
    with pytest.raises(FormProblem, match="form_need_reason"):
        text_field({"reason": " \n "}, "reason", "form_need_reason")
    with pytest.raises(FormProblem, match="form_too_long"):
        text_field({"reason": "x" * (MAX_TEXT + 1)}, "reason", "form_need_reason")
    offered = [("total", "", ""), ("task:tinynet", "tinynet", ""), ("check:tinynet:t.h", "tinynet", "t.h")]
    assert scope_field({"scope": "check:tinynet:t.h"}, offered) == Scope("tinynet", "t.h")
    assert scope_field({}, offered) == Scope()
    with pytest.raises(FormProblem, match="form_bad_scope"):
        scope_field({"scope": "check:other:x"}, offered)


def test_the_class_csv_holds_every_cell_as_text():
    rows = [ClassRow("=hyperlink(\"x\")", "2025-12-14T10:00:00Z", 95.0, 100.0, ("adjusted -2",)),
            ClassRow("+sum(a1)", None, 0.0, 100.0, ()), ClassRow("@ada", None, 7.5, 100.0, ("x", "y"))]
    t = texts("en")
    lines = list(csv.reader(io.StringIO(class_csv(rows, t))))
    assert lines[0] == ["Student", "Newest upload", "Score", "Out of", "Notes"]
    assert [line[0] for line in lines[1:]] == ["'=hyperlink(\"x\")", "'+sum(a1)", "'@ada"]
    assert lines[1][1:] == ["2025-12-14T10:00:00Z", "95", "100", "adjusted -2"] and lines[3][4] == "x; y"
    assert View.of({"sort": "evil", "dir": "up", "q": "  ad "}) == View("ad", "student", False)
    assert View("ad", "score", True).args(sort="last") == {"q": "ad", "sort": "last", "dir": "desc"}


def test_the_author_is_the_launchs_name_and_sub():
    launch = Launch("teacher", "uid-7", "Dr. Karim", "nn_module", "en", True)
    assert author_of(launch) == "Dr. Karim (uid-7)"
    assert author_of(dataclasses.replace(launch, name="uid-7")) == "uid-7"
