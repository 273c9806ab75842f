"""`publish_lti`: the current score of every graded student, posted once to the LMS line item."""

# The tool side of ../shared/notes/lms.md §4, for a batch (no launch needed):
#
# 1. An access token by the OAuth 2 client-credentials grant, authenticated by an RS256 client
#    assertion (ags.py), for the scopes this run needs (score; lineitem when a line item is found
#    or created by tag; NRPS contextmembership.readonly when the roster comes from the platform).
# 2. The line item: `lineitem` from PLATFORM.toml, or the one with `tag` under `lineitems_url`
#    (created with the assignment's maximum when the platform has none).
# 3. Student ids -> LTI user ids: a roster CSV `student,lti_user_id`, else the platform's Names and
#    Role Provisioning Service (`nrps_url`), matched by student_key (rosters.py).
# 4. One `POST {lineitem}/scores` per student.
#
# Every publish is recorded in the gradebook (output/publish_log.py). A rerun sends a student again
# only when the latest row for (assignment, line item, student) is not `sent` with the same
# fingerprint (scores.py), so a crash or a network failure is mended by running the same command.

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from pathlib import Path

import requests

from autograder.config import Assignment, Kit
from autograder.grading.course import ENGINE_MESSAGES, load_messages
from autograder.grading.results import SubmissionResult
from autograder.ledger.book import Gradebook, find_gradebook
from autograder.ledger.publish_log import PublishLog, iso_timestamp
from autograder.ledger.release import Release, Rules, release_of, visible
from autograder.platforms.lti.ags import AgsClient, RetryPolicy, platform_message
from autograder.platforms.lti.config import PlatformConfig
from autograder.platforms.lti.errors import AuthRejected, LtiError, PlatformUnavailable, TokenRefused
from autograder.platforms.lti.keys import load_private_key
from autograder.platforms.lti.scores import PlannedScore, ScoreView, score_comment, score_fingerprint
from autograder.platforms.rosters import LTI_ROSTER_COLUMNS, read_lti_roster, roster_from_members
from autograder.submissions.students import student_key


@dataclass
class PublishReport:
    """What a publish did (or, with dry_run, would do)."""

    assignment: str
    lineitem: str
    dry_run: bool = False
    planned: list[PlannedScore] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)  # student -> the platform's message
    pending: dict[str, str] = field(default_factory=dict)  # student -> why it is still pending
    up_to_date: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)
    held: list[str] = field(default_factory=list)  # students whose grade a release rule still holds back
    notes: list[str] = field(default_factory=list)
    token_requests: int = 0

    @property
    def complete(self) -> bool:
        return not self.refused and not self.pending

    def summary(self) -> str:
        if self.dry_run:
            return (f"dry run: would send {len(self.planned)} scores to {self.lineitem} "
                    f"({len(self.up_to_date)} up to date, {len(self.unmatched)} unmatched)")
        held = f", held {len(self.held)} (not released yet)" if self.held else ""
        return (
            f"sent {len(self.sent)}, refused {len(self.refused)}, pending {len(self.pending)}, "
            f"up to date {len(self.up_to_date)}, unmatched {len(self.unmatched)}{held} -> {self.lineitem}"
        )


def public_only_note(release: Release, lang: str = "en", tz: tzinfo | None = None) -> str:
    """What the LMS comment says of a score a release rule shows in part (the service's catalogue)."""
    if release.until is None:
        return ""
    moment = release.until.astimezone(tz or UTC)
    stamp = moment.strftime("%Y-%m-%d %H:%M:%S ") + (moment.tzname() or moment.strftime("%z"))
    texts = load_messages([ENGINE_MESSAGES / "service"], lang).get("service", {})
    return str(texts["lms_public_only"]).format(deadline=stamp)


def release_view(target: Assignment, rules: Rules, now: datetime,
                 lang: str = "en") -> Callable[[SubmissionResult], ScoreView | None]:
    """What the release rule (ledger/release.py) lets the LMS be sent of each result at `now`:
    exactly what its student may see (None: nothing yet; partial: Pending, with its note)."""

    def view(result: SubmissionResult) -> ScoreView | None:
        release = release_of(target, result.student, now, rules)
        shown = visible(result, release)
        if shown is None:
            return None
        if release.complete or release.until is None:
            return ScoreView(shown)
        tz = target.exam.tz if target.exam is not None else None
        return ScoreView(shown, final=False, note=public_only_note(release, lang, tz))

    return view


def open_gradebook(out: Path) -> Gradebook:
    """The gradebook of a graded batch in `out` (the folder or the file), which must exist."""
    path = find_gradebook(out)
    if not path.is_file():
        raise LtiError(f"no gradebook at {path}: run `autograder grade SUBMISSIONS --out OUT` first")
    return Gradebook(path)


def _assignment_id(book: Gradebook, wanted: str | None) -> str:
    if wanted:
        return wanted
    known = book.assignments()
    if len(known) == 1:
        return known[0]
    raise LtiError(
        "which assignment? set assignment in PLATFORM.toml or pass --assignment "
        f"(the gradebook has: {', '.join(known) or 'none'})"
    )


def publish_lti(
    out: Path,
    config: PlatformConfig,
    *,
    roster: Path | None = None,
    assignment: str | None = None,
    dry_run: bool = False,
    retry: RetryPolicy | None = None,
    session: requests.Session | None = None,
    sleep: Callable[[float], None] = time.sleep,
    kit: Kit | None = None,
    now: datetime | None = None,
) -> PublishReport:
    """Post the current score of every student of the graded batch in `out` to the platform: the
    grade as it counts (the instructor's adjustments applied), as the release rule lets its student
    see it at `now` (`kit`: the assignment's config, for an exam's deadline; without it, the
    ledger's release records alone). A held score is in the report's `held`, sent at a later publish.

    Raises LtiError for configuration problems found before anything is sent (and for a token
    refused while looking up the roster or the line item); scores the platform refused or that
    could not be sent are in the report (and in lti_publishes), not raised.
    """
    key = load_private_key(config.private_key)
    book = open_gradebook(out)
    client = AgsClient(config, key, retry=retry, session=session, sleep=sleep)
    try:
        aid = _assignment_id(book, assignment or config.assignment)
        results = book.standing(aid)
        if not results:
            raise LtiError(f"{book.path} holds no graded submissions of assignment {aid!r}")
        rule = (kit.assignments.get(aid) if kit is not None else None) or Assignment(aid, aid, out, (), ())
        view = release_view(rule, Rules.of(book, aid), now or datetime.now(UTC))
        log = PublishLog(book, create=not dry_run)  # a dry run writes nothing, not even the table
        report = publish_scores(client, log, config, results, aid, _user_ids(client, config, roster), dry_run,
                                view=view)
        report.token_requests = client.token_requests
        return report
    except (TokenRefused, AuthRejected, PlatformUnavailable) as exc:
        raise LtiError(f"before any score was sent: {exc}") from None
    finally:
        client.close()
        book.close()


def _user_ids(client: AgsClient, config: PlatformConfig, roster: Path | None) -> dict[str, str]:
    if roster is not None:
        return read_lti_roster(roster)
    if config.nrps_url:
        return roster_from_members(client.members(), config.nrps_match)
    raise LtiError(
        f"no roster: pass --roster ROSTER.csv (columns {','.join(LTI_ROSTER_COLUMNS)}) or set nrps_url in "
        f"{config.source}"
    )


def publish_scores(client: AgsClient, log: PublishLog, config: PlatformConfig,
                   results: list[SubmissionResult], aid: str, user_ids: Mapping[str, str],
                   dry_run: bool = False,
                   view: Callable[[SubmissionResult], ScoreView | None] | None = None) -> PublishReport:
    """Post these results (student key -> LTI user id in `user_ids`), each logged; the service
    calls this with the user ids its launches gave, and `view`: its release rule (what the student
    may see now is what is sent; None holds the student's score back)."""
    label = config.label or aid
    lineitem = config.lineitem
    notes: list[str] = []
    if lineitem is None and not config.tag:
        raise LtiError(f"{config.source}: no line item: set lineitem, or lineitems_url and tag (launches "
                       "name their own, but this publish has none)")
    if lineitem is None:
        assert config.tag
        lineitem = client.find_lineitem(config.tag)
        if lineitem is None and dry_run:
            notes.append(f"no line item tagged {config.tag!r} yet: a real run creates it")
        elif lineitem is None:
            max_score = max(r.max_score for r in results)
            lineitem = client.create_lineitem(config.tag, label, max_score, aid)
            notes.append(f"created line item {lineitem} (tag {config.tag!r}, maximum {max_score:g})")
    target = lineitem or f"<new line item tagged {config.tag!r}>"
    report = PublishReport(aid, target, dry_run=dry_run, notes=notes)
    latest = log.latest(aid, lineitem) if lineitem else {}
    class_max = max(r.max_score for r in results)
    for result in results:
        user_id = user_ids.get(student_key(result.student))
        if not user_id:
            report.unmatched.append(result.student)
            continue
        shown = view(result) if view is not None else ScoreView(result)
        if shown is None:
            report.held.append(result.student)
            continue
        max_score = shown.result.max_score or class_max  # nothing graded (no tasks): the assignment's maximum
        comment = score_comment(shown.result, label, max_score, shown.note)
        fingerprint = score_fingerprint(user_id, shown.result.score, max_score, comment, shown.final)
        previous = latest.get(result.student)
        if previous and previous.status == "sent" and previous.fingerprint == fingerprint:
            report.up_to_date.append(result.student)
            continue
        reason = "new" if previous is None else previous.status if previous.status != "sent" else "changed"
        report.planned.append(PlannedScore(result.student, user_id, shown.result.score, max_score,
                                           comment, fingerprint, reason, shown.final))
    if dry_run or not report.planned:
        return report
    assert lineitem is not None
    ids = log.queue(aid, lineitem, report.planned, latest)
    stop: tuple[str, str, int | None] | None = None  # (status, message, http status) for the rest
    for item in report.planned:
        row = ids[item.student]
        if stop:
            status, message, code = stop
            log.finish(row, status, message, code)
            (report.refused if status == "refused" else report.pending)[item.student] = message
            continue
        stamp = iso_timestamp()
        try:
            response = client.post_score(lineitem, item.body(stamp))
        except TokenRefused as exc:
            stop = ("refused", str(exc), exc.status)
        except AuthRejected as exc:
            stop = ("refused", str(exc), exc.status)
        except PlatformUnavailable as exc:
            if exc.status is None:  # unreachable: do not knock on a closed door for every student
                stop = ("pending", f"not sent: {exc}", None)
            else:
                log.finish(row, "pending", str(exc), exc.status, stamp)
                report.pending[item.student] = str(exc)
                continue
        else:
            if 200 <= response.status_code < 300:
                log.finish(row, "sent", platform_message(response), response.status_code, stamp)
                report.sent.append(item.student)
            else:
                message = platform_message(response)
                log.finish(row, "refused", message, response.status_code, stamp)
                report.refused[item.student] = message
            continue
        status, message, code = stop
        log.finish(row, status, message, code, stamp)
        (report.refused if status == "refused" else report.pending)[item.student] = message
    return report
