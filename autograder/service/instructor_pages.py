"""The instructor's page (a launch with an instructor role): live class report, queue, class table, regrade,
publish, release; each student's own page is student_record_pages.py."""

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
from autograder.ledger.release import AT, HELD, NOW
from autograder.output import class_report
from autograder.service import student_record_pages
from autograder.service.class_table import View, class_csv, class_rows
from autograder.service.lti_launch import Launch
from autograder.service.record_forms import FormProblem, moment_field, zone_name
from autograder.service.records_view import InstructorError, Records, author_of, release_state
from autograder.service.state import ServiceState, current_launch, page_text, texts
from autograder.service.texts import iso, iso_text, look

SCRIPT_TEXTS = ("queued", "grading", "queue_empty", "history_regraded", "moment_zone_browser")


def _instructor() -> Launch:
    found = current_launch()
    if found is None:
        abort(401)
    if not found.instructor:
        abort(403)
    return found


def register(app: Flask, state: ServiceState) -> None:
    settings = state.settings
    inbox = state.inbox

    def queue_rows(assignment: str) -> list[dict[str, Any]]:
        return [{"id": r.id, "student": r.student, "status": r.status, "received_at": r.received_at,
                 "regrade": r.regrade_of is not None, "attempts": r.attempts}
                for r in inbox.waiting(assignment)]

    records = Records(inbox, settings.clock)
    student_record_pages.register(app, state)

    @app.route("/instructor")
    def instructor_page() -> Any:
        who = _instructor()
        t = texts(who.lang)
        target = settings.kit.assignment(who.assignment)
        view = View.of(request.args)
        page = {"texts": {k: t[k] for k in SCRIPT_TEXTS}, "locale": who.time_locale,
                "queue_url": url_for("instructor_queue"), "csv_url": url_for("instructor_grades_csv")}
        rules = records.rules(target.id)
        key, at = release_state(rules)
        return render_template("service_instructor.html", t=t, who=who, title=target.title,
                               grades=class_rows(inbox, records, target.id, t, view), view=view,
                               queue=queue_rows(who.assignment), requests=records.open_requests(target.id),
                               release={"key": key, "at": iso(at) if at else None, "mode": rules.hold.mode},
                               flashed=get_flashed_messages(with_categories=True), counts=inbox.counts(),
                               counts_text=t[f"class_counts_{target.counts}"], page=page, iso_of=iso_text,
                               zone=zone_name(target), **look(who.lang))

    @app.route("/instructor/grades.csv")
    def instructor_grades_csv() -> Any:
        """The class table as the page shows it (the same search and sort) as a CSV file."""
        who = _instructor()
        t = texts(who.lang)
        rows = class_rows(inbox, records, who.assignment, t, View.of(request.args))
        answer = Response("\ufeff" + class_csv(rows, t), mimetype="text/csv")
        answer.headers["Content-Disposition"] = f'attachment; filename="{who.assignment}-grades.csv"'
        return answer

    @app.route("/instructor/release", methods=["POST"])
    def instructor_release() -> Any:
        """The assignment's release: hold its scores and feedback, release them now, or at a moment.
        The passback sends what the release lets be seen (the release clock looks at once)."""
        who = _instructor()
        t = texts(who.lang)
        target = settings.kit.assignment(who.assignment)
        mode = request.form.get("mode", "")
        try:
            at = moment_field(request.form, "release_at", target) if mode == AT else None
            if mode not in (HELD, AT, NOW) or (mode == AT and at is None):
                raise FormProblem("form_bad_release")
        except FormProblem as problem:
            flash(t[problem.key].format(**problem.fields), "error")
            return redirect(url_for("instructor_page") + "#release", code=303)
        try:
            records.release(target.id, mode, at, author_of(who))
        except InstructorError as refused:
            flash(t["form_refused"].format(why=page_text(str(refused), state)), "error")
            return redirect(url_for("instructor_page") + "#release", code=303)
        if state.passback is not None:
            state.passback.wake()
        flash(t["release_saved"], "ok")
        return redirect(url_for("instructor_page") + "#release", code=303)

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
        """Grade again the uploads that count (every graded upload when the best one counts), each
        with its own receipt time; an unknown student, or nobody to regrade, is an error."""
        who = _instructor()
        t = texts(who.lang)
        target = settings.kit.assignment(who.assignment)
        wanted = request.form.get("student", "").strip()
        uploads = inbox.to_regrade(target.id, target.counts, wanted or None)
        if not uploads:
            text = t["no_one_to_regrade"].format(student=wanted) if wanted else t["nothing_to_regrade"]
            flash(text, "error")
            return redirect(url_for("instructor_page"), code=303)
        now = settings.clock.now()
        queued = [r for r in (inbox.copy_for_regrade(u, now) for u in uploads) if r is not None]
        state.queue.wake()
        message = t["regraded"].format(count=len(queued))
        if len(queued) < len(uploads):
            message += " " + t["regrade_waiting"].format(count=len(uploads) - len(queued))
        flash(message, "ok")
        return redirect(url_for("instructor_page"), code=303)

    @app.route("/instructor/publish", methods=["POST"])
    def instructor_publish() -> Any:
        who = _instructor()
        t = texts(who.lang)
        if state.passback is None:
            flash(t["no_platform"], "error")
            return redirect(url_for("instructor_page"), code=303)
        report = state.passback.publish(who.assignment)
        if report is None:
            flash(t["published"].format(sent=0, refused=0, pending=0, up=0, held=0), "ok")
        else:
            flash(t["published"].format(sent=len(report.sent), refused=len(report.refused),
                                        pending=len(report.pending), up=len(report.up_to_date),
                                        held=len(report.held)), "ok")
        return redirect(url_for("instructor_page"), code=303)
