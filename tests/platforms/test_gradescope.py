"""autograder.zip: its layout (lms.md §1.2), and run_autograder end to end in a stand-in /autograder."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from kit_assignments import ASSIGNMENTS

import autograder
from autograder.cli.export import gradescope
from autograder.config import load_kit
from autograder.errors import ConfigError
from autograder.platforms.gradescope import build_gradescope_zip, run

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "solutions" / "nn_module"

TOP_KEYS = {"score", "execution_time", "output", "output_format", "test_output_format", "test_name_format",
            "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard"}
VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}


@pytest.fixture(scope="module")
def zip_path(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gs") / "autograder.zip"
    run = CliRunner().invoke(gradescope, ["build", "--out", str(out), "--kit", str(ROOT),
                                          "--hidden-visibility", "after_due_date"])
    assert run.exit_code == 0, run.output
    assert "until after the due date" in run.output and "total score" in run.output
    return out


def test_build_says_hidden_checks_after_published_hide_the_total(tmp_path):
    run = CliRunner().invoke(gradescope, ["build", "--out", str(tmp_path / "a.zip"), "--kit", str(ROOT)])
    assert run.exit_code == 0, run.output
    assert "hidden checks after_published" in run.output
    assert "neither the hidden checks nor their total score until you publish" in run.output


@pytest.fixture
def base(tmp_path: Path) -> Iterator[Path]:
    """A scratch folder outside /tmp where possible: the sandbox mounts its own /tmp and wipes it
    after every task, so an engine unpacked under /tmp costs a worker restart per task."""
    if Path("/var/tmp").is_dir() and os.access("/var/tmp", os.W_OK):
        folder = Path(tempfile.mkdtemp(prefix="gradescope-test-", dir="/var/tmp"))
        yield folder
        shutil.rmtree(folder, ignore_errors=True)
    else:
        yield tmp_path


def stand_in(base: Path, zip_path: Path, files: dict[str, str]) -> Path:
    """A temporary /autograder: source/ = the unpacked zip, submission/ = `files`, metadata."""
    root = base / "autograder"
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(root / "source")
    (root / "source" / "run_autograder").chmod(0o755)
    (root / "submission").mkdir()
    for name, text in files.items():
        (root / "submission" / name).write_text(text, encoding="utf-8")
    meta = {"id": 1, "users": [{"email": "ada@example.edu", "id": 7, "name": "Ada"}], "assignment": {"id": 3}}
    (root / "submission_metadata.json").write_text(json.dumps(meta), encoding="utf-8")
    return root


def run_autograder(root: Path, env: dict[str, str] | None = None) -> dict:
    done = subprocess.run(
        ["bash", str(root / "source" / "run_autograder")],
        env={**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": sys.executable, **(env or {})},
        capture_output=True, text=True, timeout=600, cwd=root,
    )
    assert done.returncode == 0, done.stderr
    results = root / "results" / "results.json"
    assert results.is_file(), done.stdout + done.stderr
    data = json.loads(results.read_text(encoding="utf-8"))
    data["_stdout"] = done.stdout
    return data


def assert_gradescope_schema(data: dict) -> None:
    assert set(data) - {"_stdout"} <= TOP_KEYS
    assert isinstance(data["score"], int | float)
    for test in data.get("tests", []):
        assert test["visibility"] in VISIBILITY and test["status"] in ("passed", "failed")
        assert 0 <= test["score"] <= test["max_score"]


def test_zip_layout(zip_path):
    with zipfile.ZipFile(zip_path) as archive:
        names = archive.namelist()
        infos = {i.filename: i for i in archive.infolist()}
        setup = archive.read("setup.sh").decode()
        runner = archive.read("run_autograder").decode()
        config = json.loads(archive.read("gradescope.json"))
    for required in ("setup.sh", "run_autograder", "grading.toml", "pyproject.toml", "constraints.txt",
                     "README.md",
                     "autograder/__init__.py", "autograder/batch.py",
                     "autograder/grading/grader.py", "autograder/sandbox/inside/server.py",
                     "autograder/messages/en.toml",
                     "solutions/nn_module/tinynet.py", "solutions/nn_module/data.py",
                     "solutions/nn_module/graders/hidden/test_tinynet.py",
                     "solutions/nn_module/graders/messages/en.toml"):
        assert required in names, required
    for name in names:
        assert not name.startswith(("tests/", ".venv/", "assignments/", "/")) and ".." not in name
        assert "__pycache__" not in name and not name.endswith(".pyc") and "egg-info" not in name
    for script in ("setup.sh", "run_autograder"):
        assert stat.S_IMODE(infos[script].external_attr >> 16) == 0o755
    assert runner.startswith("#!/usr/bin/env bash") and "python" in runner and "results.json" in runner
    assert setup.startswith("#!/usr/bin/env bash") and "bubblewrap" in setup
    assert "pip install --no-cache-dir -c /autograder/source/constraints.txt" in setup
    assert "-e '/autograder/source[instructor]'" in setup and "python3.11" in setup
    # The only host named: PyTorch's CPU wheel index, for torch's CPU build (not the 3 GB CUDA one).
    assert "://" not in runner and setup.count("://") == 1
    assert 'pip install --no-cache-dir --index-url https://download.pytorch.org/whl/cpu "torch==2.13.0+cpu"' \
        in setup
    cpu_line = next(i for i, line in enumerate(setup.splitlines()) if "whl/cpu" in line)
    kit_line = next(i for i, line in enumerate(setup.splitlines())
                    if "constraints.txt" in line and "pip" in line)
    assert cpu_line < kit_line  # torch first, so the kit's torch==2.13.0 pin finds it installed
    assert config["assignment"] == "nn_module" and config["hidden_visibility"] == "after_due_date"
    assert config["kit_version"] == autograder.__version__ and config["built_at"]


def test_build_refuses_unknown_assignment_and_visibility(tmp_path):
    with pytest.raises(ConfigError, match="unknown assignment"):
        build_gradescope_zip(ROOT, "nope", tmp_path / "a.zip")
    with pytest.raises(ConfigError, match="hidden visibility"):
        build_gradescope_zip(ROOT, "nn_module", tmp_path / "a.zip", hidden_visibility="later")
    assert not (tmp_path / "a.zip").exists()


def test_reference_scores_100_end_to_end(base, zip_path):
    files = {p.name: p.read_text(encoding="utf-8") for p in SOLUTIONS.glob("*.py")}
    data = run_autograder(stand_in(base, zip_path, files))
    assert_gradescope_schema(data)
    assert data["score"] == 100, [t["output"] for t in data["tests"] if t["status"] == "failed"]
    assert {t["visibility"] for t in data["tests"]} == {"visible", "after_due_date"}  # the build's choice
    extra = data["extra_data"]
    assert extra["assignment"] == "nn_module" and extra["student"] == "ada@example.edu"
    assert extra["kit_version"] == autograder.__version__ and extra["graded_at"] and extra["sandbox"]


def test_broken_submission_gets_a_valid_results_json_below_100(base, tmp_path, zip_path):
    """No sandbox (a bwrap that fails, as in Docker): the fallback grades, and keeps off the graders."""
    secret = base / "autograder" / "source" / "solutions" / "nn_module" / "graders" / "hidden" / "_ref.py"
    root = stand_in(base, zip_path, {"tinynet.py": f"print(open({str(secret)!r}).read())\n",
                                         "delivery.py": "def broken(:\n"})
    fakebin = tmp_path / "bin"
    fakebin.mkdir()
    (fakebin / "bwrap").write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"
    )
    (fakebin / "bwrap").chmod(0o755)
    data = run_autograder(root, {"PATH": f"{fakebin}:/usr/bin:/bin"})
    assert_gradescope_schema(data)
    assert data["score"] == 0
    assert data["extra_data"]["sandbox"].startswith("bare")
    assert "sandbox is not available" in data["_stdout"]  # told to the instructor's log only
    assert "sandbox" not in data["output"]
    by_task: dict[str, list[dict]] = {}
    for test in data["tests"]:
        by_task.setdefault(test["tags"][0], []).append(test)
    assert all(t["status"] == "failed" for t in by_task["delivery"])
    assert "SyntaxError" in by_task["delivery"][0]["output"]
    assert "`counting.py` is not in your submission" in by_task["counting"][0]["output"]
    assert by_task["counting"][0]["output_format"] == "md"  # its code span shows as code
    if os.geteuid() == 0 and shutil.which("setpriv") and "uid" in data["extra_data"]["sandbox"]:
        assert "PermissionError" in by_task["tinynet"][0]["output"]  # the graders are closed to student code


def test_run_always_writes_results_json_even_when_grading_cannot_start(tmp_path):
    root = tmp_path / "autograder"
    (root / "source").mkdir(parents=True)
    data = run(root)
    written = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    assert written == data and data["score"] == 0 and data["tests"] == []
    assert "gradescope.json not found" in data["output"] and "tell your instructor" in data["output"]
    (root / "source" / "gradescope.json").write_text('{"assignment": "nn_module"}')
    data = run(root, sandbox="sometimes")
    assert data["score"] == 0 and "sandbox mode" in data["output"]


def test_run_autograder_writes_results_json_when_python_cannot_start(tmp_path, zip_path):
    root = stand_in(tmp_path, zip_path, {})
    data = run_autograder(root, {"AUTOGRADER_PYTHON": "/bin/false"})
    assert data["score"] == 0 and "exit status 1" in data["output"]
    assert_gradescope_schema(data)


@pytest.mark.parametrize("assignment", [a for a in ASSIGNMENTS if a != "nn_module"])
def test_every_other_assignment_zip_grades_its_reference_100(base, tmp_path, assignment):
    """The zip of any assignment: its references score full marks (grading.toml's total) through
    run_autograder."""
    out = tmp_path / f"{assignment}.zip"
    run = CliRunner().invoke(gradescope, ["build", "--assignment", assignment, "--out", str(out),
                                          "--kit", str(ROOT)])
    assert run.exit_code == 0, run.output
    solutions = ROOT / "solutions" / assignment
    files = {p.name: p.read_text(encoding="utf-8") for p in solutions.glob("*.py")}
    data = run_autograder(stand_in(base, out, files))
    assert_gradescope_schema(data)
    assert data["extra_data"]["assignment"] == assignment
    total = sum(task.points for task in load_kit(ROOT).assignment(assignment).tasks)  # any total
    assert data["score"] == total, [t["output"] for t in data["tests"] if t["status"] == "failed"]
