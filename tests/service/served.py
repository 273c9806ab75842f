"""The service in the test process: state, app and a threaded server on 127.0.0.1 (port chosen by the OS)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from browser import Browser
from werkzeug.serving import make_server

from autograder.service.app import build_state, create_app
from autograder.service.server import PathOnlyHandler
from autograder.service.settings import ServiceSettings
from autograder.service.state import ServiceState

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "class"


@dataclass
class Served:
    url: str
    state: ServiceState


@contextmanager
def serving(settings: ServiceSettings) -> Iterator[Served]:
    state = build_state(settings)
    server = make_server("127.0.0.1", 0, create_app(state), threaded=True, request_handler=PathOnlyHandler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield Served(f"http://127.0.0.1:{server.server_port}", state)
    finally:
        server.shutdown()
        server.server_close()
        state.close()


def upload(browser: Browser, url: str, files: list[tuple[str, bytes]], page: str | None = None) -> Any:
    """POST files from the student page (with its CSRF token), as the page's script does."""
    page = page if page is not None else browser.get(f"{url}/student").text
    return browser.post(f"{url}/student/submissions", files=[("files", f) for f in files],
                        headers={"X-CSRFToken": browser.csrf(page)})


def wait_graded(browser: Browser, url: str, status_url: str, timeout: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        data: dict[str, Any] = browser.get(url + status_url).json()
        if data["status"] in ("graded", "failed"):
            return data
        time.sleep(0.1)
    raise AssertionError(f"{status_url} not graded in {timeout} s")


def example(name: str) -> tuple[str, bytes]:
    return name, (EXAMPLES / name).read_bytes()
