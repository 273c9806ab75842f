"""The Flask app of `autograder serve`: its state (inbox, queue, passback), sessions, CSRF, LTI routes.

Sessions are Flask's signed cookie (SameSite=None; Secure, as an LMS frame needs) holding the
launch only; the key signing it lives in the data folder (0600), never in a page or a log.
"""

from __future__ import annotations

import logging
import os
import secrets
import sqlite3
from pathlib import Path
from typing import Any

from flask import Flask, Response, jsonify, redirect, render_template, request, session, url_for
from flask_wtf.csrf import CSRFError, CSRFProtect
from jinja2 import ChoiceLoader, FileSystemLoader
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.middleware.proxy_fix import ProxyFix

from autograder.errors import AutograderError
from autograder.platforms.lti.keys import load_private_key, public_jwk
from autograder.service import instructor_pages, lti_launch, student_pages
from autograder.service.inbox import Inbox
from autograder.service.limits import UploadRate
from autograder.service.lti_launch import Launch, LaunchRefused
from autograder.service.passback import Passback
from autograder.service.queue import GradingQueue
from autograder.service.settings import ServiceSettings
from autograder.service.state import ServiceState, current_lang, texts

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
DEMO_STUDENT, DEMO_INSTRUCTOR = "demo-student", "demo-instructor"
log = logging.getLogger("autograder.service")


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


def build_state(settings: ServiceSettings) -> ServiceState:
    """Open the ledger, start the warm pool and the grading queue (which grades what a stopped
    server left queued), and the passback when a platform is configured."""
    from autograder.exam.plan import plan_for
    from autograder.ledger.book import Gradebook

    check_demo(settings)
    settings.data.mkdir(parents=True, exist_ok=True)
    served = {settings.kit.default_assignment, *([settings.launch.assignment] if settings.launch else [])}
    for aid in sorted(a for a in served if a):
        plan_for(settings.kit, aid)  # an exam whose secret is missing stops the start, not a grading
    inbox = Inbox(Gradebook(settings.gradebook))
    passback = Passback(settings.launch, settings.gradebook) if settings.launch is not None else None
    queue = GradingQueue(settings.kit, inbox, jobs=settings.jobs, sandbox=settings.sandbox,
                         lang=settings.lang, signing_key=inbox.book.signing_key(settings.kit.root),
                         on_graded=passback.graded if passback is not None else None)
    nonces = sqlite3.connect(settings.gradebook, timeout=60.0, check_same_thread=False)
    rate = UploadRate(settings.limits.uploads_per_minute)
    state = ServiceState(settings, inbox, queue, passback, rate, nonces)
    try:
        queue.start()
    except BaseException:
        state.close()
        raise
    return state


def create_app(state: ServiceState) -> Flask:
    settings = state.settings
    app = Flask("autograder.service", template_folder=str(TEMPLATES))
    assert app.jinja_loader is not None
    app.jinja_loader = ChoiceLoader([app.jinja_loader, FileSystemLoader(str(TEMPLATES))])
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
    _lti_routes(app, state, csrf)

    student_pages.register(app, state)
    instructor_pages.register(app, state)

    @app.errorhandler(RequestEntityTooLarge)
    def too_large(_: Exception) -> tuple[Response, int]:
        limit = f"{settings.limits.max_upload_bytes / (1024 * 1024):g}"
        return jsonify(error=texts(current_lang())["too_large"].format(limit=limit)), 413

    @app.errorhandler(CSRFError)
    def bad_csrf(exc: CSRFError) -> tuple[Response, int]:
        return jsonify(error=f"refused: {exc.description} Reload the page and try again."), 400

    @app.errorhandler(LaunchRefused)
    def refused(exc: LaunchRefused) -> tuple[str, int]:
        log.info("%s", exc)
        return render_template("service_error.html.j2", message=str(exc), t=texts("en")), 401

    return app


def _start_session(found: Launch) -> None:
    session.clear()  # a new launch never inherits another user's session
    session["launch"] = found.as_session()
    session.permanent = False


def _lti_routes(app: Flask, state: ServiceState, csrf: CSRFProtect) -> None:
    settings = state.settings

    @app.route("/lti/login", methods=["GET", "POST"])
    @csrf.exempt
    def lti_login() -> Any:
        if settings.launch is None:
            raise LaunchRefused("login refused: this server has no LMS platform configured")
        # the login initiation carries no locale (the launch does): its cookie check speaks English
        return lti_launch.login(settings.launch, url_for("lti_launch_view", _external=True), texts("en"))

    @app.route("/lti/launch", methods=["POST"])
    @csrf.exempt
    def lti_launch_view() -> Any:
        if settings.launch is None:
            raise LaunchRefused("launch refused: this server has no LMS platform configured")
        found = lti_launch.launch(settings.launch, state.nonces, set(settings.kit.assignments))
        if not found.assignment:
            found = Launch(found.student, found.user_id, found.name, settings.kit.default_assignment,
                           found.lang, found.instructor, found.lineitem)
        _start_session(found)
        log.info("launch: %s (%s) for %s", found.student, "instructor" if found.instructor else "student",
                 found.assignment)
        return redirect(url_for("instructor_page" if found.instructor else "student_page"), code=303)

    @app.route("/lti/jwks")
    def lti_jwks() -> Any:
        if settings.launch is None:
            return jsonify(keys=[])
        key = load_private_key(settings.launch.platform.private_key)
        return jsonify(keys=[public_jwk(key, settings.launch.platform.key_id)])

    @app.route("/demo")
    def demo_index() -> Any:
        _demo_only()
        return render_template("service_demo.html.j2", t=texts("en"))

    @app.route("/demo/<role>")
    def demo_launch(role: str) -> Any:
        _demo_only()
        lang = "bn" if request.args.get("lang") == "bn" else "en"
        instructor = role == "instructor"
        who = DEMO_INSTRUCTOR if instructor else DEMO_STUDENT
        _start_session(Launch(who, who, who, settings.kit.default_assignment, lang, instructor, demo=True))
        return redirect(url_for("instructor_page" if instructor else "student_page"), code=303)

    def _demo_only() -> None:
        if not settings.demo or request.remote_addr != "127.0.0.1":
            raise LaunchRefused("demo launches are off: start the server with --demo (127.0.0.1 only)")
