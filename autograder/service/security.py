"""What keeps the service's pages and files to their owners: the headers of every response, 0600 data files.

Every response says: run only the tool's own script files (no inline script: a name or a file name
that slipped through escaping still could not run), be framed only by the LMS of the platform
configuration (or by the tool itself in the demo), never sniff a type, send no referrer to another
site, and keep no copy of a page with grades (`no-store`; the static files alone may be cached).
The data folder is its owner's only: the gradebook (with every upload), its -wal and -shm, the
session key.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from flask import Flask, Response, g, request

# the service's own files in its data folder (nothing else there is touched)
DATA_FILES = ("gradebook.sqlite", "gradebook.sqlite-wal", "gradebook.sqlite-shm", "gradebook.sqlite-journal",
              "session.key")


def script_nonce() -> str:
    """This response's nonce: only a script given it by the tool (PyLTI1p3's cookie check) runs inline."""
    if "csp_nonce" not in g:
        g.csp_nonce = secrets.token_urlsafe(18)
    return str(g.csp_nonce)


def allow_form_target(origin: str) -> None:
    """This response's form may post to `origin` too (the LMS's deep-linking return URL)."""
    g.form_targets = (*g.get("form_targets", ()), origin)


def content_policy(frame_ancestors: tuple[str, ...], nonce: str, form_targets: tuple[str, ...] = ()) -> str:
    """The Content-Security-Policy of every response."""
    return "; ".join([
        "default-src 'none'",
        f"script-src 'self' 'nonce-{nonce}'",
        "style-src 'self' 'unsafe-inline'",  # styles only: the feedback pages are self-contained files
        "img-src 'self' data:",
        "font-src 'self' data:",  # the Bengali font embedded in Bangla pages
        "connect-src 'self'",
        "frame-src 'self'",
        "form-action " + " ".join(["'self'", *form_targets]),
        "base-uri 'none'",
        "frame-ancestors " + " ".join(["'self'", *frame_ancestors]),
    ])


def install_headers(app: Flask, frame_ancestors: tuple[str, ...]) -> None:
    """Every response of `app` gets the headers the module's docstring lists."""

    @app.after_request
    def secured(response: Response) -> Response:
        targets = tuple(g.get("form_targets", ()))
        response.headers["Content-Security-Policy"] = content_policy(frame_ancestors, script_nonce(), targets)
        response.headers["X-Content-Type-Options"] = "nosniff"
        # same-origin, not no-referrer: Flask-WTF checks the Referer of every POST over https
        response.headers["Referrer-Policy"] = "same-origin"
        if not request.path.startswith("/static/"):
            response.headers["Cache-Control"] = "no-store"
            response.headers.pop("Expires", None)
        return response


def with_nonce(html: str) -> str:
    """A page made by a library (PyLTI1p3's cookie check) with its inline scripts given this
    response's nonce, so they run under the policy and nothing else inline does; its `javascript:`
    link (which the policy would refuse to follow) becomes a plain one its script handles."""
    nonce = script_nonce()
    return (html.replace("<script>", f'<script nonce="{nonce}">')
            .replace('<script type="text/javascript">', f'<script type="text/javascript" nonce="{nonce}">')
            .replace('href="javascript: void(0);"', 'href="#" role="button"'))


def private_data(folder: Path) -> None:
    """The service's files in its data folder 0600 (a folder it makes: 0700), the gradebook made
    0600 before SQLite opens it: SQLite gives the -wal and -shm it creates the database's mode."""
    if not folder.exists():
        folder.mkdir(parents=True)
        os.chmod(folder, 0o700)
    book = folder / DATA_FILES[0]
    if not book.exists():
        os.close(os.open(book, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    for name in DATA_FILES:
        path = folder / name
        try:
            info = path.lstat()
        except FileNotFoundError:
            continue
        if stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) & 0o077:
            os.chmod(path, 0o600)
