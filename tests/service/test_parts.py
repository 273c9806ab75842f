"""The service's parts on their own: PLATFORM.toml's [launch] table, the inbox's life of a row,
the exam's window and self-check policy, the upload's packing, the rate limit, the texts."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import tomllib
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import make_result
from werkzeug.datastructures import FileStorage

from autograder.config import ExamConfig, Kit
from autograder.ledger.book import Gradebook
from autograder.ledger.inbox import Inbox
from autograder.platforms.lti.config import load_platform
from autograder.platforms.lti.errors import LtiError
from autograder.service import exam_rules
from autograder.service.app import ServiceError, check_demo
from autograder.service.limits import UploadRate
from autograder.service.lti_launch import language_of
from autograder.service.settings import ServiceSettings, load_launch
from autograder.service.state import SERVICE_MESSAGES, texts
from autograder.service.student_pages import UploadProblem, pack_upload

JWKS = {"keys": [{"kty": "RSA", "kid": "k1", "n": "sXch", "e": "AQAB"}]}
BASE = ('issuer = "https://lms.example"\nclient_id = "c"\ndeployment_id = "d"\n'
        'token_url = "https://lms.example/token"\nkey_id = "k"\nprivate_key = "tool.pem"\n')


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "platform.toml"
    path.write_text(text, encoding="utf-8")
    return path


# -- PLATFORM.toml ---------------------------------------------------------------------------------
def test_a_launch_table_needs_no_line_item_and_the_batch_publish_still_reads_the_file(tmp_path: Path):
    path = write(tmp_path, BASE + '\n[launch]\nauth_login_url = "https://lms.example/auth"\n'
                 f"platform_jwks = {json.dumps(json.dumps(JWKS))}\n")
    launch = load_launch(path)
    assert launch.auth_login_url == "https://lms.example/auth" and launch.platform_jwks == JWKS
    assert launch.platform.lineitem is None and launch.platform.private_key == tmp_path / "tool.pem"
    assert load_platform(path).client_id == "c"  # `publish lti` ignores the [launch] table


@pytest.mark.parametrize(("launch", "says"), [
    ("", "a [launch] table is required"),
    ('[launch]\nauth_login_url = "https://lms.example/auth"\n', "platform_jwks is required"),
    ('[launch]\nauth_login_url = "http://lms.example/auth"\nplatform_jwks = \'{"keys": []}\'\n', "https"),
    ('[launch]\nauth_login_url = "https://lms.example/auth"\nplatform_jwks = \'{"keys": []}\'\n',
     "non-empty `keys`"),
    ('[launch]\nauth_login_url = "https://a.example"\nplatform_jwks = "nope"\n', "not JSON"),
    ('[launch]\nauth_login_url = "https://a.example"\nkeys = 1\n', "unknown key 'keys'"),
])
def test_a_wrong_launch_table_names_the_file_and_the_key(tmp_path: Path, launch: str, says: str):
    path = write(tmp_path, BASE + "\n" + launch)
    with pytest.raises(LtiError, match=re.escape(says)) as caught:
        load_launch(path)
    assert str(path) in str(caught.value)


def test_without_a_launch_table_a_line_item_is_still_required(tmp_path: Path):
    with pytest.raises(LtiError, match="lineitem is required"):
        load_platform(write(tmp_path, BASE))


def test_demo_listens_on_loopback_only(kit: Kit, tmp_path: Path):
    with pytest.raises(ServiceError, match="127.0.0.1 only"):
        check_demo(ServiceSettings(kit, tmp_path, host="0.0.0.0", demo=True))
    with pytest.raises(ServiceError, match="--platform"):
        check_demo(ServiceSettings(kit, tmp_path))
    check_demo(ServiceSettings(kit, tmp_path, demo=True))


# -- the inbox -------------------------------------------------------------------------------------
def test_a_row_is_kept_before_grading_put_back_after_a_crash_and_graded_once(kit: Kit, tmp_path: Path):
    inbox = Inbox(Gradebook(tmp_path / "gradebook.sqlite"))
    row = inbox.add(assignment="nn_module", student="ada", user_id="u1", lineitem="", lang="en",
                    filename="ada.zip", kind="zip", upload=b"PK...")
    assert row.status == "queued" and inbox.upload(row.id) == b"PK..."
    [taken] = inbox.take(5)
    assert taken.status == "grading" and taken.attempts == 1 and inbox.take(5) == []
    assert inbox.requeue_interrupted() == 1  # a server that died while grading it
    [again] = inbox.take(5)
    assert again.attempts == 2
    result = make_result(kit.assignment("nn_module"), "ada", {"tinynet": 5})
    inbox.finish(again.id, result)
    inbox.finish(again.id, result)  # a second finish of the same row changes nothing
    graded = inbox.get(again.id)
    assert graded is not None and graded.status == "graded" and graded.score == result.score
    assert [r.id for r in inbox.to_regrade("nn_module", "latest")] == [again.id]
    assert inbox.owned(again.id, "nn_module", "bob") is None and inbox.owned(again.id, "nn_module", "ada")
    assert len(inbox.book.history("nn_module", "ada")) == 1  # one upload, one ledger row
    inbox.book.close()


# -- the exam's window -----------------------------------------------------------------------------
def exam_assignment(kit: Kit, check: str, opens: timedelta, due: timedelta, cutoff: timedelta):
    now = datetime.now(UTC)
    exam = ExamConfig(check=check, start=now + opens, deadline=now + due, cutoff=now + cutoff)
    return dataclasses.replace(kit.assignment("nn_module"), exam=exam)


def test_the_window_refuses_uploads_before_the_start_and_after_the_cutoff(kit: Kit):
    hour = timedelta(hours=1)
    assert exam_rules.refusal(exam_assignment(kit, "public", hour, 2 * hour, 3 * hour))[0] == "not_open"
    assert exam_rules.refusal(exam_assignment(kit, "public", -3 * hour, -2 * hour, -hour))[0] == "closed"
    assert exam_rules.refusal(exam_assignment(kit, "public", -hour, hour, 2 * hour)) is None
    assert exam_rules.refusal(kit.assignment("nn_module")) is None


# -- uploads ---------------------------------------------------------------------------------------
def storage(name: str, data: bytes) -> FileStorage:
    return FileStorage(io.BytesIO(data), filename=name)


def test_py_files_are_packed_into_a_zip_and_a_zip_or_notebook_is_kept_as_sent():
    t = texts("en")
    sent = [storage("tinynet.py", b"a = 1\n"), storage("sub/delivery.py", b"b = 2\n")]
    name, kind, data = pack_upload(sent, t, 10)
    assert kind == "zip" and "2 files" in name
    assert zipfile.ZipFile(io.BytesIO(data)).namelist() == ["tinynet.py", "delivery.py"]
    assert pack_upload([storage("hw.ZIP", b"PK")], t, 10) == ("hw.ZIP", "zip", b"PK")
    assert pack_upload([storage("hw.ipynb", b"{}")], t, 10)[1] == "ipynb"
    refused = [
        ([], "Choose your files"),
        ([storage("a.zip", b""), storage("b.py", b"")], "not a mix"),
        ([storage("x.txt", b"")], "`x.txt`"),
        ([storage(f"{i}.py", b"") for i in range(3)], "at most 2"),
    ]
    for files, says in refused:
        with pytest.raises(UploadProblem, match=re.escape(says)):
            pack_upload(files, t, 2)


def test_the_rate_limit_is_a_sliding_minute_per_student():
    now = [0.0]
    rate = UploadRate(2, clock=lambda: now[0])
    assert rate.allow("ada") == 0 and rate.allow("ada") == 0
    assert rate.allow("ada") == 60 and rate.allow("bob") == 0
    now[0] = 59.5
    assert rate.allow("ada") == 1
    now[0] = 60.0
    assert rate.allow("ada") == 0


def test_the_pages_speak_both_languages_with_the_same_placeholders():
    en = tomllib.loads((SERVICE_MESSAGES / "en.toml").read_text(encoding="utf-8"))["service"]
    bn = tomllib.loads((SERVICE_MESSAGES / "bn.toml").read_text(encoding="utf-8"))["service"]
    assert set(en) == set(bn)
    for key, text in en.items():
        assert sorted(re.findall(r"\{\w+\}", text)) == sorted(re.findall(r"\{\w+\}", bn[key])), key
        assert bn[key] != text and re.search("[\u0980-\u09ff]", bn[key]), f"{key} is not translated"
    assert texts("bn")["upload_button"] == bn["upload_button"] and language_of("bn-BD") == "bn"
    assert language_of("en-GB") == language_of("") == "en"
