"""`serve --demo`: local launches without an LMS, a stand-in LMS page, and exams whose window starts now.

A demo launch is a student's (`/demo/student`, another one with `?as=NAME`: demo-NAME) or the
instructor's (`/demo/instructor`), for the default assignment or any other (`?assignment=ID`), only
from 127.0.0.1 on a server that listens there alone. Its scores go to the stand-in LMS
(demo_lms.py) through the real passback; `/demo/lms` shows what it received, and when. Every exam
of the kit is served with its window moved to the server's start (`demo_kit`): open now, its deadline
DEMO_DEADLINE later, late work accepted per minute until the cutoff, so the release rule (public checks
before the deadline, everything after it) can be tried in minutes. Its variants come from a demo secret
of the data folder (never the instructor's real one).
"""

from __future__ import annotations

import dataclasses
import os
import re
import secrets
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from flask import Flask, redirect, render_template, request, url_for

from autograder.config import ExamConfig, Kit
from autograder.service import demo_lms, lti_launch
from autograder.service.lti_launch import DEFAULT_LOCALES, Launch, LaunchRefused
from autograder.service.settings import ServiceSettings
from autograder.service.state import ServiceState, start_session, texts
from autograder.service.texts import look

DEMO_STUDENT, DEMO_INSTRUCTOR = "demo-student", "demo-instructor"
DEMO_NAME = re.compile(r"^[a-z0-9-]{1,40}$")  # /demo/student?as=NAME: another demo student, demo-NAME
LANGUAGE_NAMES = {"en": "English", "bn": "বাংলা (Bangla)"}  # each named in itself (and in Latin letters,
# which an English page without the Bengali font can draw): the demo's language switch
DEMO_DEADLINE = timedelta(minutes=5)  # an exam's deadline, after the server's start
DEMO_LATE = timedelta(minutes=5)  # late uploads accepted this long after it (penalised per minute)


def demo_exam(exam: ExamConfig, start: datetime) -> ExamConfig:
    """`exam` with its window moved to `start`: open from a minute before, its deadline DEMO_DEADLINE
    after, late work (its penalty per started minute) until DEMO_LATE after the deadline."""
    deadline = start + DEMO_DEADLINE
    return dataclasses.replace(exam, start=start - timedelta(minutes=1), deadline=deadline,
                               cutoff=deadline + DEMO_LATE, late_period="minute",
                               late_penalty=exam.late_penalty or 10.0)


def demo_kit(kit: Kit, start: datetime) -> Kit:
    """The kit as the demo serves it: every exam's window relative to `start` (the server's start)."""
    moved = {aid: dataclasses.replace(a, exam=demo_exam(a.exam, start)) if a.exam is not None else a
             for aid, a in kit.assignments.items()}
    return dataclasses.replace(kit, assignments=moved)


def demo_settings(settings: ServiceSettings) -> ServiceSettings:
    """`settings` of a `--demo` server (unchanged without --demo): exams open from now on."""
    if not settings.demo:
        return settings
    return dataclasses.replace(settings, kit=demo_kit(settings.kit, settings.clock.now()))


def exam_secret(data: Path) -> bytes:
    """The demo's exam secret, made once per data folder (0600): variants without the real secret."""
    path = data / "demo-exam.secret"
    if not path.exists():
        data.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_hex(32))
    return path.read_text().strip().encode()


def prepare(settings: ServiceSettings) -> bytes | None:
    """Before any process of a demo server starts: its exam secret and its tool key (None: no demo)."""
    if not settings.demo:
        return None
    demo_lms.tool_key(settings.data)
    return exam_secret(settings.data)


def exams(kit: Kit) -> list[str]:
    return sorted(aid for aid, a in kit.assignments.items() if a.exam is not None)


def register(app: Flask, state: ServiceState) -> None:
    settings = state.settings
    kit = settings.kit
    app.jinja_env.globals["language_names"] = LANGUAGE_NAMES

    def demo_only() -> str:
        if not settings.demo or request.remote_addr != "127.0.0.1":
            raise LaunchRefused("demo launches are off: start the server with --demo (127.0.0.1 only)")
        return "bn" if request.args.get("lang") == "bn" else "en"

    @app.route("/demo")
    def demo_index() -> Any:
        lang = demo_only()
        windows = [(kit.assignments[aid], kit.assignments[aid].exam) for aid in exams(kit)]
        return render_template("service_demo.html", t=texts(lang), default=kit.assignment(),
                               windows=windows, stand_in=settings.launch is None, **look(lang))

    @app.route("/demo/<role>")
    def demo_launch(role: str) -> Any:
        lang = demo_only()
        instructor = role == "instructor"
        who = DEMO_INSTRUCTOR if instructor else DEMO_STUDENT
        other = request.args.get("as", "")
        if other and not instructor and DEMO_NAME.match(other):
            who = f"demo-{other}"
        assignment = request.args.get("assignment", "")
        if assignment not in kit.assignments:
            assignment = kit.default_assignment
        locale = request.args.get("locale", "")
        # the stand-in LMS's line item (where the passback sends this launch's scores), unless a real
        # platform is configured: a demo launch's scores never go to it
        lineitem = demo_lms.lineitem_url(assignment) if settings.launch is None else ""
        launch = Launch(who, who, who, assignment, lang, instructor, lineitem=lineitem, demo=True,
                        locale=locale if lti_launch.language_of(locale) == lang else DEFAULT_LOCALES[lang])
        start_session(launch)
        return redirect(url_for("instructor_page" if instructor else "student_page"), code=303)

    @app.route("/demo/lms")
    def demo_lms_page() -> Any:
        lang = demo_only()
        store = demo_lms.ScoreStore(settings.data)
        try:
            received = store.scores()
        finally:
            store.close()
        return render_template("service_demo_lms.html", t=texts(lang), received=received,
                               stand_in=settings.launch is None, **look(lang))
