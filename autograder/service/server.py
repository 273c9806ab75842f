"""Serving the app: a threaded WSGI server on the given address, logging paths only (no query, no body)."""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable
from typing import Any

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from autograder.service.app import build_state, create_app
from autograder.service.settings import ServiceSettings
from autograder.service.state import ServiceState

log = logging.getLogger("autograder.service")


class PathOnlyHandler(WSGIRequestHandler):
    """One log line per request with the method, the path without its query string, and the status."""

    def log_request(self, code: Any = "-", size: Any = "-") -> None:
        path = self.path.split("?", 1)[0]
        log.info("%s %s %s", self.command, path, code)


def serve(settings: ServiceSettings, ready: Callable[[str], None] | None = None) -> None:
    """Start the pool and the queue, then answer requests until SIGINT or SIGTERM."""
    state: ServiceState = build_state(settings)
    try:
        app = create_app(state)
        server: BaseWSGIServer = make_server(settings.host, settings.port, app, threaded=True,
                                             request_handler=PathOnlyHandler)
        stop = threading.Event()

        def shutdown(*_: object) -> None:
            if not stop.is_set():
                stop.set()
                threading.Thread(target=server.shutdown, daemon=True).start()

        signal.signal(signal.SIGTERM, shutdown)
        signal.signal(signal.SIGINT, shutdown)
        url = f"http://{settings.host}:{server.server_port}"
        if ready is not None:
            ready(url)
        server.serve_forever(poll_interval=0.2)
        server.server_close()
    finally:
        state.close()
