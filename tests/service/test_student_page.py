"""The instructor's page of one student, the class table and its CSV, the forms that write ledger records.

Through the tests' LTI platform: the class table links each student to their page, its search and
sort are the server's too (no script needed) and its CSV holds exactly the rows and cells it shows,
a formula-like student id made inert; a student's page shows every submission with its files (as
text, and downloadable byte for byte), its feedback in English and Bangla, its scores over time,
and why the grade is what it is; the forms (an adjustment, an extension, the release) each write
one signed record authored by the launch's instructor, which `audit` holds, and the LMS gets the
adjusted grade; an adjustment outlasts a regrade. A student reaches none of it (403), a form
without its CSRF token records nothing, a row of another assignment is 404, and no hostile string
(ids, file names, file text, reasons, the instructor's name) is ever in a page raw.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from typing import Any
from urllib.parse import quote

import pytest
import requests
from browser import Browser
from inert import assert_inert, shown_escaped, table_rows
from lms import INSTRUCTOR, Lms, Person, launched, wait_for_score
from lti_platform import LocalPlatform
from served import Served, example, upload, wait_graded

from autograder.ledger import records
from autograder.ledger.audit import audit
from autograder.ledger.release import HELD, NOW
from autograder.output.spreadsheet import original_cell

HOSTILE_ID = "=cmd|'/c calc'!<img src=x onerror=alert('id')>"  # a formula and markup
ZIP_NAME = "<svg onload=alert('zip')>.zip"
INNER = "<img src=x onerror=alert('inner')>.py"
FILE_TEXT = "</pre><script>alert('file')</script>"
REASON = "<b onmouseover=alert('reason')>fair</b>"
TEACHER = "<svg/onload=alert('teacher')>"
HOSTILE = (HOSTILE_ID, ZIP_NAME, INNER, FILE_TEXT, REASON, TEACHER)


def hostile_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        with zipfile.ZipFile(io.BytesIO(example("maya.zip")[1])) as maya:
            for info in maya.infolist():
                archive.writestr(info.filename, maya.read(info))
        archive.writestr(INNER, f"x = {FILE_TEXT!r}\n")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def graded(service: Served, lms: Lms) -> dict[str, Any]:
    """Two students graded (maya's work, once as a hostile student with hostile file names), and the
    instructor (with a hostile name) launched."""
    hostile, page = launched(lms, Person("uid-hostile-r", HOSTILE_ID))
    archive = hostile_zip()
    sent = upload(hostile, service.url, [(ZIP_NAME, archive)], page)
    assert sent.status_code == 202, sent.text
    bob, bob_page = launched(lms, Person("uid-bob-r", "bob"))
    bob_sent = upload(bob, service.url, [example("ayesha.zip")], bob_page)
    assert bob_sent.status_code == 202, bob_sent.text
    done = wait_graded(hostile, service.url, sent.json()["status_url"], timeout=300)
    bob_done = wait_graded(bob, service.url, bob_sent.json()["status_url"], timeout=300)
    assert done["status"] == bob_done["status"] == "graded", (done, bob_done)
    teacher, dashboard = launched(lms, Person("uid-teacher-r", "teacher-r", roles=[INSTRUCTOR], name=TEACHER))
    [student] = [s for s in service.state.inbox.people("nn_module") if s != "bob"]
    return {"hostile": hostile, "hostile_id": student, "bob": bob, "teacher": teacher, "dashboard": dashboard,
            "upload": done, "bob_upload": bob_done, "zip": archive}


def record_url(service: Served, student: str) -> str:
    return f"{service.url}/instructor/students/{quote(student, safe='')}"


def csv_rows(answer: requests.Response) -> list[list[str]]:
    assert answer.status_code == 200 and answer.headers["Content-Type"].startswith("text/csv")
    assert "attachment" in answer.headers["Content-Disposition"]
    return list(csv.reader(io.StringIO(answer.content.decode("utf-8-sig"))))


def shown_rows(page: str) -> list[list[str]]:
    """The class table as the CSV writes it: student, newest upload (ISO), score, out of, notes."""
    rows = []
    for row in table_rows(page, "students")[1:]:
        cells, times = row["cells"], row["times"]
        score, out_of = cells[2].split(" / ")  # type: ignore[index]
        rows.append([cells[0], times[0] if times else "", score, out_of, cells[3]])  # type: ignore[index]
    return rows


def test_the_class_table_links_each_student_and_its_csv_is_what_it_shows(service: Served,
                                                                          graded: dict[str, Any]):
    teacher = graded["teacher"]
    page = teacher.get(service.url + "/instructor").text
    rows = table_rows(page, "students")[1:]
    assert {r["attrs"]["data-student"] for r in rows} == {"bob", graded["hostile_id"]}  # type: ignore[index]
    for row in rows:  # each student's name links to their page, which is theirs
        [link] = [h for h in row["links"] if "/instructor/students/" in h]  # type: ignore[attr-defined]
        answer = teacher.get(service.url + link)
        assert answer.status_code == 200 and shown_escaped(answer.text, row["attrs"]["data-student"])  # type: ignore[index]
    for view in ({}, {"sort": "score", "dir": "desc"}, {"q": "BO"}, {"sort": "student", "dir": "desc"}):
        shown = shown_rows(teacher.get(service.url + "/instructor", params=view).text)
        got = csv_rows(teacher.get(service.url + "/instructor/grades.csv", params=view))
        assert got[0] == ["Student", "Newest upload", "Score", "Out of", "Notes"]
        as_shown = [[original_cell(c) for c in line] for line in got[1:]]
        assert as_shown == shown, view
        assert shown, view
    assert [r[0] for r in shown_rows(teacher.get(service.url + "/instructor?q=BO").text)] == ["bob"]
    by_score = shown_rows(teacher.get(service.url + "/instructor?sort=score&dir=asc").text)
    assert [float(r[2]) for r in by_score] == sorted(float(r[2]) for r in by_score)
    whole = csv_rows(teacher.get(service.url + "/instructor/grades.csv"))
    [cell] = [line[0] for line in whole[1:] if line[0] != "bob"]
    assert cell == "'" + graded["hostile_id"]  # a formula-like id is text in a spreadsheet
    assert not any(c.startswith(("=", "+", "-", "@")) for line in whole for c in line)


def test_a_students_page_shows_their_submissions_files_feedback_and_why(service: Served,
                                                                        graded: dict[str, Any]):
    teacher, student = graded["teacher"], graded["hostile_id"]
    page = teacher.get(record_url(service, student))
    assert page.status_code == 200 and page.headers["Cache-Control"] == "no-store"
    text = page.text
    for name in ("tinynet.py", "dropout.py"):
        assert name in text
    assert shown_escaped(text, ZIP_NAME) and shown_escaped(text, INNER)
    assert shown_escaped(text, f"x = {FILE_TEXT!r}")  # the file's text, as text
    inbox = service.state.inbox
    [row] = inbox.of_student("nn_module", student)
    download = teacher.get(f"{service.url}/instructor/uploads/{row.id}")
    assert download.status_code == 200 and download.content == graded["zip"]
    assert download.headers["Content-Disposition"].startswith("attachment")
    with zipfile.ZipFile(io.BytesIO(download.content)) as archive:
        names = [i.filename for i in archive.infolist()]
        index = names.index("tinynet.py")
        one = teacher.get(f"{service.url}/instructor/uploads/{row.id}/files/{index}")
        assert one.status_code == 200 and one.content == archive.read("tinynet.py")
        assert "attachment" in one.headers["Content-Disposition"]
    assert teacher.get(f"{service.url}/instructor/uploads/{row.id}/files/999").status_code == 404
    for lang in ("en", "bn"):  # the feedback in either language
        feedback = teacher.get(f"{service.url}/instructor/gradings/{row.id}/feedback", params={"lang": lang})
        assert feedback.status_code == 200 and f'lang="{lang}"' in feedback.text
        assert f'href="/instructor/gradings/{row.id}/feedback?lang={lang}"' in text
    standing = re.search(r'id="standing-score"><b class="score">([\d.]+)</b> / 100', text)
    assert standing and float(standing.group(1)) == graded["upload"]["score"]
    assert "newest graded submission is their grade" in text  # the counting rule
    assert "No adjustment is in force." in text and "No extension." in text
    assert "Students see their scores and feedback as soon as they are graded." in text
    timeline = table_rows(text, "timeline-table")
    assert len(timeline) == 2 and 'role="img"' in text and "<title" in text


def form(browser: Browser, page: str, **fields: str) -> dict[str, str]:
    return {"csrf_token": browser.csrf(page), **fields}


def ledger(service: Served, kind: records.RecordKind, student: str | None = None) -> list[dict[str, Any]]:
    with service.state.inbox.lock:
        return service.state.inbox.book.records(kind, "nn_module", student)


def test_the_forms_write_signed_records_by_the_instructor_and_an_adjustment_outlasts_a_regrade(
        service: Served, graded: dict[str, Any], platform: LocalPlatform, lms: Lms):
    teacher = graded["teacher"]
    page = teacher.get(record_url(service, "bob")).text
    before = graded["bob_upload"]["score"]
    sent = teacher.post(service.url + "/instructor/adjust",
                        data=form(teacher, page, student="bob", scope="total", points="-3", reason=REASON))
    assert sent.status_code == 200 and "The adjustment of -3 points is saved." in sent.text
    [made] = ledger(service, records.ADJUSTMENT, "bob")
    assert made["points"] == -3.0 and made["reason"] == REASON
    assert made["author"] == f"{TEACHER} (uid-teacher-r)"
    assert shown_escaped(sent.text, REASON) and f"{before - 3:g}" in sent.text
    wait_for_score(platform, lms.lineitem, "uid-bob-r", before - 3)  # the LMS gets the grade as it counts
    bad = teacher.post(service.url + "/instructor/adjust",
                       data=form(teacher, page, student="bob", scope="total", points="lots", reason="x"))
    assert "Points must be a number" in bad.text and len(ledger(service, records.ADJUSTMENT, "bob")) == 1
    sent = teacher.post(service.url + "/instructor/extend", data=form(
        teacher, page, student="bob", deadline="2030-01-01T12:00", exempt="1", reason="ill"))
    assert "The extension is saved." in sent.text
    [extension] = ledger(service, records.EXTENSION, "bob")
    assert extension["deadline"] == "2030-01-01T12:00:00+00:00" and extension["exempt"] == 1
    dashboard = teacher.get(service.url + "/instructor").text
    [bob_row] = [r for r in shown_rows(dashboard) if r[0] == "bob"]
    assert float(bob_row[2]) == before - 3 and "adjusted -3" in bob_row[4] and "extension" in bob_row[4]
    for mode, extra in ((HELD, {}), ("at", {"release_at_utc": "2030-02-01T08:00:00.000Z"}), (NOW, {})):
        sent = teacher.post(service.url + "/instructor/release",
                            data=form(teacher, dashboard, mode=mode, **extra))
        assert "The release is saved" in sent.text
    modes = [(r["mode"], r["release_at"]) for r in ledger(service, records.RELEASE)]
    assert modes == [(HELD, ""), ("at", "2030-02-01T08:00:00+00:00"), (NOW, "")]
    refused = teacher.post(service.url + "/instructor/release", data=form(teacher, dashboard, mode="at"))
    assert "give the moment" in refused.text and len(ledger(service, records.RELEASE)) == 3
    regraded = teacher.post(service.url + "/instructor/regrade",
                            data=form(teacher, dashboard, student="bob"))
    assert "Queued 1 submissions again." in regraded.text
    inbox = service.state.inbox
    [upload_row] = inbox.of_student("nn_module", "bob")
    wait_until_regraded(inbox, upload_row.id)
    page = teacher.get(record_url(service, "bob")).text
    assert len(table_rows(page, "timeline-table")) == 3  # the score over time: graded, regraded
    standing = re.search(r'id="standing-score"><b class="score">([\d.]+)</b>', page)
    assert standing and float(standing.group(1)) == before - 3  # the adjustment outlasts the regrade
    with inbox.lock:
        found = audit(inbox.book, inbox.book.signing_key(service.state.settings.kit.root))
    assert not found.problems, found.problems
    assert len(found.records["adjustment"]) == 1 and len(found.records["release"]) == 3


def wait_until_regraded(inbox: Any, upload_id: int) -> None:
    from lms import wait_until

    wait_until(lambda: len(rows := inbox.gradings(upload_id)) == 2 and rows[-1].status == "graded", 300)


def test_a_student_reaches_no_instructor_page_and_a_form_needs_its_token(service: Served, lms: Lms,
                                                                        graded: dict[str, Any]):
    bob, teacher = graded["bob"], graded["teacher"]
    student_page = bob.get(service.url + "/student").text
    [row] = service.state.inbox.of_student("nn_module", graded["hostile_id"])
    token = bob.csrf(student_page)
    for path in ("/instructor/students/bob", f"/instructor/students/{quote(graded['hostile_id'])}",
                 f"/instructor/uploads/{row.id}", f"/instructor/uploads/{row.id}/files/0",
                 f"/instructor/gradings/{row.id}/feedback", "/instructor/grades.csv", "/instructor"):
        assert bob.get(service.url + path).status_code == 403, path
        assert Browser().get(service.url + path).status_code == 401, path
    for path in ("/instructor/adjust", "/instructor/extend", "/instructor/answer", "/instructor/release"):
        answer = bob.post(service.url + path, data={
            "csrf_token": token, "student": "bob", "scope": "total", "points": "50", "reason": "mine",
            "text": "x", "mode": NOW})
        assert answer.status_code == 403, path
    page = teacher.get(record_url(service, "bob")).text
    count = len(ledger(service, records.ADJUSTMENT))
    for token_field in ({}, {"csrf_token": "forged"}, {"csrf_token": token}):  # none, forged, a student's
        answer = teacher.post(service.url + "/instructor/adjust", data={
            **token_field, "student": "bob", "scope": "total", "points": "5", "reason": "no token"})
        assert answer.status_code == 400 and "form token" in answer.text
    assert len(ledger(service, records.ADJUSTMENT)) == count
    assert "csrf_token" in page
    other_lms = Lms(lms.platform, service.url, lms.lineitem, assignment="tensors_autograd")
    other, _ = launched(other_lms, Person("uid-teacher-o", "teacher-o", roles=[INSTRUCTOR]))
    for path in (f"/instructor/uploads/{row.id}", f"/instructor/gradings/{row.id}/feedback",
                 "/instructor/students/bob"):  # another assignment's launch: nothing of this one
        assert other.get(service.url + path).status_code == 404, path
    assert teacher.get(service.url + "/instructor/students/nobody").status_code == 404


def test_no_page_shows_a_hostile_string_raw(service: Served, graded: dict[str, Any]):
    teacher, hostile, student = graded["teacher"], graded["hostile"], graded["hostile_id"]
    page = teacher.get(record_url(service, student)).text
    teacher.post(service.url + "/instructor/adjust",
                 data=form(teacher, page, student=student, scope="task:tinynet", points="1", reason=REASON))
    teacher.post(service.url + "/instructor/extend",
                 data=form(teacher, page, student=student, deadline="", exempt="1", reason=REASON))
    [row] = service.state.inbox.of_student("nn_module", student)
    pages = {
        "record": teacher.get(record_url(service, student)),
        "instructor": teacher.get(service.url + "/instructor", params={"q": HOSTILE_ID[:6]}),
        "student": hostile.get(service.url + "/student"),
        "feedback en": teacher.get(f"{service.url}/instructor/gradings/{row.id}/feedback?lang=en"),
        "feedback bn": teacher.get(f"{service.url}/instructor/gradings/{row.id}/feedback?lang=bn"),
        "bad form": teacher.post(service.url + "/instructor/adjust", data=form(
            teacher, page, student=student, scope=REASON, points="1", reason=REASON)),
    }
    for where, answer in pages.items():
        assert answer.status_code == 200, where
        assert_inert(answer.text, where, HOSTILE)
    record = pages["record"].text
    for payload in (HOSTILE_ID, ZIP_NAME, INNER, REASON, TEACHER):
        assert shown_escaped(record, payload), payload
    assert shown_escaped(pages["instructor"].text, HOSTILE_ID)
    assert "Choose what the adjustment is on" in pages["bad form"].text
    assert shown_escaped(pages["student"].text, REASON)  # the student reads the reason, as text
    assert shown_rows(pages["instructor"].text)[0][0] == student


def test_an_extension_is_given_before_the_student_submits(service: Served, graded: dict[str, Any]):
    teacher = graded["teacher"]
    assert teacher.get(record_url(service, "newbie")).status_code == 404  # nothing of theirs yet
    opened = teacher.get(service.url + "/instructor/students", params={"student": "  NewBie "})
    assert opened.status_code == 200 and opened.url.endswith("/instructor/students/newbie?new=1")
    assert "No upload through this tool." in opened.text and "No grade yet." in opened.text
    sent = teacher.post(service.url + "/instructor/extend", data=form(
        teacher, opened.text, student="newbie", deadline_utc="2030-01-02T00:00:00Z", reason="late enrolment"))
    assert "The extension is saved." in sent.text
    assert teacher.get(record_url(service, "newbie")).status_code == 200  # their record now holds one
    refused = teacher.post(service.url + "/instructor/adjust", data=form(
        teacher, opened.text, student="newbie", scope="total", points="2", reason="no grade to adjust"))
    assert "Nothing was recorded:" in refused.text and "has no grade" in refused.text  # the ledger's why
    assert ledger(service, records.ADJUSTMENT, "newbie") == []
    assert graded["bob"].get(service.url + "/instructor/students?student=newbie").status_code == 403


def test_adjusting_a_student_with_no_grade_says_so_on_their_page_with_no_server_path(
        service: Served, graded: dict[str, Any]):
    """Issue #37: found by id before they submit, adjusted: the same page says why nothing was recorded."""
    teacher = graded["teacher"]
    found = teacher.get(service.url + "/instructor/students", params={"student": "Nobody Yet"})
    assert found.status_code == 200 and "/instructor/students/nobody%20yet" in found.url
    sent = teacher.post(service.url + "/instructor/adjust", data=form(
        teacher, found.text, student="nobody yet", scope="total", points="2", reason="kind"))
    assert sent.status_code == 200 and "/instructor/students/nobody%20yet" in sent.url, sent.url
    assert "nobody yet has no grade yet, so there is nothing to adjust" in sent.text
    assert "nothing of yours" not in sent.text and str(service.state.settings.data) not in sent.text
    assert not ledger(service, records.ADJUSTMENT, "nobody yet")
    missing = teacher.get(service.url + "/instructor/gradings/999999/feedback")
    assert missing.status_code == 404 and "There is no such page for this assignment" in missing.text
