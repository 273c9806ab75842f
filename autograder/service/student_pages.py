"""The student's page: upload, progress, feedback, earlier submissions; only ever their own.

Every route reads who is asking from the launch in the session, and reaches a submission only
through `Inbox.owned` (this assignment, this student, an upload): another student's id answers 404.
What a page shows of a grade is the release rule's (release.py), as the LMS passback sends it.
"""

from __future__ import annotations

from typing import Any

from flask import Flask, Response, abort, get_flashed_messages, jsonify, render_template, request, url_for

from autograder.grading.course import ENGINE_MESSAGES, load_messages
from autograder.output.reports import feedback_html
from autograder.service import door, exam_rules, regrade_pages
from autograder.service.door import UploadProblem
from autograder.service.history import Listing
from autograder.service.lti_launch import Launch
from autograder.service.records_view import Records
from autograder.service.state import ServiceState, current_launch, texts
from autograder.service.texts import look, with_times

LONG_POLL = 20.0  # seconds a status or list request waits for news before it answers
SCRIPT_TEXTS = ("queued", "grading", "graded", "failed", "regrading", "counted", "feedback", "sending",
                "send_failed", "connection_lost", "session_over", "duplicate", "server_error", "time_zone")

__all__ = ["LONG_POLL", "UploadProblem", "pack_upload", "register"]
pack_upload = door.pack_upload


def _launched() -> Launch:
    found = current_launch()
    if found is None:
        abort(401)
    return found


def register(app: Flask, state: ServiceState) -> None:
    settings = state.settings
    inbox = state.inbox
    records = Records(inbox, settings.clock)
    regrade_pages.register(app, state)

    def listing(who: Launch) -> Listing:
        target = settings.kit.assignment(who.assignment)
        return Listing(inbox, target, who.student, texts(who.lang), settings.clock.now())

    def page_data(who: Launch) -> dict[str, Any]:
        """What the page's script needs: its texts, the launch's locale, where to ask for news."""
        t = texts(who.lang)
        return {"texts": {k: t[k] for k in SCRIPT_TEXTS}, "locale": who.time_locale, "lang": who.lang,
                "version": inbox.version(who.assignment, who.student),
                "list_url": url_for("student_submissions"), "long_poll": LONG_POLL}

    @app.route("/student")
    def student_page() -> Any:
        who = _launched()
        t = texts(who.lang)
        found = listing(who)
        target = found.target
        regrades = regrade_pages.regrade_view(records, target, who, settings.clock.now())
        return render_template("service_student.html", t=t, who=who, rows=found.all(), title=target.title,
                               counts_text=t[f"counts_{target.counts}"], page=page_data(who),
                               limit_mb=f"{settings.limits.max_upload_bytes / (1024 * 1024):g}",
                               flashed=get_flashed_messages(with_categories=True), **regrades,
                               **look(who.lang))

    @app.route("/student/submissions", methods=["POST"])
    def student_upload() -> Any:
        who = _launched()
        t = texts(who.lang)
        target = settings.kit.assignment(who.assignment)
        now = settings.clock.now()
        try:
            closed = exam_rules.refusal_for(target, who.student, state.inbox, now)  # extensions too
            if closed is not None:
                text, parts = with_times(t[closed[0]], **closed[1])
                raise UploadProblem(text, 403, parts)
            filename, kind, data = pack_upload(request.files.getlist("files"), t, settings.limits.max_files)
            wait = state.rate.allow(f"{who.assignment}\0{who.student}")
            if wait:
                count = settings.limits.uploads_per_minute
                raise UploadProblem(t["rate"].format(count=count, seconds=wait), 429)
            why = door.refusal(filename, kind, data, target, t)
            if why is not None:  # nothing is stored: the grade the student has stays theirs
                raise UploadProblem(why, 422)
        except UploadProblem as problem:
            return jsonify(error=str(problem), error_parts=problem.parts), problem.status
        row, duplicate = inbox.accept(assignment=target.id, student=who.student, user_id=who.user_id,
                                      lineitem=who.lineitem, lang=who.lang, filename=filename, kind=kind,
                                      upload=data, now=now)
        if not duplicate:
            state.queue.wake()
        body = listing(who).upload(row)
        body["duplicate"] = duplicate
        return jsonify(body), 200 if duplicate else 202

    @app.route("/student/submissions/<int:row_id>")
    def student_submission(row_id: int) -> Any:
        who = _launched()
        row = inbox.owned(row_id, who.assignment, who.student)
        if row is None or row.regrade_of is not None:
            abort(404)
        seen = request.args.get("seen", "")
        if seen == row.status and seen in ("queued", "grading"):  # wait for news, up to LONG_POLL s
            row = inbox.wait_change(row_id, seen, LONG_POLL) or row
        return jsonify(listing(who).upload(row))

    @app.route("/student/submissions/<int:row_id>/feedback")
    def student_feedback(row_id: int) -> Any:
        who = _launched()
        row = inbox.owned(row_id, who.assignment, who.student)
        if row is None or row.regrade_of is not None:
            abort(404)
        found = listing(who)
        graded = [r for r in inbox.gradings(row.id) if r.status == "graded"]
        shown = found.shown(graded[-1]) if graded else None
        if shown is None:
            abort(404)
        messages = load_messages([ENGINE_MESSAGES, found.target.graders / "messages"], who.lang)
        return Response(feedback_html(shown, found.target, messages, who.lang), mimetype="text/html")

    @app.route("/student/submissions.json")
    def student_submissions() -> Any:
        """The student's list; with ?since=VERSION it waits (up to LONG_POLL s) for a change to it."""
        who = _launched()
        since = request.args.get("since", "")
        if since.isdigit():
            version = inbox.wait_version(who.assignment, who.student, int(since), LONG_POLL)
        else:
            version = inbox.version(who.assignment, who.student)
        return jsonify(version=version, submissions=listing(who).all())
