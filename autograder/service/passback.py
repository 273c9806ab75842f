"""AGS score passback from the service: a student's current grade to the line item of their launch.

It reuses the batch publish (platforms/lti/publish.py `publish_scores`) and its log in the gradebook
(lti_publishes), so a score the platform already holds is not sent again and a failed one is retried
by the next passback or by the instructor's publish. It runs on a thread and a connection of its own:
a slow platform never holds up grading or a page.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections import defaultdict
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from autograder.grading.results import SubmissionResult
from autograder.ledger.book import Gradebook
from autograder.ledger.publish_log import PublishLog
from autograder.platforms.lti.ags import AgsClient, RetryPolicy
from autograder.platforms.lti.errors import LtiError
from autograder.platforms.lti.keys import load_private_key
from autograder.platforms.lti.publish import PublishReport, publish_scores
from autograder.service.inbox import Received
from autograder.service.settings import LaunchConfig
from autograder.submissions.students import student_key

log = logging.getLogger("autograder.service")


class Passback:
    """Sends current grades to the platform, one thread, its own gradebook connection."""

    def __init__(self, config: LaunchConfig, gradebook: Path, retry: RetryPolicy | None = None):
        self.config = config
        self.key = load_private_key(config.platform.private_key)
        self.retry = retry or RetryPolicy(attempts=3, base_delay=0.5, max_delay=5.0)
        self.book = Gradebook(gradebook)
        self.lock = threading.Lock()
        self.clients: dict[str, AgsClient] = {}
        self.executor = ThreadPoolExecutor(1, thread_name_prefix="ags-passback")

    def close(self) -> None:
        self.executor.shutdown(wait=True)
        for client in self.clients.values():
            client.close()
        self.book.close()

    def _client(self, lineitem: str) -> AgsClient:
        if lineitem not in self.clients:
            config = dataclasses.replace(self.config.platform, lineitem=lineitem, lineitems_url=None,
                                         tag=None)
            self.clients[lineitem] = AgsClient(config, self.key, retry=self.retry)
        return self.clients[lineitem]

    def graded(self, row: Received, result: SubmissionResult) -> Future[PublishReport | None]:
        """After a grading: send that student's current grade (on the passback thread)."""
        return self.executor.submit(self._send, row.assignment, {row.student: (row.user_id, row.lineitem)})

    def publish(self, assignment: str, rows: list[Received]) -> PublishReport | None:
        """The instructor's publish: every student's current grade, to their launch's line item."""
        people = {r.student: (r.user_id, r.lineitem) for r in rows}
        return self.executor.submit(self._send, assignment, people).result()

    def _send(self, assignment: str, people: dict[str, tuple[str, str]]) -> PublishReport | None:
        by_lineitem: dict[str, dict[str, str]] = defaultdict(dict)
        for student, (user_id, lineitem) in people.items():
            if user_id and lineitem:
                by_lineitem[lineitem][student] = user_id
        total: PublishReport | None = None
        with self.lock:
            current = {r.student: r for r in self.book.current(assignment)}
            for lineitem, students in by_lineitem.items():
                results = [current[s] for s in sorted(students) if s in current]
                if not results:
                    continue
                client = self._client(lineitem)
                config = client.config
                user_ids = {student_key(s): uid for s, uid in students.items()}
                try:
                    log_book = PublishLog(self.book)
                    report = publish_scores(client, log_book, config, results, assignment, user_ids)
                except LtiError as exc:
                    log.warning("passback to %s failed: %s", lineitem, exc)
                    continue
                if total is None:
                    total = report
                else:
                    total.sent += report.sent
                    total.refused.update(report.refused)
                    total.pending.update(report.pending)
                    total.up_to_date += report.up_to_date
        return total
