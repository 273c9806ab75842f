"""The instructor's page (a launch with an instructor role): live class report, queue, regrade, publish."""

from __future__ import annotations

from typing import Any

from flask import (
    Flask,
    Response,
    abort,
    flash,
    get_flashed_messages,
    jsonify,
    redirect,
    render_template,
    request,
    url_for,
)

from autograder.grading.course import ENGINE_MESSAGES, load_messages
from autograder.output import class_report
from autograder.service.lti_launch import Launch
from autograder.service.state import ServiceState, current_launch, texts


def _instructor() -> Launch:
    found = current_launch()
    if found is None:
        abort(401, "Open this tool from your LMS (the launch sets who you are).")
    if not found.instructor:
        abort(403, "This page is for the course's instructors.")
    return found


def register(app: Flask, state: ServiceState) -> None:
    settings = state.settings
    inbox = state.inbox

    def queue_rows(assignment: str) -> list[dict[str, Any]]:
        return [{"id": r.id, "student": r.student, "status": r.status, "received_at": r.received_at,
                 "attempts": r.attempts} for r in inbox.waiting(assignment)]

    @app.route("/instructor")
    def instructor_page() -> Any:
        who = _instructor()
        t = texts(who.lang)
        latest = inbox.latest_graded(who.assignment)
        target = settings.kit.assignment(who.assignment)
        return render_template("service_instructor.html.j2", t=t, who=who, title=target.title, latest=latest,
                               queue=queue_rows(who.assignment), flashed=get_flashed_messages(),
                               counts=inbox.counts())

    @app.route("/instructor/queue.json")
    def instructor_queue() -> Any:
        who = _instructor()
        return jsonify(queue=queue_rows(who.assignment), counts=inbox.counts())

    @app.route("/instructor/report")
    def instructor_report() -> Any:
        who = _instructor()
        target = settings.kit.assignment(who.assignment)
        messages = load_messages([ENGINE_MESSAGES, target.graders / "messages"], who.lang)
        with inbox.lock:
            results = inbox.book.current(target.id)
        summary = class_report.summarize(results, target, messages, 0.0)
        return Response(class_report.render_html(summary), mimetype="text/html")

    @app.route("/instructor/regrade", methods=["POST"])
    def instructor_regrade() -> Any:
        who = _instructor()
        t = texts(who.lang)
        wanted = request.form.get("student", "")
        rows = [r for r in inbox.latest_graded(who.assignment) if not wanted or r.student == wanted]
        for row in rows:
            inbox.copy_for_regrade(row)
        state.queue.wake()
        flash(t["regraded"].format(count=len(rows)))
        return redirect(url_for("instructor_page"), code=303)

    @app.route("/instructor/publish", methods=["POST"])
    def instructor_publish() -> Any:
        who = _instructor()
        t = texts(who.lang)
        if state.passback is None:
            flash(t["no_platform"])
            return redirect(url_for("instructor_page"), code=303)
        report = state.passback.publish(who.assignment, inbox.latest_graded(who.assignment))
        if report is None:
            flash(t["published"].format(sent=0, refused=0, pending=0, up=0))
        else:
            flash(t["published"].format(sent=len(report.sent), refused=len(report.refused),
                                        pending=len(report.pending), up=len(report.up_to_date)))
        return redirect(url_for("instructor_page"), code=303)
