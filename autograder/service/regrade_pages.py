"""The student's side of regrades: asking for a regrade of one upload, the thread, the adjustments' reasons.

A student writes from their page about one of their own uploads (reached only through
`Inbox.owned`: another's is 404); the message is a signed record of the ledger, and the thread
(their messages and the instructor's answers) is shown on both sides. The adjustments in force
on their grade are shown with their reasons, in their language, once the release shows the grade,
and their extension (their own deadline, or the exemption from the late policy) at once.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flask import Flask, abort, flash, redirect, request, url_for

from autograder.config import Assignment
from autograder.grading.course import ENGINE_MESSAGES, load_messages
from autograder.ledger.adjustments import signed_points
from autograder.ledger.release import ALL, release_of
from autograder.service.lti_launch import Launch
from autograder.service.record_forms import FormProblem, text_field
from autograder.service.records_view import InstructorError, Records
from autograder.service.state import ServiceState, current_launch, texts
from autograder.service.texts import with_times


def regrade_view(records: Records, target: Assignment, who: Launch, now: datetime) -> dict[str, Any]:
    """What the student's page shows of their thread and of the adjustments of their grade."""
    ui = load_messages([ENGINE_MESSAGES], who.lang).get("ui", {})
    rules = records.rules(target.id)
    shown = []
    extension = rules.extensions.get(who.student)
    if extension is not None:  # their own deadline (a time the page writes) or the exemption
        if extension.deadline is not None:
            text, parts = with_times(ui["note_extension"], deadline=extension.deadline)
            shown.append({"text": text, "parts": parts, "at": None})
        if extension.exempt:
            shown.append({"text": ui["note_exempt"], "parts": [], "at": None})
    if release_of(target, who.student, now, rules).level == ALL:
        for item in records.in_force(target.id, who.student):
            fields = {"points": signed_points(item.points), "reason": item.reason, "task": item.task,
                      "check": item.check_id}
            text = ui[f"note_adjusted_{item.level}"].format(**fields)
            shown.append({"text": text, "parts": [], "at": item.made_at})
    return {"thread": records.thread(target.id, who.student),
            "thread_open": records.is_open(target.id, who.student), "adjustments": shown}


def register(app: Flask, state: ServiceState) -> None:
    settings = state.settings
    inbox = state.inbox
    records = Records(inbox, settings.clock)

    @app.route("/student/regrade", methods=["POST"])
    def student_regrade() -> Any:
        who = current_launch()
        if who is None:
            abort(401)
        t = texts(who.lang)
        upload = request.form.get("upload", "")
        row = inbox.owned(int(upload), who.assignment, who.student) if upload.isdigit() else None
        if row is None or row.regrade_of is not None:
            abort(404)
        try:
            text = text_field(request.form, "text", "form_need_request")
        except FormProblem as problem:
            flash(t[problem.key].format(**problem.fields), "error")
            return redirect(url_for("student_page") + "#regrade", code=303)
        wait = state.rate.allow(f"regrade\0{who.assignment}\0{who.student}")
        if wait:
            flash(t["busy"], "error")
            return redirect(url_for("student_page") + "#regrade", code=303)
        try:
            records.ask(who.assignment, who.student, text, row.id)
        except InstructorError:  # nothing of theirs is graded yet: nothing to look at again
            flash(t["request_needs_grade"], "error")
            return redirect(url_for("student_page") + "#regrade", code=303)
        flash(t["request_saved"], "ok")
        return redirect(url_for("student_page") + "#regrade", code=303)
