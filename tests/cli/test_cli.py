"""The CLI is thin and friendly: commands listed, errors as one line with an exit code."""

from __future__ import annotations

import shutil

from click.testing import CliRunner
from conftest import ROOT, SOLUTIONS, STUBS

from autograder.cli import main


def test_help_lists_every_command_and_each_has_its_own_help():
    """The listing names exactly the commands there are; each answers --help with its own usage and
    summary (a command name found elsewhere in some help text proves nothing)."""
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    listing = result.output.split("Commands:", 1)[1]
    listed = [line.split()[0] for line in listing.splitlines() if line.startswith("  ") and line.split()]
    assert sorted(listed) == sorted(main.commands)
    assert {"build", "check", "doctor", "export", "grade", "gradescope"} <= set(listed)
    for name, command in main.commands.items():
        own = CliRunner().invoke(main, [name, "--help"])
        assert own.exit_code == 0, (name, own.output)
        assert own.output.startswith(f"Usage: main {name} "), (name, own.output[:80])
        summary = " ".join((command.help or "").split("\n\n")[0].split())
        assert summary and summary in " ".join(own.output.split()), name


def test_build_check_reports_sync():
    result = CliRunner().invoke(main, ["build", "nn_module", "--check", "--kit", str(ROOT)])
    assert result.exit_code == 0, result.output
    assert "in sync" in result.output


def test_selfcheck_runs_public_checks_only(tmp_path):
    work = tmp_path / "work"
    shutil.copytree(STUBS, work, ignore=shutil.ignore_patterns("checks", "README.md"))
    shutil.copy(SOLUTIONS / "counting.py", work / "counting.py")
    result = CliRunner().invoke(main, ["check", str(work), "--kit", str(ROOT), "--in-process", "--verbose"])
    assert result.exit_code == 1, result.output  # some public checks fail
    assert "counting" in result.output and "PASS" in result.output and "FAIL" in result.output
    assert "NotImplementedError" in result.output
    assert "public checks:" in result.output


def test_unknown_assignment_is_one_clear_line(tmp_path):
    (tmp_path / "class").mkdir()
    result = CliRunner().invoke(
        main, ["grade", str(tmp_path / "class"), "--out", str(tmp_path / "out"), "--assignment", "nope",
               "--kit", str(ROOT)],
    )
    assert result.exit_code == 2
    assert "unknown assignment 'nope'" in result.output


def test_missing_kit_says_what_to_do(tmp_path):
    result = CliRunner().invoke(main, ["doctor", "--kit", str(tmp_path)])
    assert result.exit_code == 2
    assert "grading.toml" in result.output


def test_similarity_command_flags_a_copy_and_warns_without_an_exam_secret(tmp_path, monkeypatch):
    import random
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import similarity_class as made

    people = {f"s{i:02d}": made.independent_student(i, 4, made.fixed_styles()) for i in range(20)}
    rng = random.Random(4)
    people["zed"] = {name: made.disguise(text, 1, rng) for name, text in people["s05"].items()}
    made.write_class(people, tmp_path / "class")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["similarity", str(tmp_path / "class"), "--out", str(out),
                                       "--kit", str(ROOT), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    assert "s05 ~ zed" in result.output and (out / "similarity.csv").is_file()
    monkeypatch.delenv("AUTOGRADER_EXAM_SECRET", raising=False)
    monkeypatch.delenv("AUTOGRADER_EXAM_SECRET_FILE", raising=False)
    exam = CliRunner().invoke(main, ["similarity", str(tmp_path / "class"), "--out", str(tmp_path / "exam"),
                                     "--kit", str(ROOT), "--assignment", "nn_module_exam", "--jobs", "1"])
    assert exam.exit_code == 0, exam.output
    assert "not looking for another variant's numbers" in exam.output
    (tmp_path / "empty-term").mkdir()
    bad = CliRunner().invoke(main, ["similarity", str(tmp_path / "class"), "--out", str(out),
                                    "--kit", str(ROOT), "--archive", str(tmp_path / "empty-term")])
    assert bad.exit_code == 2 and "holds none of the task files" in " ".join(bad.output.split())  # rich wraps
