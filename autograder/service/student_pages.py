"""The student's page: upload, progress, feedback, earlier submissions; only ever their own.

Every route reads who is asking from the launch in the session, and reaches a submission only
through `Inbox.owned` (this assignment, this student): another student's id answers 404.
"""

from __future__ import annotations

import io
import zipfile
from typing import Any

from flask import Flask, Response, abort, jsonify, render_template, request, url_for
from werkzeug.datastructures import FileStorage

from autograder.grading.course import ENGINE_MESSAGES, load_messages
from autograder.grading.results import result_from_dict
from autograder.output.reports import feedback_html
from autograder.service import exam_rules
from autograder.service.inbox import Received
from autograder.service.lti_launch import Launch
from autograder.service.state import ServiceState, current_launch, texts
from autograder.submissions.files import shown

LONG_POLL = 20.0  # seconds a status request waits for the status to change before it answers


class UploadProblem(Exception):
    """An upload refused before it is stored; the message is the student's to read."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def _launched() -> Launch:
    found = current_launch()
    if found is None:
        abort(401, "Open this tool from your LMS (the launch sets who you are).")
    return found


def pack_upload(files: list[FileStorage], t: dict[str, str], max_files: int) -> tuple[str, str, bytes]:
    """(file name, kind, bytes) of an upload: one zip, one notebook, or .py files packed into a zip."""
    chosen = [f for f in files if f.filename]
    if not chosen:
        raise UploadProblem(t["empty"])
    if len(chosen) > max_files:
        raise UploadProblem(t["too_many"].format(count=len(chosen), limit=max_files))
    names = [(f.filename or "").replace("\\", "/").rsplit("/", 1)[-1] for f in chosen]
    kinds = []
    for name in names:
        lower = name.lower()
        if lower.endswith(".zip"):
            kinds.append("zip")
        elif lower.endswith(".ipynb"):
            kinds.append("ipynb")
        elif lower.endswith(".py"):
            kinds.append("py")
        else:
            raise UploadProblem(t["wrong_kind"].format(name=shown(name)))
    if len(chosen) == 1 and kinds[0] in ("zip", "ipynb"):
        return names[0], kinds[0], chosen[0].read()
    if set(kinds) != {"py"}:
        raise UploadProblem(t["mixed"])
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, upload in zip(names, chosen, strict=True):
            archive.writestr(name, upload.read())
    label = names[0] if len(names) == 1 else f"{len(names)} files ({', '.join(sorted(names))[:120]})"
    return label, "zip", buffer.getvalue()


def register(app: Flask, state: ServiceState) -> None:
    settings = state.settings
    inbox = state.inbox

    def described(row: Received, t: dict[str, str]) -> dict[str, Any]:
        data = row.summary()
        data["status_text"] = t.get(row.status, row.status)
        data["status_url"] = url_for("student_submission", row_id=row.id)
        if row.status == "graded":
            result = inbox.result(row.id)
            view = exam_rules.shown(result_from_dict(result), settings.kit.assignment(row.assignment)) \
                if result else None
            if view is None or view.result is None:
                data["score"] = data["max_score"] = None
                data["note"] = t["hidden_until_deadline"].format(deadline=view.deadline if view else "")
            else:
                data["score"], data["max_score"] = view.result.score, view.result.max_score
                data["note"] = t[view.note_key] if view.note_key else ""
                data["feedback_url"] = url_for("student_feedback", row_id=row.id)
        return data

    @app.route("/student")
    def student_page() -> Any:
        who = _launched()
        t = texts(who.lang)
        rows = [described(r, t) for r in inbox.of_student(who.assignment, who.student)]
        target = settings.kit.assignment(who.assignment)
        return render_template("service_student.html.j2", t=t, who=who, rows=rows, title=target.title,
                               limit_mb=f"{settings.limits.max_upload_bytes / (1024 * 1024):g}")

    @app.route("/student/submissions", methods=["POST"])
    def student_upload() -> Any:
        who = _launched()
        t = texts(who.lang)
        target = settings.kit.assignment(who.assignment)
        try:
            closed = exam_rules.refusal(target)
            if closed is not None:
                raise UploadProblem(t[closed[0]].format(**closed[1]), 403)
            filename, kind, data = pack_upload(request.files.getlist("files"), t, settings.limits.max_files)
            wait = state.rate.allow(f"{who.assignment}\0{who.student}")
            if wait:
                count = settings.limits.uploads_per_minute
                raise UploadProblem(t["rate"].format(count=count, seconds=wait), 429)
        except UploadProblem as problem:
            return jsonify(error=str(problem)), problem.status
        row = inbox.add(assignment=target.id, student=who.student, user_id=who.user_id, lineitem=who.lineitem,
                        lang=who.lang, filename=filename, kind=kind, upload=data)
        state.queue.wake()
        return jsonify(described(row, t)), 202

    @app.route("/student/submissions/<int:row_id>")
    def student_submission(row_id: int) -> Any:
        who = _launched()
        row = inbox.owned(row_id, who.assignment, who.student)
        if row is None:
            abort(404)
        seen = request.args.get("seen", "")
        if seen == row.status and seen in ("queued", "grading"):  # wait for news, up to LONG_POLL s
            row = inbox.wait_change(row_id, seen, LONG_POLL) or row
        return jsonify(described(row, texts(who.lang)))

    @app.route("/student/submissions/<int:row_id>/feedback")
    def student_feedback(row_id: int) -> Any:
        who = _launched()
        row = inbox.owned(row_id, who.assignment, who.student)
        result = inbox.result(row_id) if row is not None else None
        if row is None or result is None:
            abort(404)
        target = settings.kit.assignment(row.assignment)
        view = exam_rules.shown(result_from_dict(result), target)
        if view.result is None:
            abort(404)
        messages = load_messages([ENGINE_MESSAGES, target.graders / "messages"], who.lang)
        return Response(feedback_html(view.result, target, messages, who.lang), mimetype="text/html")

    @app.route("/student/submissions.json")
    def student_submissions() -> Any:
        who = _launched()
        t = texts(who.lang)
        return jsonify(submissions=[described(r, t) for r in inbox.of_student(who.assignment, who.student)])
