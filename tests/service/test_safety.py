"""Every page escapes what it shows, every response carries the security headers, the data files are 0600.

A hostile student (their LMS name, id, e-mail and course title are markup), a zip whose name, file
names, printed output and exception message are markup, a hostile instructor's regrade field and a
forged launch's audience: every page they reach (student, feedback frame, instructor, class report,
errors) shows each as text, and no tag, event handler or script of theirs is in any of them.
"""

from __future__ import annotations

import io
import os
import re
import stat
import zipfile
from html.parser import HTMLParser

import pytest
import requests
from browser import Browser
from lms import CLIENT_ID, INSTRUCTOR, Lms, Person, launched, resigned
from lti_platform import LocalPlatform
from markupsafe import escape
from served import Served, upload, wait_graded

NAME = "<img src=x onerror=alert('name')>"
SOURCEDID = "<script>alert('id')</script>"
EMAIL = "<svg onload=alert('mail')>@x.example"
COURSE = "<iframe src=javascript:alert('course')></iframe>"
ZIP_NAME = "<img src=x onerror=alert('zip')>.zip"
INNER = "<svg onload=alert('inner')>.py"
OUTPUT = "<script>alert('output')</script>"
RAISED = "<img src=x onerror=alert('raised')>"
REGRADE = "<b onmouseover=alert('flash')>x</b>"
AUDIENCE = "<img src=x onerror=alert('aud')>"
TEACHER = "<svg/onload=alert('teacher')>"
HOSTILE = (NAME, SOURCEDID, EMAIL, COURSE, ZIP_NAME, INNER, OUTPUT, RAISED, REGRADE, AUDIENCE, TEACHER)
ALLOWED_SCRIPT_TYPES = ("application/json",)


def hostile_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("tinynet.py", f"print({OUTPUT!r})\n")
        archive.writestr("delivery.py", f"raise ValueError({RAISED!r})\n")
        archive.writestr(INNER, "x = 1\n")
    return buffer.getvalue()


class Tags(HTMLParser):
    """Every start tag of a page with its attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))


def assert_inert(text: str, where: str) -> None:
    """No hostile string raw, no event handler, no javascript: URL, no script but the tool's own."""
    for payload in HOSTILE:
        assert payload not in text, f"{where}: {payload!r} is in the page raw"
    parser = Tags()
    parser.feed(text)
    for tag, attrs in parser.tags:
        assert not [a for a in attrs if a.startswith("on")], f"{where}: <{tag} {attrs}>"
        assert not any(v.strip().lower().startswith("javascript:") for v in attrs.values()), where
        if tag == "script":  # the tool's files, its data blocks, or one the response's nonce lets run
            ours = attrs.get("src", "").startswith("/static/") or attrs.get("type") in ALLOWED_SCRIPT_TYPES
            assert ours or "nonce" in attrs, f"{where}: a script that is not the tool's: {attrs}"
        if tag in ("iframe", "img", "svg", "object", "embed"):  # the tool's frames, the report's charts
            ours = tag == "iframe" and attrs.get("id") in ("feedback", "report") or \
                tag == "svg" and attrs.get("role") == "img"
            assert ours, f"{where}: <{tag} {attrs}>"


def shown_escaped(text: str, payload: str) -> bool:
    """The payload is in the page as text: escaped by Jinja or by the feedback's Markdown."""
    return str(escape(payload)) in text or payload.replace("&", "&amp;").replace("<", "&lt;").replace(
        ">", "&gt;").replace('"', "&quot;") in text


@pytest.fixture(scope="module")
def visited(service: Served, lms: Lms) -> dict[str, requests.Response]:
    """Every page a hostile student, instructor and forged launch reach, once."""
    pages: dict[str, requests.Response] = {}
    student, page = launched(lms, Person("uid-hostile-1", SOURCEDID, name=NAME, email=EMAIL, course=COURSE))
    sent = upload(student, service.url, [(ZIP_NAME, hostile_zip())], page)
    assert sent.status_code == 202, sent.text
    status = wait_graded(student, service.url, sent.json()["status_url"], timeout=180)
    assert status["status"] == "graded", status
    pages["upload (JSON)"] = sent
    pages["student"] = student.get(service.url + "/student")
    pages["list (JSON)"] = student.get(service.url + "/student/submissions.json")
    pages["feedback"] = student.get(service.url + status["feedback_url"])
    pages["not found"] = student.get(service.url + "/student/submissions/99999/feedback")
    pages["not launched"] = Browser().get(service.url + "/student")
    pages["static"] = student.get(service.url + "/static/student.js")
    teacher, dashboard = launched(lms, Person("uid-teacher-h", "teacher-h", roles=[INSTRUCTOR],
                                              name=TEACHER, course=COURSE))
    pages["instructor"] = teacher.get(service.url + "/instructor")
    pages["regrade flash"] = teacher.post(service.url + "/instructor/regrade",
                                          data={"csrf_token": teacher.csrf(dashboard), "student": REGRADE})
    pages["class report"] = teacher.get(service.url + "/instructor/report")
    pages["queue (JSON)"] = teacher.get(service.url + "/instructor/queue.json")
    forger = Browser()
    form = lms.start(forger, Person("uid-forger", "forger"))
    pages["launch refused"] = lms.post(forger, resigned(form, {"aud": AUDIENCE, "azp": AUDIENCE}))
    cookie_check = Browser().get(f"{service.url}/lti/login", params={
        "iss": lms.platform.issuer, "login_hint": "uid-x", "target_link_uri": f"{service.url}/lti/launch",
        "lti_message_hint": "resource-link-1", "client_id": CLIENT_ID})
    pages["login cookie check"] = cookie_check
    return pages


def test_no_page_shows_a_hostile_string_raw(visited: dict[str, requests.Response]):
    for where, answer in visited.items():
        if answer.headers["Content-Type"].startswith("text/html"):
            assert_inert(answer.text, where)
        else:
            assert answer.headers["Content-Type"].split(";")[0] in ("application/json", "text/javascript")
    student, feedback = visited["student"].text, visited["feedback"].text
    for payload in (NAME, ZIP_NAME, COURSE):
        assert shown_escaped(student, payload), f"the student page lacks {payload!r} as text"
    for payload in (SOURCEDID, INNER, RAISED):
        assert shown_escaped(feedback, payload), f"the feedback lacks {payload!r} as text"
    assert "&lt;script&gt;alert" in feedback  # the output the submission printed, as text
    dashboard = visited["instructor"].text
    assert shown_escaped(dashboard, TEACHER) and shown_escaped(dashboard, SOURCEDID)
    assert shown_escaped(visited["regrade flash"].text, REGRADE)
    assert visited["launch refused"].status_code == 401 and "onerror=alert(" in visited["launch refused"].text
    assert visited["not found"].status_code == 404 and visited["not launched"].status_code == 401


def test_every_response_carries_the_security_headers(visited: dict[str, requests.Response],
                                                     platform: LocalPlatform):
    for where, answer in visited.items():
        headers = answer.headers
        policy = dict(part.strip().split(" ", 1) for part in headers["Content-Security-Policy"].split(";"))
        assert policy["default-src"] == "'none'" and policy["base-uri"] == "'none'", where
        script = policy["script-src"].split()
        assert script[0] == "'self'" and len(script) == 2, where
        assert re.fullmatch(r"'nonce-[\w-]{20,}'", script[1]), where
        framing = policy["frame-ancestors"].split()
        assert framing == ["'self'", "https://platform.test", platform.base_url], where
        assert headers["X-Content-Type-Options"] == "nosniff" and headers["Referrer-Policy"] == "same-origin"
        if where == "static":
            assert "no-store" not in headers.get("Cache-Control", "")
        else:
            assert headers["Cache-Control"] == "no-store", where


def test_the_only_inline_script_is_pylti1p3s_cookie_check_with_this_responses_nonce(
        visited: dict[str, requests.Response]):
    answer = visited["login cookie check"]
    assert answer.status_code == 200 and "lti1p3-new-tab-link" in answer.text
    nonce = re.search(r"'nonce-([\w-]+)'", answer.headers["Content-Security-Policy"])
    assert nonce is not None
    scripts = re.findall(r"<script[^>]*>", answer.text)
    assert scripts and all(f'nonce="{nonce.group(1)}"' in s for s in scripts)
    for where, other in visited.items():  # every other page: no inline script at all
        if where != "login cookie check" and other.headers["Content-Type"].startswith("text/html"):
            inline = [s for s in re.findall(r"<script([^>]*)>", other.text) if "src=" not in s]
            assert all('type="application/json"' in s for s in inline), where


def test_the_data_files_are_the_owners_only(service: Served, visited: dict[str, requests.Response]):
    data = service.state.settings.data
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    names = {p.name for p in data.iterdir()}
    assert {"gradebook.sqlite", "gradebook.sqlite-wal", "gradebook.sqlite-shm", "session.key"} <= names
    for path in data.iterdir():
        mode = stat.S_IMODE(os.lstat(path).st_mode)
        assert mode == 0o600, f"{path.name} is {mode:o}"
