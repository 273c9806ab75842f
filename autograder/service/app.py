"""The Flask app of `autograder serve`: its state (inbox, queue, passback), sessions, CSRF, LTI routes.

Sessions are Flask's signed cookie (SameSite=None; Secure, as an LMS frame needs) holding the
launch only; the key signing it lives in the data folder (0600), never in a page or a log. Every
template is autoescaped whatever its name, and every response carries the headers of security.py.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import secrets
import sqlite3
from pathlib import Path
from typing import Any

from flask import Flask, jsonify, redirect, render_template, request, url_for
from flask_wtf.csrf import CSRFError, CSRFProtect
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge
from werkzeug.middleware.proxy_fix import ProxyFix

from autograder.errors import AutograderError
from autograder.ledger.inbox import Inbox
from autograder.output.pages import inert
from autograder.platforms.lti.keys import load_private_key, public_jwk
from autograder.service import (
    deep_linking,
    demo,
    demo_lms,
    instructor_pages,
    lti_launch,
    security,
    student_pages,
)
from autograder.service.limits import SharedUploadRate, UploadRate
from autograder.service.lti_launch import LaunchRefused
from autograder.service.passback import Passback
from autograder.service.queue import GradingQueue
from autograder.service.settings import ServiceSettings
from autograder.service.state import ElsewhereQueue, ServiceState, current_lang, start_session, texts
from autograder.service.texts import look, utc_text

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
STATIC = Path(__file__).resolve().parent / "static"
API_PATHS = ("/student/submissions", "/instructor/queue.json")  # what the pages' scripts read: JSON errors
HTTP_TEXTS = {401: "need_launch", 403: "staff_only", 404: "not_found", 405: "not_found", 429: "busy"}
log = logging.getLogger("autograder.service")


class ServiceFlask(Flask):
    """Flask, with every template autoescaped: its default escapes only .html/.htm/.xml/.xhtml names."""

    def select_jinja_autoescape(self, filename: str | None) -> bool:
        return True


class ServiceError(AutograderError):
    """The service cannot start as asked; the message says what to change."""


def session_key(data: Path) -> bytes:
    """The key that signs session cookies: made once per data folder, readable by its owner only."""
    path = data / "session.key"
    if not path.exists():
        data.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(32))
    return path.read_bytes()


def check_demo(settings: ServiceSettings) -> None:
    if settings.demo and settings.host != "127.0.0.1":
        raise ServiceError(f"--demo launches anyone without an LMS: it listens on 127.0.0.1 only, not on "
                           f"{settings.host!r} (drop --host, or drop --demo and give --platform "
                           "PLATFORM.toml)")
    if not settings.demo and settings.launch is None:
        raise ServiceError("nothing could launch the tool: give --platform PLATFORM.toml (with a [launch] "
                           "table), or try it locally with --demo")


def check_start(settings: ServiceSettings) -> None:
    """What stops the start (not a grading, not a request): a demo off 127.0.0.1, no platform, an exam's
    missing secret; the data folder made private before SQLite makes the gradebook (and its -wal, -shm).
    A demo's exams use the demo's secret (made here, with the demo tool's key, before any process)."""
    from autograder.exam.plan import plan_for

    check_demo(settings)
    security.private_data(settings.data)
    secret = demo.prepare(settings)
    served = {settings.kit.default_assignment, *([settings.launch.assignment] if settings.launch else []),
              *(demo.exams(settings.kit) if settings.demo else [])}
    for aid in sorted(a for a in served if a):
        plan_for(settings.kit, aid, secret)


def build_state(settings: ServiceSettings, *, grading: bool = True) -> ServiceState:
    """Open the ledger, start the warm pool and the grading queue (which grades what a stopped
    server left queued), and the passback when a platform is configured. `grading=False`: a web
    worker's state (`serve --workers`), whose uploads the machine's grading process grades and
    whose passback only publishes when the instructor asks (that process sends the rest)."""
    from autograder.ledger.book import Gradebook

    check_start(settings)
    inbox = Inbox(Gradebook(settings.gradebook))
    passback = None
    if settings.launch is not None:
        passback = Passback(settings.launch, settings.gradebook, settings.kit, inbox, settings.clock)
    elif settings.demo:  # the demo's passback is the real one, sent to the stand-in LMS (demo_lms.py)
        passback = Passback(demo_lms.passback_config(settings.data), settings.gradebook, settings.kit, inbox,
                            settings.clock, session=lambda: demo_lms.session_for(settings.data))
    queue: GradingQueue | ElsewhereQueue = ElsewhereQueue()
    if grading:
        secret = demo.exam_secret(settings.data) if settings.demo else None  # a demo: never the real one
        queue = GradingQueue(settings.kit, inbox, jobs=settings.jobs, sandbox=settings.sandbox,
                             lang=settings.lang, secret=secret,
                             signing_key=inbox.book.signing_key(settings.kit.root),
                             on_graded=passback.graded if passback is not None else None,
                             cluster=settings.cluster, cluster_wait=settings.cluster_wait)
    nonces = sqlite3.connect(settings.gradebook, timeout=60.0, check_same_thread=False)
    per_minute = settings.limits.uploads_per_minute
    rate = UploadRate(per_minute) if grading else SharedUploadRate(settings.gradebook, per_minute)
    state = ServiceState(settings, inbox, queue, passback, rate, nonces)
    try:
        if isinstance(queue, GradingQueue):
            queue.start()
        if passback is not None and grading:
            passback.start()
    except BaseException:
        state.close()
        raise
    return state


def create_app(state: ServiceState) -> Flask:
    settings = state.settings
    app = ServiceFlask("autograder.service", template_folder=str(TEMPLATES), static_folder=str(STATIC),
                       static_url_path="/static")
    app.jinja_options = {**app.jinja_options, "finalize": inert}  # bidi controls shown as codes on every page
    app.config.update(
        SECRET_KEY=session_key(settings.data),
        SESSION_COOKIE_NAME="autograder_session",
        SESSION_COOKIE_SAMESITE="None",  # the LMS shows the tool in a frame of another site
        SESSION_COOKIE_SECURE=True,
        SESSION_COOKIE_HTTPONLY=True,
        MAX_CONTENT_LENGTH=settings.limits.max_upload_bytes,
        MAX_FORM_PARTS=settings.limits.max_files + 10,
        WTF_CSRF_TIME_LIMIT=None,  # the token lives as long as the session: a page left open still works
    )
    app.extensions["autograder"] = state
    if settings.proxied:  # the URLs the tool gives the LMS (its launch URL) must be the public https ones
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=1, x_proto=1, x_host=1)  # type: ignore[method-assign]
    csrf = CSRFProtect(app)
    security.install_headers(app, () if settings.launch is None else settings.launch.framing_origins)
    _lti_routes(app, state, csrf)

    student_pages.register(app, state)
    instructor_pages.register(app, state)
    deep_linking.register(app, state)
    demo.register(app, state)
    app.jinja_env.filters["utc_text"] = utc_text  # a <time>'s text until the page's script writes it

    def problem(key: str, status: int, message: str = "", **fields: str) -> tuple[Any, int]:
        lang = current_lang()
        t = texts(lang)
        if key == "not_found" and request.path.startswith("/instructor"):
            key = "not_found_staff"  # an instructor's page: not a student's wording
        text = message or t[key].format(**fields)
        if request.path.startswith(API_PATHS) and not request.path.endswith("/feedback"):
            return jsonify(error=text), status
        return render_template("service_error.html", t=t, message=text, **look(lang)), status

    @app.errorhandler(RequestEntityTooLarge)
    def too_large(_: Exception) -> tuple[Any, int]:
        return problem("too_large", 413, limit=f"{settings.limits.max_upload_bytes / (1024 * 1024):g}")

    @app.errorhandler(CSRFError)
    def bad_csrf(exc: CSRFError) -> tuple[Any, int]:
        log.info("CSRF refused on %s: %s", request.path, exc.description)
        return problem("bad_csrf", 400)

    @app.errorhandler(LaunchRefused)
    def refused(exc: LaunchRefused) -> tuple[Any, int]:
        log.info("%s", exc)  # the reason is the platform's or the token's: shown as text, escaped
        return render_template("service_error.html", t=texts("en"), message=str(exc), **look("en")), 401

    @app.errorhandler(HTTPException)
    def http_problem(exc: HTTPException) -> Any:
        code = exc.code or 500
        if code not in HTTP_TEXTS:
            return exc
        return problem(HTTP_TEXTS[code], code)

    @app.errorhandler(Exception)
    def crashed(exc: Exception) -> Any:
        if isinstance(exc, HTTPException):
            return exc
        log.exception("error on %s", request.path)  # the page never shows an exception's text
        return problem("server_error", 500)

    return app


def _lti_routes(app: Flask, state: ServiceState, csrf: CSRFProtect) -> None:
    settings = state.settings

    @app.route("/lti/login", methods=["GET", "POST"])
    def lti_login() -> Any:
        if settings.launch is None:
            raise LaunchRefused("login refused: this server has no LMS platform configured")
        # the login initiation carries no locale (the launch does): its cookie check speaks English
        target = deep_linking.redirect_uri(request.values.get("target_link_uri", ""),
                                           url_for("lti_launch_view", _external=True),
                                           url_for("lti_deep_link", _external=True))
        answer = lti_launch.login(settings.launch, target, texts("en"))
        if answer.status_code == 200 and answer.mimetype == "text/html":  # PyLTI1p3's cookie check page
            answer.set_data(security.with_nonce(answer.get_data(as_text=True)))
        return answer

    @app.route("/lti/launch", methods=["POST"])
    def lti_launch_view() -> Any:
        if settings.launch is None:
            raise LaunchRefused("launch refused: this server has no LMS platform configured")
        message, data = lti_launch.checked(settings.launch, state.nonces)
        if message.is_deep_link_launch():  # the LMS's "add content": whichever of the two URLs it posts to
            return deep_linking.request_page(state, data)
        found = lti_launch.resource_launch(message, data, settings.launch, set(settings.kit.assignments))
        if not found.assignment:
            found = dataclasses.replace(found, assignment=settings.kit.default_assignment,
                                        assignment_from="kit")
        start_session(found)
        log.info("launch: %s (%s) for %s", found.student, "instructor" if found.instructor else "student",
                 found.assignment)
        return redirect(url_for("instructor_page" if found.instructor else "student_page"), code=303)

    # The deep-linking URL the LMS is given: the same checks and the same view (deep_linking.py).
    app.add_url_rule("/lti/deep-link", "lti_deep_link", lti_launch_view, methods=["POST"])

    # The LMS posts these (no form of ours, no CSRF token); exempted by a call, not as a decorator,
    # since Flask-WTF is untyped and would leave the views untyped.
    csrf.exempt(lti_login)
    csrf.exempt(lti_launch_view)

    @app.route("/health")
    def health() -> Any:
        """For a reverse proxy's (or an admin's) check: this worker answers, and reads the ledger."""
        state.inbox.version("", "")
        return jsonify(ok=True, pid=os.getpid())

    @app.route("/lti/jwks")
    def lti_jwks() -> Any:
        if settings.launch is None:
            return jsonify(keys=[])
        key = load_private_key(settings.launch.platform.private_key)
        return jsonify(keys=[public_jwk(key, settings.launch.platform.key_id)])
