"""The instructor's page of one student (`/instructor/students/<id>`), its files and feedback, and its forms.

Staff only (a student's launch gets 403), for the launch's assignment only: a row of another
assignment answers 404. The forms (an adjustment, an extension, an answer to a regrade request)
each write one signed record of the ledger (records_view.py) with the launch's instructor as its
author, then go back to the page with what was done (or what to fix) said on it.
"""

from __future__ import annotations

import io
from typing import Any

from flask import (
    Flask,
    Response,
    abort,
    flash,
    get_flashed_messages,
    redirect,
    render_template,
    request,
    send_file,
    url_for,
)

from autograder.grading.course import ENGINE_MESSAGES, load_messages
from autograder.ledger.adjustments import signed_points
from autograder.ledger.inbox import Received
from autograder.output.reports import feedback_html
from autograder.service.door import spool_name
from autograder.service.lti_launch import Launch
from autograder.service.record_forms import (
    FormProblem,
    moment_field,
    points_field,
    scope_field,
    text_field,
    zone_name,
)
from autograder.service.records_view import InstructorError, Records, author_of
from autograder.service.state import ServiceState, current_launch, page_text, texts
from autograder.service.student_record import current_result, grading_result, record_of, scopes_of
from autograder.service.texts import iso_text, look
from autograder.service.upload_files import download_name, file_bytes
from autograder.submissions.students import is_student_id, student_id

LANGS = ("en", "bn")
DOWNLOAD_TYPES = {"zip": "application/zip", "ipynb": "application/x-ipynb+json"}


def staff() -> Launch:
    """The launch, if an instructor's (401 without a launch, 403 for a student's)."""
    found = current_launch()
    if found is None:
        abort(401)
    if not found.instructor:
        abort(403)
    return found


def register(app: Flask, state: ServiceState) -> None:
    settings = state.settings
    inbox = state.inbox
    records = Records(inbox, settings.clock)

    def row_of(who: Launch, row_id: int) -> Received:
        row = inbox.get(row_id)
        if row is None or row.assignment != who.assignment:
            abort(404)
        return row

    def back(student: str, anchor: str = "") -> Any:
        # new=1: a student with nothing in the ledger yet (found by their id) gets their page, and the
        # form's message on it, not a 404
        return redirect(url_for("instructor_student", student=student, new="1")
                        + (f"#{anchor}" if anchor else ""), code=303)

    @app.route("/instructor/students/<path:student>")
    def instructor_student(student: str) -> Any:
        who = staff()
        t = texts(who.lang)
        target = settings.kit.assignment(who.assignment)
        empty = request.args.get("new") == "1"
        record = record_of(inbox, records, target, student, settings.clock.now(), empty) \
            if is_student_id(student) else None
        if record is None:
            abort(404)
        page = {"texts": {"moment_zone_browser": t["moment_zone_browser"]}, "locale": who.time_locale}
        return render_template("service_student_record.html", t=t, who=who, title=target.title, r=record,
                               counts_text=t[f"class_counts_{target.counts}"], page=page,
                               flashed=get_flashed_messages(with_categories=True), signed=signed_points,
                               langs=LANGS, iso_of=iso_text, zone=zone_name(target), **look(who.lang))

    @app.route("/instructor/students")
    def instructor_find_student() -> Any:
        """The page of the student whose id is typed (in the identity rule's form): one who has not
        submitted yet too, so an extension can be given before they do."""
        staff()
        wanted = student_id(request.args.get("student", ""))
        if not wanted:
            return redirect(url_for("instructor_page"), code=303)
        return redirect(url_for("instructor_student", student=wanted, new="1"), code=303)

    @app.route("/instructor/uploads/<int:row_id>")
    def instructor_upload(row_id: int) -> Any:
        who = staff()
        row = row_of(who, row_id)
        owner = row.student.replace("/", "_").replace("\\", "_")
        name = download_name(f"{owner}-{row.upload_id}-{spool_name(row.filename, row.kind)}",
                             f"upload-{row.upload_id}.{row.kind}")
        return send_file(io.BytesIO(inbox.upload(row.upload_id)), mimetype=DOWNLOAD_TYPES[row.kind],
                         as_attachment=True, download_name=name)

    @app.route("/instructor/uploads/<int:row_id>/files/<int:index>")
    def instructor_upload_file(row_id: int, index: int) -> Any:
        who = staff()
        row = row_of(who, row_id)
        found = file_bytes(row.kind, inbox.upload(row.upload_id), index)
        if found is None:
            abort(404)
        name, data = found
        return send_file(io.BytesIO(data), mimetype="text/plain; charset=utf-8", as_attachment=True,
                         download_name=download_name(name, f"file-{index}.txt"))

    @app.route("/instructor/gradings/<int:row_id>/feedback")
    def instructor_feedback(row_id: int) -> Any:
        """A grading's feedback page in either language (?lang=bn), with the adjustments in force
        when it is the current grade; nothing cut by the release (the instructor sees all)."""
        who = staff()
        row = row_of(who, row_id)
        result = grading_result(inbox, row)
        if result is None:
            abort(404)
        lang = request.args.get("lang", who.lang)
        lang = lang if lang in LANGS else "en"
        target = settings.kit.assignment(who.assignment)
        messages = load_messages([ENGINE_MESSAGES, target.graders / "messages"], lang)
        return Response(feedback_html(result, target, messages, lang), mimetype="text/html")

    def student_field() -> str:
        student = request.form.get("student", "")
        if not is_student_id(student):
            abort(404)
        return student

    @app.route("/instructor/adjust", methods=["POST"])
    def instructor_adjust() -> Any:
        who = staff()
        t = texts(who.lang)
        student = student_field()
        target = settings.kit.assignment(who.assignment)
        graded = current_result(inbox, target.id, student)
        if graded is None:  # said on the student's page, in the instructor's words
            flash(t["adjust_no_grade"].format(student=student), "error")
            return back(student, "adjust")
        try:
            scope = scope_field(request.form, scopes_of(graded, target))
            points = points_field(request.form, target.max_score)
            reason = text_field(request.form, "reason", "form_need_reason")
        except FormProblem as problem:
            flash(t[problem.key].format(**problem.fields), "error")
            return back(student, "adjust")
        try:
            records.adjust(target, student, scope, points, reason, author_of(who))
        except InstructorError as refused:
            flash(t["form_refused"].format(why=page_text(str(refused), state)), "error")
            return back(student, "adjust")
        flash(t["adjusted_saved"].format(points=signed_points(points)), "ok")
        wake_passback()
        return back(student, "standing")

    @app.route("/instructor/extend", methods=["POST"])
    def instructor_extend() -> Any:
        who = staff()
        t = texts(who.lang)
        student = student_field()
        target = settings.kit.assignment(who.assignment)
        try:
            deadline = moment_field(request.form, "deadline", target)
            exempt = request.form.get("exempt") == "1"
            reason = text_field(request.form, "reason", "form_need_reason")
        except FormProblem as problem:
            flash(t[problem.key].format(**problem.fields), "error")
            return back(student, "extend")
        try:
            records.extend(target, student, deadline, exempt, reason, author_of(who))
        except InstructorError as refused:
            flash(t["form_refused"].format(why=page_text(str(refused), state)), "error")
            return back(student, "extend")
        flash(t["extension_saved" if deadline is not None or exempt else "extension_withdrawn"], "ok")
        wake_passback()
        return back(student, "standing")

    @app.route("/instructor/answer", methods=["POST"])
    def instructor_answer() -> Any:
        who = staff()
        t = texts(who.lang)
        student = student_field()
        target = settings.kit.assignment(who.assignment)
        change = None
        try:
            text = text_field(request.form, "text", "form_need_answer")
            if request.form.get("points", "").strip():
                offered = scopes_of(current_result(inbox, target.id, student), target)
                scope = scope_field(request.form, offered)
                change = (scope, points_field(request.form, target.max_score))
        except FormProblem as problem:
            flash(t[problem.key].format(**problem.fields), "error")
            return back(student, "thread")
        try:
            records.answer(target, student, text, author_of(who), request.form.get("closes") == "1", change)
        except InstructorError as refused:
            flash(t["form_refused"].format(why=page_text(str(refused), state)), "error")
            return back(student, "thread")
        flash(t["answer_saved"], "ok")
        if change is not None:
            wake_passback()
        return back(student, "thread")

    def wake_passback() -> None:
        """A record changed a grade or when it is shown: the passback's release clock looks at once
        (it sends what changed, as the release rule lets it be seen)."""
        if state.passback is not None:
            state.passback.wake()
