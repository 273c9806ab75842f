"""AGS score passback from the service: each student's current grade, as the release rule lets them see it.

What is sent is the grade as it counts (the instructor's adjustments applied) as the student's page
shows it (service/release.py, with the ledger's release record and extensions): the whole grade once
it is released; nothing while the instructor holds the assignment (`autograder release --hold`, or
until its `--at` time); before an exam's deadline with `check = "public"`, the public checks' score
alone, marked Pending (Submitted / Pending: no final grade in the LMS yet); with `check = "none"`,
nothing. A release clock sends the held grades when the release comes: its time, or a release or
an adjustment recorded by another process (it looks at the ledger every POLL_SECONDS), or at once
when woken (`wake`, after the service's own release button); started again, what a stopped server
missed; hourly, whatever is still pending.

It reuses the batch publish (platforms/lti/publish.py `publish_scores`) and its log in the gradebook
(lti_publishes), so a score the platform already holds is not sent again and a failed one is retried
by the next passback or by the instructor's publish. It runs on a thread and a connection of its own:
a slow platform never holds up grading or a page.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import requests

from autograder.config import Kit
from autograder.errors import AutograderError
from autograder.grading.results import SubmissionResult
from autograder.ledger import records
from autograder.ledger.book import Gradebook
from autograder.ledger.inbox import Inbox, Received
from autograder.ledger.publish_log import PublishLog
from autograder.platforms.lti.ags import AgsClient, RetryPolicy
from autograder.platforms.lti.errors import LtiError
from autograder.platforms.lti.keys import load_private_key
from autograder.platforms.lti.publish import PublishReport, publish_scores
from autograder.platforms.lti.scores import ScoreView
from autograder.service.release import Rules, next_change, release_of, visible
from autograder.service.settings import Clock, LaunchConfig
from autograder.service.texts import plain_time, texts
from autograder.submissions.students import student_key

log = logging.getLogger("autograder.service")
SWEEP_SECONDS = 3600.0  # the release clock sends every assignment at least this often
POLL_SECONDS = 10.0  # and looks at the ledger's records (a release, an adjustment) this often


class Passback:
    """Sends current grades to the platform, one thread, its own gradebook connection."""

    def __init__(self, config: LaunchConfig, gradebook: Path, kit: Kit, inbox: Inbox, clock: Clock,
                 retry: RetryPolicy | None = None, session: Callable[[], requests.Session] | None = None):
        self.config = config
        self.session = session  # each line item's HTTP session (None: requests' own; the demo's stand-in LMS)
        self.kit = kit
        self.inbox = inbox
        self.clock = clock
        self.key = load_private_key(config.platform.private_key)
        self.retry = retry or RetryPolicy(attempts=3, base_delay=0.5, max_delay=5.0)
        self.book = Gradebook(gradebook)
        self.lock = threading.Lock()
        self.clients: dict[str, AgsClient] = {}
        self.executor = ThreadPoolExecutor(1, thread_name_prefix="ags-passback")
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._clock_thread: threading.Thread | None = None

    def start(self) -> Passback:
        """Start the release clock (its first look sends whatever a stopped server did not)."""
        self._clock_thread = threading.Thread(target=self._release_clock, name="release-clock", daemon=True)
        self._clock_thread.start()
        return self

    def wake(self) -> None:
        """Look at the releases now (the clock moved, or a release was changed)."""
        self._wake.set()

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._clock_thread is not None:
            self._clock_thread.join(timeout=10)
        self.executor.shutdown(wait=True)
        for client in self.clients.values():
            client.close()
        self.book.close()

    def _client(self, lineitem: str) -> AgsClient:
        if lineitem not in self.clients:
            config = dataclasses.replace(self.config.platform, lineitem=lineitem, lineitems_url=None,
                                         tag=None)
            self.clients[lineitem] = AgsClient(config, self.key, retry=self.retry,
                                               session=self.session() if self.session is not None else None)
        return self.clients[lineitem]

    def graded(self, row: Received, result: SubmissionResult) -> Future[PublishReport | None]:
        """After a grading: send that student's current grade (on the passback thread)."""
        return self.executor.submit(self._send, row.assignment, {row.student})

    def publish(self, assignment: str) -> PublishReport | None:
        """The instructor's publish: every student's current grade, as released now."""
        return self.executor.submit(self._send, assignment, None).result()

    def view(self, result: SubmissionResult, lang: str, rules: Rules | None = None) -> ScoreView | None:
        """What the platform may be sent of `result` now: exactly what its student may see."""
        target = self.kit.assignment(result.assignment)
        if rules is None:
            with self.lock:
                rules = Rules.of(self.book, result.assignment)
        release = release_of(target, result.student, self.clock.now(), rules)
        shown = visible(result, release)
        if shown is None:
            return None
        if release.complete or release.until is None:
            return ScoreView(shown)
        tz = target.exam.tz if target.exam is not None else None
        note = texts(lang)["lms_public_only"].format(deadline=plain_time(release.until, tz))
        return ScoreView(shown, final=False, note=note)

    def _send(self, assignment: str, students: set[str] | None) -> PublishReport | None:
        people = self.inbox.people(assignment)
        by_lineitem: dict[str, dict[str, Received]] = defaultdict(dict)
        for student, row in people.items():
            if (students is None or student in students) and row.user_id and row.lineitem:
                by_lineitem[row.lineitem][student] = row
        total: PublishReport | None = None
        with self.lock:
            current = {r.student: r for r in self.book.standing(assignment)}  # adjusted: as it counts
            rules = Rules.of(self.book, assignment)
            for lineitem, rows in by_lineitem.items():
                results = [current[s] for s in sorted(rows) if s in current]
                if not results:
                    continue
                client = self._client(lineitem)
                user_ids = {student_key(s): r.user_id for s, r in rows.items()}
                langs = {s: r.lang for s, r in rows.items()}

                def released(result: SubmissionResult, langs: dict[str, str] = langs) -> ScoreView | None:
                    return self.view(result, langs.get(result.student, "en"), rules)

                try:
                    report = publish_scores(client, PublishLog(self.book), client.config, results, assignment,
                                            user_ids, view=released)
                except (LtiError, AutograderError) as exc:
                    log.warning("passback to %s failed: %s", lineitem, exc)
                    continue
                if total is None:
                    total = report
                else:
                    total.sent += report.sent
                    total.refused.update(report.refused)
                    total.pending.update(report.pending)
                    total.up_to_date += report.up_to_date
                    total.held += report.held
        return total

    def _release_clock(self) -> None:
        """Send an assignment's grades whenever what its students may see changed (its release came),
        and every assignment's at the start and at least hourly (what is still pending goes again)."""
        seen: dict[str, tuple[object, ...]] = {}  # assignment -> its records in force, each student's level
        full: float = -SWEEP_SECONDS  # when every assignment was last sent (monotonic seconds)
        while not self._stop.is_set():
            now = self.clock.now()
            due = time.monotonic() - full >= SWEEP_SECONDS
            upcoming: list[datetime] = []
            for aid in self.inbox.assignments():
                try:
                    target = self.kit.assignment(aid)
                except AutograderError:
                    continue  # no longer in grading.toml: nothing of it is served
                students = sorted(self.inbox.people(aid))
                with self.lock:
                    rules = Rules.of(self.book, aid)
                    adjusted = self.book.newest_record(records.ADJUSTMENT, aid)
                levels = (rules.hold.record, adjusted,
                          *((s, release_of(target, s, now, rules).level) for s in students))
                if due or seen.get(aid) != levels:
                    self.executor.submit(self._send, aid, None)
                    seen[aid] = levels
                later = next_change(target, students, now, rules)
                if later is not None:
                    upcoming.append(later)
            if due:
                full = time.monotonic()
            wait = min([POLL_SECONDS, *((m - now).total_seconds() for m in upcoming)])
            self._wake.wait(timeout=max(0.5, wait))
            self._wake.clear()
