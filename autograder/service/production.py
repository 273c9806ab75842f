"""`serve --workers N`: the app under gunicorn (gthread workers), beside the machine's one grading process.

This process checks the start as the single-process server does, makes the session key and the
inbox's tables once, spawns the grading process (a fresh interpreter: no thread, lock or SQLite
connection of this one crosses into it), and becomes gunicorn's master. Each web worker builds
its own state after its fork (`build_state(grading=False)`): it stores uploads in the inbox and
reads what is graded, never grading. The grading process alone takes rows (claimed in the
ledger, grading_claims.py), grades them on the kit's warm pool or on the cluster, and sends the
LMS passback. Stopping the master stops it; it also stops when the master is gone (SIGKILL).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable
from multiprocessing.connection import wait
from multiprocessing.process import BaseProcess
from typing import Any

from gunicorn.app.base import BaseApplication

from autograder.service.app import build_state, check_start, create_app, session_key
from autograder.service.settings import ServiceSettings
from autograder.service.state import ServiceState

log = logging.getLogger("autograder.service")
DEFAULT_THREADS = 32  # per worker: a page's long poll holds a thread for up to LONG_POLL seconds
GRACEFUL_SECONDS = 30  # a stopping worker first answers the requests it holds (long polls: 20 s)
STOP_GRADING_SECONDS = 60.0  # the grading process's own close (its pools, its passback) before it is killed
RESTART_PAUSE = 1.0  # seconds between a grading process's end and the next one's start
ACCESS_FORMAT = "%(m)s %(U)s %(s)s"  # method, path without the query string, status: no query, no body

_worker_state: list[ServiceState] = []  # in a web worker: its state, closed when the worker exits


def bind_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class ServiceApplication(BaseApplication):  # type: ignore[misc]
    """gunicorn's application: its settings from ours (no config file, no command line of its own)."""

    def __init__(self, settings: ServiceSettings, workers: int, threads: int = DEFAULT_THREADS,
                 ready: Callable[[str], None] | None = None):
        self.settings = settings
        self.workers = max(1, workers)
        self.threads = max(1, threads)
        self.ready = ready
        super().__init__()

    def options(self) -> dict[str, Any]:
        settings = self.settings
        return {
            "bind": [bind_address(settings.host, settings.port)],
            "workers": self.workers, "worker_class": "gthread", "threads": self.threads,
            "graceful_timeout": GRACEFUL_SECONDS, "timeout": 60, "keepalive": 5,
            "accesslog": "-", "access_log_format": ACCESS_FORMAT, "errorlog": "-", "loglevel": "info",
            # The scheme and host of a forwarded request are ProxyFix's to read (--behind-proxy), once.
            "forwarded_allow_ips": "", "proc_name": "autograder-serve",
            "when_ready": self._when_ready, "worker_exit": _worker_exit,
        }

    def load_config(self) -> None:
        for key, value in self.options().items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        """In each worker, after its fork: its own connections to the gradebook, no grading."""
        state = build_state(self.settings, grading=False)
        _worker_state.append(state)
        return create_app(state)

    def _when_ready(self, server: Any) -> None:
        if self.ready is not None:
            host, port = server.LISTENERS[0].sock.getsockname()[:2]
            self.ready(f"http://{bind_address(host, port)}")


def _worker_exit(server: Any, worker: Any) -> None:
    while _worker_state:
        _worker_state.pop().close()


def start_grading(settings: ServiceSettings) -> BaseProcess:
    """The machine's grading process, spawned (it starts its pools, which fork their own workers)."""
    process = multiprocessing.get_context("spawn").Process(
        target=grading_main, args=(settings, os.getpid()), name="autograder-grading")
    process.start()
    return process


def stop_grading(process: BaseProcess) -> None:
    """SIGTERM, then SIGKILL if its close takes too long. Its end is read from its sentinel, never from
    waitpid: gunicorn's master reaps every child of its own, this one too."""
    if process.pid is None:
        return
    if not wait([process.sentinel], 0):
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGTERM)
        if not wait([process.sentinel], STOP_GRADING_SECONDS):
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGKILL)
            wait([process.sentinel])
    with contextlib.suppress(OSError):
        process.join(0)


class GradingSupervisor:
    """Keeps the machine's grading process running beside gunicorn's master: started again if it dies
    (what it held is taken back by the next one, as after a restart), stopped with the master."""

    def __init__(self, settings: ServiceSettings):
        self.settings = settings
        self.process = start_grading(settings)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="grading-supervisor", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.is_set():
            wait([self.process.sentinel])
            if self._stop.wait(RESTART_PAUSE):
                return
            log.warning("the grading process %s stopped: starting another", self.process.pid)
            self.process = start_grading(self.settings)

    def stop(self) -> None:
        self._stop.set()
        stop_grading(self.process)
        self._thread.join(timeout=5)


def grading_main(settings: ServiceSettings, parent: int) -> None:
    """The grading process: the queue (and the passback) until SIGTERM, or until the master is gone."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s grading %(message)s")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the master, which stops this one after
    state = build_state(settings)
    log.info("grading process %d grades the inbox of %s%s", os.getpid(), settings.gradebook,
             f" on the cluster at {settings.cluster}" if settings.cluster else "")
    try:
        while not stop.wait(1.0):
            if os.getppid() != parent:
                log.warning("the server's master is gone: the grading process stops")
                break
    finally:
        state.close()


def serve_workers(settings: ServiceSettings, workers: int, threads: int = DEFAULT_THREADS,
                  ready: Callable[[str], None] | None = None) -> None:
    """Check the start, make what the workers share, start the grading process, run gunicorn's master."""
    from autograder.ledger.book import Gradebook
    from autograder.service.inbox import Inbox

    check_start(settings)
    session_key(settings.data)  # made once here: two workers never race to make it
    Inbox(Gradebook(settings.gradebook)).close()  # the tables, before any worker reads them
    grading = GradingSupervisor(settings)
    master = os.getpid()
    try:
        ServiceApplication(settings, workers, threads, ready).run()
    finally:
        if os.getpid() == master:  # a worker leaves through here too (gunicorn's SystemExit after its fork)
            grading.stop()
