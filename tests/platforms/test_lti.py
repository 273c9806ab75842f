"""`autograder publish lti` against a real LTI 1.3 platform (lti1p3platform) on 127.0.0.1.

The platform harness is tests/platforms/lti_platform.py; what it adds to the library is documented there.
"""

from __future__ import annotations

import csv
import json
import re
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import make_result as make_assignment_result
from conftest import seal
from lti_platform import LocalPlatform

from autograder.cli.lti import lti, publish
from autograder.config import Assignment, TaskConfig
from autograder.grading.results import SubmissionResult
from autograder.ledger.book import Gradebook
from autograder.output.reports import grades_rows
from autograder.platforms.lti.ags import SCORE_MEDIA_TYPE, RetryPolicy
from autograder.platforms.lti.config import PlatformConfig, load_platform, parse_platform
from autograder.platforms.lti.errors import LtiError
from autograder.platforms.lti.keys import generate_key_pair, public_jwk
from autograder.platforms.lti.publish import PublishReport, publish_lti
from autograder.platforms.lti.scores import score_comment
from autograder.platforms.rosters import read_lti_roster, roster_from_members

DATA = Path(__file__).resolve().parents[1] / "data" / "lti"
ROSTER = DATA / "roster.csv"
CLIENT_ID = "autograder-tool"
KEY_ID = "tool-key-1"
FAST = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.05, connect_timeout=2.0, read_timeout=10.0)
FAST_CLI = ["--retries", "3", "--retry-delay", "0.01"]
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$")
USERS = {s: f"a1b2c3d4-000{i}" for i, s in enumerate(("ayesha", "bsmith", "jdoe", "karim"), start=1)}

ASSIGNMENT = Assignment(
    id="nn_module", title="nn.Module", root=Path("."), given=(),
    tasks=(TaskConfig("tensors", "tensors.py", 10), TaskConfig("autograd", "autograd.py", 10),
           TaskConfig("training", "training.py", 20)),
)


def make_result(student: str, lost: dict[str, float] | None = None) -> SubmissionResult:
    return make_assignment_result(ASSIGNMENT, student, lost)


RESULTS = [
    make_result("ayesha"),  # 40
    make_result("bsmith", {"training": 7.5, "autograd": 2.5}),  # 30
    make_result("ghost", {"tensors": 5}),  # on no roster
    make_result("jdoe", {"tensors": 5, "training": 10}),  # 25
    make_result("karim", {"autograd": 1.25}),  # 38.75
]


# -- fixtures ------------------------------------------------------------------------------------------
@pytest.fixture
def platform(tool_key: tuple[Path, dict[str, Any]]) -> Iterator[LocalPlatform]:
    with LocalPlatform(tool_key[1], client_id=CLIENT_ID, max_lifetime=60.0) as running:
        yield running


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """A graded batch: OUT/gradebook.sqlite and OUT/grades.csv, from results built by hand."""
    folder = tmp_path / "graded"
    book = Gradebook(folder / "gradebook.sqlite")
    for result in RESULTS:
        book.record(result)
    with (folder / "grades.csv").open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(grades_rows(book.current(ASSIGNMENT.id), ASSIGNMENT))
    book.close()
    return seal(folder)  # OUT's signed list of files, as `grade` writes it


def write_platform(folder: Path, platform: LocalPlatform, key: Path, **values: Any) -> Path:
    """PLATFORM.toml for the local platform; `values` override or (None) remove keys."""
    data: dict[str, Any] = {
        "issuer": platform.issuer, "client_id": CLIENT_ID, "deployment_id": platform.deployment_id,
        "token_url": platform.token_url, "key_id": KEY_ID, "private_key": str(key),
        "assignment": ASSIGNMENT.id,
    }
    if "lineitems_url" not in values and "lineitem" not in values:
        data["lineitem"] = platform.add_lineitem("nn.Module", ASSIGNMENT.max_score)
    data.update(values)
    lines = [f"{k} = {json.dumps(v)}" for k, v in data.items() if v is not None]
    path = folder / "platform.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def config_for(tmp_path: Path, platform: LocalPlatform, key: Path, **values: Any) -> PlatformConfig:
    return load_platform(write_platform(tmp_path, platform, key, **values))


def run_publish(out: Path, config: PlatformConfig, **kwargs: Any) -> PublishReport:
    kwargs.setdefault("roster", ROSTER)
    return publish_lti(out, config, retry=FAST, **kwargs)


def log_rows(out: Path) -> list[dict[str, Any]]:
    db = sqlite3.connect(out / "gradebook.sqlite")
    db.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in db.execute("SELECT * FROM lti_publishes ORDER BY id")]
    finally:
        db.close()


def latest_status(out: Path) -> dict[str, str]:
    status: dict[str, str] = {}
    for row in log_rows(out):
        status[row["student"]] = row["status"]
    return status


def posted_users(platform: LocalPlatform, since: int = 0) -> list[str]:
    return [p["userId"] for p in platform.score_posts[since:]]


def cli(*args: str) -> Any:
    return CliRunner().invoke(publish, ["lti", *args])


# -- the round trip -----------------------------------------------------------------------------------
def test_round_trip_matches_grades_csv(tmp_path, out, platform, tool_key):
    toml = write_platform(tmp_path, platform, tool_key[0])
    lineitem = load_platform(toml).lineitem
    assert lineitem is not None
    run = cli(str(out), "--platform", str(toml), "--roster", str(ROSTER), *FAST_CLI)
    assert run.exit_code == 0, run.output
    assert "sent 4, refused 0, pending 0, up to date 0, unmatched 1" in run.stdout
    assert "warning: 1 student(s) have no LTI user id" in run.stderr and "ghost" in run.stderr

    with (out / "grades.csv").open(encoding="utf-8") as handle:
        grades = {row["student"]: row for row in csv.DictReader(handle)}
    stored = platform.scores(lineitem)
    assert set(stored) == {USERS[s] for s in grades if s != "ghost"}
    for student, user_id in USERS.items():
        score = stored[user_id]
        assert score["scoreGiven"] == pytest.approx(float(grades[student]["total"]))
        assert score["scoreMaximum"] == pytest.approx(float(grades[student]["max"])) == 40
        assert score["activityProgress"] == "Completed" and score["gradingProgress"] == "FullyGraded"
        assert STAMP.match(score["timestamp"]), score["timestamp"]
        for task in ASSIGNMENT.tasks:  # a short summary per task
            assert f"{task.id} {float(grades[student][task.id]):g}/{task.points:g}" in score["comment"]
    summary = "nn_module: 30/40. tensors 10/10; autograd 7.5/10; training 12.5/20."
    assert stored[USERS["bsmith"]]["comment"] == summary
    assert platform.score_content_types == [SCORE_MEDIA_TYPE] * 4

    # one token, from a client assertion the platform checked: iss = sub = client id, aud = token URL
    assert platform.token_requests == 1
    (assertion,) = platform.conf.assertions
    assert assertion["header"]["alg"] == "RS256" and assertion["header"]["kid"] == KEY_ID
    claims = assertion["claims"]
    assert claims["iss"] == claims["sub"] == CLIENT_ID and claims["aud"] == platform.token_url
    assert claims["exp"] - claims["iat"] == 60 and claims["jti"]

    rows = log_rows(out)
    assert [(r["student"], r["status"], r["http_status"]) for r in rows] == [
        (s, "sent", 201) for s in sorted(USERS)
    ]
    assert all(r["lineitem"] == lineitem and r["sent_at"] for r in rows)
    assert all(len(r["result_fingerprint"]) == 64 for r in rows)
    book = Gradebook(out / "gradebook.sqlite")  # the gradebook's own table is untouched
    assert [r.student for r in book.current(ASSIGNMENT.id)] == sorted(r.student for r in RESULTS)
    book.close()


def test_rerun_after_success_sends_nothing(tmp_path, out, platform, tool_key):
    config = config_for(tmp_path, platform, tool_key[0])
    first = run_publish(out, config)
    assert sorted(first.sent) == sorted(USERS) and first.unmatched == ["ghost"]
    posts, tokens = len(platform.score_posts), platform.token_requests
    again = run_publish(out, config)
    assert again.sent == [] and sorted(again.up_to_date) == sorted(USERS) and again.complete
    assert len(platform.score_posts) == posts and platform.token_requests == tokens  # not even a token
    assert len(log_rows(out)) == 4


def test_changed_score_resends_only_that_student(tmp_path, out, platform, tool_key):
    config = config_for(tmp_path, platform, tool_key[0])
    run_publish(out, config)
    before = len(platform.score_posts)
    book = Gradebook(out / "gradebook.sqlite")
    book.record(make_result("jdoe", {"tensors": 5}))  # a regrade: 35 instead of 25
    book.close()
    report = run_publish(out, config)
    assert report.sent == ["jdoe"] and report.planned[0].reason == "changed"
    assert posted_users(platform, before) == [USERS["jdoe"]]
    assert platform.scores(config.lineitem or "")[USERS["jdoe"]]["scoreGiven"] == 35
    assert [r["status"] for r in log_rows(out) if r["student"] == "jdoe"] == ["sent", "sent"]


# -- refusals ------------------------------------------------------------------------------------------
def test_wrong_key_is_refused_and_recorded(tmp_path, out, platform, tool_key):
    wrong_pem, _ = generate_key_pair(kid=KEY_ID)  # same kid, other key: the signature does not verify
    wrong = tmp_path / "wrong.pem"
    wrong.write_bytes(wrong_pem)
    toml = write_platform(tmp_path, platform, wrong)
    run = cli(str(out), "--platform", str(toml), "--roster", str(ROSTER), *FAST_CLI)
    assert run.exit_code == 4, run.output
    assert "4 scores refused, 0 pending" in run.stderr
    assert "invalid_client" in run.stderr and "client assertion refused" in run.stderr
    rows = log_rows(out)
    assert {r["status"] for r in rows} == {"refused"} and len(rows) == 4
    assert all("HTTP 401" in r["message"] and "Signature verification failed" in r["message"] for r in rows)
    assert platform.score_posts == [] and platform.token_requests == 1  # refused once, not per student

    # the right key: the refused scores are sent on the next run
    toml = write_platform(tmp_path, platform, tool_key[0], lineitem=load_platform(toml).lineitem)
    run = cli(str(out), "--platform", str(toml), "--roster", str(ROSTER), *FAST_CLI)
    assert run.exit_code == 0, run.output
    assert sorted(posted_users(platform)) == sorted(USERS.values())
    assert set(latest_status(out).values()) == {"sent"}


def test_unknown_kid_is_refused(tmp_path, out, platform, tool_key):
    config = config_for(tmp_path, platform, tool_key[0], key_id="not-registered")
    report = run_publish(out, config)
    assert sorted(report.refused) == sorted(USERS)
    assert all("Unable to find public key" in m for m in report.refused.values())


def test_score_refused_by_the_platform_keeps_the_others(tmp_path, out, platform, tool_key):
    config = config_for(tmp_path, platform, tool_key[0])
    platform.fail("/scores", 422, times=1)
    report = run_publish(out, config)
    assert report.refused == {"ayesha": "HTTP 422: scripted failure"}
    assert sorted(report.sent) == ["bsmith", "jdoe", "karim"] and not report.complete
    again = run_publish(out, config)
    assert again.sent == ["ayesha"] and again.planned[0].reason == "refused"


def test_expired_token_is_refreshed_once(tmp_path, out, platform, tool_key):
    config = config_for(tmp_path, platform, tool_key[0])
    platform.on_score = lambda p, n: p.expire_tokens() if n == 2 else None
    report = run_publish(out, config)
    assert sorted(report.sent) == sorted(USERS) and report.complete
    assert platform.token_requests == 2 and report.token_requests == 2
    statuses = [s for m, path, s in platform.requests if path.endswith("/scores")]
    assert statuses == [201, 201, 401, 201, 201]


def test_token_refused_again_after_refresh(tmp_path, out, platform, tool_key):
    config = config_for(tmp_path, platform, tool_key[0])
    platform.fail("/scores", 401, times=2)
    report = run_publish(out, config)
    assert sorted(report.refused) == sorted(USERS) and platform.score_posts == []
    assert platform.token_requests == 2  # one refresh, then it stops asking
    assert all("refused a fresh token" in m for m in report.refused.values())


# -- retries -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("status", "retry_after"), [(500, None), (503, None), (429, "0")])
def test_transient_error_then_success_is_retried(tmp_path, out, platform, tool_key, status, retry_after):
    config = config_for(tmp_path, platform, tool_key[0])
    platform.fail("/scores", status, times=2, retry_after=retry_after)
    slept: list[float] = []
    report = publish_lti(out, config, roster=ROSTER, retry=FAST, sleep=slept.append)
    assert sorted(report.sent) == sorted(USERS) and report.complete
    statuses = [s for m, path, s in platform.requests if path.endswith("/scores")]
    assert statuses == [status, status, 201, 201, 201, 201]
    assert slept == ([0.0, 0.0] if retry_after == "0" else [0.01, 0.02])
    assert posted_users(platform).count(USERS["ayesha"]) == 1


def test_token_endpoint_5xx_is_retried(tmp_path, out, platform, tool_key):
    config = config_for(tmp_path, platform, tool_key[0])
    platform.fail("/token", 502, times=1)
    report = run_publish(out, config)
    assert report.complete and report.token_requests == 1
    assert [s for m, p, s in platform.requests if p == "/token"] == [502, 200]


def test_persistent_5xx_stays_pending_then_is_sent(tmp_path, out, platform, tool_key):
    config = config_for(tmp_path, platform, tool_key[0])
    platform.fail("/scores", 503, times=FAST.attempts)  # every attempt for the first student
    report = run_publish(out, config)
    assert list(report.pending) == ["ayesha"] and "HTTP 503" in report.pending["ayesha"]
    assert sorted(report.sent) == ["bsmith", "jdoe", "karim"]
    before = len(platform.score_posts)
    again = run_publish(out, config)
    assert again.sent == ["ayesha"] and posted_users(platform, before) == [USERS["ayesha"]]
    assert [r["status"] for r in log_rows(out) if r["student"] == "ayesha"] == ["sent"]  # pending row reused


# -- a platform that is down ---------------------------------------------------------------------------
def test_platform_down_keeps_everything_pending(tmp_path, out, platform, tool_key):
    toml = write_platform(tmp_path, platform, tool_key[0])
    platform.stop()  # the port is closed: connection refused
    run = cli(str(out), "--platform", str(toml), "--roster", str(ROSTER), *FAST_CLI)
    assert run.exit_code == 4, run.output
    assert "0 scores refused, 4 pending" in run.stderr
    rows = log_rows(out)
    assert {r["status"] for r in rows} == {"pending"} and len(rows) == 4
    assert all("failed 3 times" in r["message"] for r in rows)

    platform.start()  # back, on the same port
    run = cli(str(out), "--platform", str(toml), "--roster", str(ROSTER), *FAST_CLI)
    assert run.exit_code == 0, run.output
    assert sorted(posted_users(platform)) == sorted(USERS.values())
    assert len(log_rows(out)) == 4 and set(latest_status(out).values()) == {"sent"}


def test_rerun_after_failure_mid_run_sends_exactly_the_missing(tmp_path, out, platform, tool_key):
    config = config_for(tmp_path, platform, tool_key[0])
    platform.on_score = lambda p, n: p.go_down() if n == 2 else None
    report = run_publish(out, config)
    assert report.sent == ["ayesha", "bsmith"]
    assert sorted(report.pending) == ["jdoe", "karim"] and not report.complete
    assert latest_status(out) == {"ayesha": "sent", "bsmith": "sent", "jdoe": "pending", "karim": "pending"}
    assert posted_users(platform) == [USERS["ayesha"], USERS["bsmith"]]

    platform.on_score = None
    platform.start()
    again = run_publish(out, config)
    assert again.sent == ["jdoe", "karim"] and sorted(again.up_to_date) == ["ayesha", "bsmith"]
    assert posted_users(platform, 2) == [USERS["jdoe"], USERS["karim"]]
    assert set(platform.scores(config.lineitem or "")) == set(USERS.values())


def test_pending_rows_from_an_interrupted_run_are_sent(tmp_path, out, platform, tool_key, monkeypatch):
    config = config_for(tmp_path, platform, tool_key[0])
    from autograder.platforms.lti import ags

    def crash(self: Any, lineitem: str, score: Any) -> Any:
        raise KeyboardInterrupt  # the process dies after queueing, before anything is sent

    monkeypatch.setattr(ags.AgsClient, "post_score", crash)
    with pytest.raises(KeyboardInterrupt):
        run_publish(out, config)
    assert set(latest_status(out).values()) == {"pending"}
    monkeypatch.undo()
    report = run_publish(out, config)
    assert sorted(report.sent) == sorted(USERS) and {p.reason for p in report.planned} == {"pending"}
    assert len(log_rows(out)) == 4


# -- dry run, line items by tag, NRPS -----------------------------------------------------------------
def test_dry_run_prints_and_sends_nothing(tmp_path, out, platform, tool_key):
    toml = write_platform(tmp_path, platform, tool_key[0])
    run = cli(str(out), "--platform", str(toml), "--roster", str(ROSTER), "--dry-run")
    assert run.exit_code == 0, run.output
    lines = [ln for ln in run.stdout.splitlines() if ln.startswith("would send ")]
    assert len(lines) == 4 and "dry run: would send 4 scores" in run.stdout
    body = json.loads(lines[0].split(": ", 1)[1])
    assert body["userId"] == USERS["ayesha"] and body["scoreGiven"] == 40 and STAMP.match(body["timestamp"])
    assert platform.requests == []
    db = sqlite3.connect(out / "gradebook.sqlite")  # nothing recorded, not even the table
    assert db.execute("SELECT name FROM sqlite_master WHERE name = 'lti_publishes'").fetchall() == []
    db.close()


def test_lineitem_found_or_created_by_tag(tmp_path, out, platform, tool_key):
    for i in range(3):  # other line items, over two pages (the platform pages by 2, ignoring ?tag=)
        platform.add_lineitem(f"quiz {i}", 10, tag=f"quiz-{i}")
    platform.store.filter_lineitems = False
    by_tag = {"lineitems_url": platform.lineitems_url, "tag": "nn_module", "label": "nn.Module exercises"}
    config = config_for(tmp_path, platform, tool_key[0], **by_tag)
    dry = run_publish(out, config, dry_run=True)
    assert "a real run creates it" in dry.notes[0] and len(platform.store.lineitems) == 3
    report = run_publish(out, config)
    assert report.complete and "created line item" in report.notes[0]
    created = platform.store.lineitems["4"]
    assert created["tag"] == "nn_module" and created["label"] == "nn.Module exercises"
    assert created["scoreMaximum"] == 40
    assert report.lineitem == created["id"]
    assert set(platform.scores(created["id"])) == set(USERS.values())

    book = Gradebook(out / "gradebook.sqlite")
    book.record(make_result("karim"))
    book.close()
    again = run_publish(out, config)  # found this time (on page 2), not created twice
    assert again.sent == ["karim"] and again.lineitem == created["id"] and len(platform.store.lineitems) == 4
    gets = [p for m, p, s in platform.requests if m == "GET" and p == "/lineitems"]
    assert len(gets) == 2 + 2 + 2  # dry run, creating run, finding run: two pages each


def test_lineitem_elsewhere_gets_no_token(tmp_path, out, platform, tool_key):
    platform.store.lineitems["1"] = {"id": "https://elsewhere.invalid/lineitems/1", "tag": "nn_module"}
    config = config_for(
        tmp_path, platform, tool_key[0], lineitems_url=platform.lineitems_url, tag="nn_module"
    )
    with pytest.raises(LtiError, match="is not on http://127.0.0.1:.*refusing to send the token there"):
        run_publish(out, config)
    assert platform.score_posts == []


def test_ungraded_submission_is_sent_as_zero_of_the_maximum(tmp_path, out, platform, tool_key):
    book = Gradebook(out / "gradebook.sqlite")
    book.record(SubmissionResult("zed", ASSIGNMENT.id, (), (), 0.0, "the zip is broken."))
    book.close()
    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER.read_text(encoding="utf-8") + "zed,u-zed,Zed\n", encoding="utf-8")
    config = config_for(tmp_path, platform, tool_key[0])
    report = run_publish(out, config, roster=roster)
    assert report.complete and "zed" in report.sent
    score = platform.scores(config.lineitem or "")["u-zed"]
    assert (score["scoreGiven"], score["scoreMaximum"]) == (0, 40)
    assert score["comment"] == "nn_module: 0/40. Not graded: the zip is broken."


@pytest.mark.parametrize("field", ["lis_person_sourcedid", "email"])
def test_roster_from_nrps(tmp_path, out, platform, tool_key, field):
    for student, user_id in USERS.items():
        if student != "karim":  # karim is not (yet) in the course
            value = f"{student.upper()}@example.edu" if field == "email" else student
            platform.add_member(user_id, **{field: value, "name": student})
    platform.add_member("teacher-1", roles=["http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"],
                        **{field: "teacher"})
    config = config_for(tmp_path, platform, tool_key[0], nrps_url=platform.nrps_url, nrps_match=field)
    if field == "email":  # the kit's student ids are emails here
        book = Gradebook(out / "gradebook.sqlite")
        for result in RESULTS:
            book.record(make_result(f"{result.student}@example.edu"))
        book.db.execute("DELETE FROM gradings WHERE student NOT LIKE '%@%'")
        book.db.commit()
        book.close()
    report = publish_lti(out, config, retry=FAST)
    suffix = "@example.edu" if field == "email" else ""
    assert sorted(report.sent) == [f"{s}{suffix}" for s in ("ayesha", "bsmith", "jdoe")]
    assert report.unmatched == [f"ghost{suffix}", f"karim{suffix}"]
    assert set(platform.scores(config.lineitem or "")) == {USERS[s] for s in ("ayesha", "bsmith", "jdoe")}
    assert any(p == "/memberships" for m, p, s in platform.requests) and platform.token_requests == 1


# -- configuration, rosters, keys -------------------------------------------------------------------------
BASE = {
    "issuer": "https://lms.example.edu", "client_id": "42", "deployment_id": "1", "key_id": "k",
    "token_url": "https://lms.example.edu/token", "private_key": "tool.pem",
    "lineitem": "https://lms.example.edu/lineitems/1",
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"client_id": None}, "client_id is required"),
        ({"token_url": ""}, "token_url is empty"),
        ({"colour": "red"}, "unknown key 'colour'"),
        ({"lineitem": None}, "lineitem is required"),
        ({"lineitem": None, "lineitems_url": "https://lms.example.edu/lineitems"}, "tag is required"),
        ({"tag": "x"}, "not both"),
        ({"token_url": "http://lms.example.edu/token"}, "token_url must use https"),
        ({"lineitem": "ftp://lms.example.edu/1"}, "lineitem must be an https:// URL"),
        ({"nrps_url": "https://lms.example.edu/nrps", "nrps_match": "name"}, "nrps_match must be one of"),
        ({"nrps_match": "email"}, "nrps_match is set but nrps_url is not"),
        ({"key_id": ["a"]}, "key_id must be a string"),
    ],
)
def test_platform_toml_errors_name_the_key(change, message):
    data = {**BASE, **change}
    with pytest.raises(LtiError, match=re.escape(message)):
        parse_platform({k: v for k, v in data.items() if v is not None}, Path("PLATFORM.toml"))


def test_platform_toml_example_and_paths(tmp_path):
    config = load_platform(DATA / "platform.example.toml")
    assert config.private_key == DATA / "tool-private.pem" and config.scopes == (
        "https://purl.imsglobal.org/spec/lti-ags/scope/score",
    )
    data = {**BASE, "token_url": "http://127.0.0.1:9/token", "nrps_url": "https://x.edu/n",
            "lineitems_url": "https://x.edu/l", "tag": "t"}
    del data["lineitem"]
    local = parse_platform(data, tmp_path / "p.toml")
    assert local.private_key == tmp_path / "tool.pem" and len(local.scopes) == 3
    with pytest.raises(LtiError, match="not found"):
        load_platform(tmp_path / "missing.toml")
    (tmp_path / "bad.toml").write_text("issuer = \n", encoding="utf-8")
    with pytest.raises(LtiError, match="bad.toml"):
        load_platform(tmp_path / "bad.toml")


def test_key_and_gradebook_errors(tmp_path, out, platform, tool_key):
    config = config_for(tmp_path, platform, tool_key[0], private_key=str(tmp_path / "none.pem"))
    with pytest.raises(LtiError, match="private_key: key file .* not found: create one with `autograder lti"):
        run_publish(out, config)
    (tmp_path / "junk.pem").write_text("not a key", encoding="utf-8")
    config = config_for(tmp_path, platform, tool_key[0], private_key=str(tmp_path / "junk.pem"))
    with pytest.raises(LtiError, match="not an unencrypted PEM private key"):
        run_publish(out, config)
    config = config_for(tmp_path, platform, tool_key[0])
    with pytest.raises(LtiError, match="no gradebook at"):
        run_publish(tmp_path / "nowhere", config)
    with pytest.raises(LtiError, match="no graded submissions of assignment 'other'"):
        run_publish(out, config, assignment="other")
    with pytest.raises(LtiError, match="no roster: pass --roster"):
        publish_lti(out, config, retry=FAST)
    run = cli(str(out), "--platform", str(tmp_path / "platform.toml"))
    assert run.exit_code == 2 and "no roster" in run.stderr


def test_read_roster(tmp_path):
    assert read_lti_roster(ROSTER) == {s: u for s, u in USERS.items()}
    path = tmp_path / "r.csv"
    path.write_text("\ufeffStudent,LTI_User_Id\nJDoe, u-3 \nempty,\n", encoding="utf-8")
    assert read_lti_roster(path) == {"jdoe": "u-3"}
    path.write_text("student,user\njdoe,u-3\n", encoding="utf-8")
    with pytest.raises(LtiError, match="no 'lti_user_id' column"):
        read_lti_roster(path)
    path.write_text("student,lti_user_id\njdoe,1\nJDOE,2\n", encoding="utf-8")
    with pytest.raises(LtiError, match="line 3: student 'JDOE' is listed twice"):
        read_lti_roster(path)


def test_roster_from_members_rules():
    members = [
        {"user_id": "1", "email": "a@x.edu", "lis_person_sourcedid": "a"},
        {"user_id": "2", "email": "b@x.edu", "status": "Deleted"},
        {"user_id": "3", "email": "same@x.edu"},
        {"user_id": "4", "email": "SAME@x.edu"},
    ]
    assert roster_from_members(members, "email") == {"a@x.edu": "1"}  # deleted and ambiguous left out
    assert roster_from_members(members, "user_id") == {"1": "1", "3": "3", "4": "4"}


def test_comment_names_problems():
    broken = SubmissionResult("x", "nn_module", (), (), 0.0, "the zip is empty.")
    assert score_comment(broken, "nn_module") == "nn_module: 0/0. Not graded: the zip is empty."


def test_keygen_and_jwk(tmp_path):
    key = tmp_path / "keys" / "tool.pem"
    run = CliRunner().invoke(lti, ["keygen", "--out", str(key), "--jwks", str(tmp_path / "jwks.json")])
    assert run.exit_code == 0, run.output
    jwk = json.loads(run.stdout)
    assert jwk["kty"] == "RSA" and jwk["alg"] == "RS256" and jwk["use"] == "sig" and jwk["kid"]
    assert "d" not in jwk and "p" not in jwk  # public only
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and key.read_text().startswith("-----BEGIN PRIVATE KEY")
    assert json.loads((tmp_path / "jwks.json").read_text()) == {"keys": [jwk]}
    assert f"key_id = {jwk['kid']!r}" in run.stderr
    shown = CliRunner().invoke(lti, ["jwk", str(key)])
    assert shown.exit_code == 0 and json.loads(shown.stdout) == jwk  # the kid is the key's thumbprint
    again = CliRunner().invoke(lti, ["keygen", "--out", str(key)])
    assert again.exit_code == 2 and "pass --force" in again.stderr
    forced = CliRunner().invoke(lti, ["keygen", "--out", str(key), "--force", "--kid", "k2"])
    assert forced.exit_code == 0 and json.loads(forced.stdout)["kid"] == "k2"
    assert json.loads(forced.stdout)["n"] != jwk["n"]


def test_public_jwk_round_trips_through_the_platform_library():
    from lti1p3platform.registration import Registration

    pem, jwk = generate_key_pair(kid="k")
    assert Registration.get_jwk(pem.decode())["n"] == jwk["n"]  # the library reads the same key
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(pem, password=None)
    assert public_jwk(key.public_key(), "k") == jwk  # type: ignore[arg-type]
