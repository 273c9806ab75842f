"""`serve --workers N`: the app under gunicorn (gthread workers), beside the machine's one grading process.

`serve` checks the start as the single-process server does, makes the session key and the
inbox's tables once, then spawns two processes side by side (fresh interpreters: no thread, lock
or SQLite connection of its own crosses into them): gunicorn's master, which forks the web
workers, and the grading process. Each web worker builds its own state after its fork
(`build_state(grading=False)`): it stores uploads in the inbox and reads what is graded, never
grading. The grading process alone takes rows (claimed in the ledger, grading_claims.py), grades
them on the kit's warm pool or on the cluster, and sends the LMS passback. `serve` stops both
(SIGTERM, Ctrl-C); both stop on their own when `serve` is gone (SIGKILL).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any

from gunicorn.app.base import BaseApplication

from autograder.service.app import ServiceError, build_state, check_start, create_app, session_key
from autograder.service.settings import ServiceSettings
from autograder.service.state import ServiceState

log = logging.getLogger("autograder.service")
DEFAULT_THREADS = 32  # per worker: a page's long poll holds a thread for up to LONG_POLL seconds
GRACEFUL_SECONDS = 30  # a stopping worker first answers the requests it holds (long polls: 20 s)
STOP_SECONDS = 60.0  # a process's own close (the grading one's pools, its passback) before it is killed
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
            "control_socket_disable": True,  # no socket in $HOME: SIGTERM and SIGHUP are how it is run
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


def grading_main(settings: ServiceSettings, parent: int) -> None:
    """The grading process: the queue (and the passback) until SIGTERM, or until `serve` is gone."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s grading %(message)s")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches `serve`, which stops this one last
    state = build_state(settings)
    log.info("grading process %d grades the inbox of %s%s", os.getpid(), settings.gradebook,
             f" on the cluster at {settings.cluster}" if settings.cluster else "")
    try:
        while not stop.wait(1.0):
            if os.getppid() != parent:
                log.warning("`serve` is gone: the grading process stops")
                break
    finally:
        state.close()


def web_main(settings: ServiceSettings, workers: int, threads: int, ready: Connection, parent: int) -> None:
    """gunicorn's master (it forks the web workers); it stops itself if `serve` is gone."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    def orphaned() -> None:  # a thread of the master only: a fork copies just the forking thread
        while os.getppid() == parent:
            time.sleep(1.0)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=orphaned, name="orphaned", daemon=True).start()
    ServiceApplication(settings, workers, threads, ready.send).run()


def _spawn(target: Callable[..., None], name: str, *args: Any) -> BaseProcess:
    process = multiprocessing.get_context("spawn").Process(target=target, args=args, name=name)
    process.start()
    return process


def start_grading(settings: ServiceSettings) -> BaseProcess:
    """The machine's grading process, spawned (it starts its pools, which fork their own workers)."""
    return _spawn(grading_main, "autograder-grading", settings, os.getpid())


def stop_process(process: BaseProcess, grace: float = STOP_SECONDS) -> None:
    """SIGTERM, then SIGKILL if it is not gone after `grace` seconds."""
    if process.pid is None:
        return
    if not wait([process.sentinel], 0):
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGTERM)
        if not wait([process.sentinel], grace):
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGKILL)
            wait([process.sentinel])
    process.join()



def serve_workers(settings: ServiceSettings, workers: int, threads: int = DEFAULT_THREADS,
                  ready: Callable[[str], None] | None = None) -> None:
    """Check the start, make what the workers share, then run gunicorn's master and the grading process
    side by side until SIGTERM or Ctrl-C (or until the master stops: it could not listen...); a grading
    process that died is started again (what it held is taken back by the next, as after a restart)."""
    from autograder.ledger.book import Gradebook
    from autograder.ledger.inbox import Inbox

    check_start(settings)
    session_key(settings.data)  # made once here: two workers never race to make it
    Inbox(Gradebook(settings.gradebook)).close()  # the tables, before any worker reads them
    stopping: list[int] = []

    def stop(signum: int, _: object) -> None:
        stopping.append(signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    grading = start_grading(settings)
    told, tell = multiprocessing.get_context("spawn").Pipe(duplex=False)
    web = _spawn(web_main, "autograder-web", settings, workers, threads, tell, os.getpid())
    tell.close()
    try:
        while not stopping:
            woke = wait([web.sentinel, grading.sentinel, told], timeout=1.0)
            if told in woke:
                try:
                    url = told.recv()
                except EOFError:
                    told = _closed(told)
                else:
                    if ready is not None:
                        ready(url)
            if web.sentinel in woke:
                break
            if grading.sentinel in woke and not stopping:
                grading.join()
                log.warning("the grading process %s stopped (exit %s): starting another", grading.pid,
                            grading.exitcode)
                time.sleep(RESTART_PAUSE)
                grading = start_grading(settings)
    finally:
        stop_process(web, GRACEFUL_SECONDS + STOP_SECONDS)
        stop_process(grading)
    if not stopping and web.exitcode:
        raise ServiceError(f"the web server stopped (exit {web.exitcode}): its log above says why")


def _closed(connection: Connection) -> Connection:
    """A pipe end nothing will come from again (waited on, it is never ready)."""
    connection.close()
    reader, _ = multiprocessing.get_context("spawn").Pipe(duplex=False)
    return reader
