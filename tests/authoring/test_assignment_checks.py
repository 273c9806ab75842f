"""What `autograder doctor` checks statically: message keys and their placeholders in every declared
language, the catalogue rules, notebook cells; and that an undeclared language is refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder.authoring.assignment_checks import assignment_problems, key_uses
from autograder.authoring.catalogue_rules import catalogue_problems, translation_problems
from autograder.authoring.scaffold import scaffold_assignment
from autograder.cli import main
from autograder.config import Assignment, load_kit
from autograder.errors import ConfigError
from autograder.grading.course import load_graders, validate_points

ROOT = Path(__file__).resolve().parents[2]


def scaffolded(tmp_path: Path, languages: str = '["en", "bn"]') -> tuple[Path, Assignment]:
    kit_root = tmp_path / "kit"
    kit_root.mkdir()
    (kit_root / "grading.toml").write_text("[kit]\nlanguage = \"en\"\n", encoding="utf-8")
    scaffold_assignment(kit_root, "course_x", ["alpha", "beta"])
    toml = kit_root / "grading.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace('["en", "bn"]', languages), encoding="utf-8")
    return kit_root, load_kit(kit_root).assignment("course_x")


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_a_fresh_scaffold_has_no_problems(tmp_path):
    _, assignment = scaffolded(tmp_path)
    assert assignment_problems(assignment) == []


def test_a_typo_in_a_fail_key_names_the_file_the_line_and_the_key(tmp_path):
    kit_root, assignment = scaffolded(tmp_path)
    check = assignment.graders / "public" / "test_alpha.py"
    edit(check, 'fail("alpha.wrong_value"', 'fail("alpha.wrong_valeu"')
    line = next(i for i, text in enumerate(check.read_text().splitlines(), 1) if "wrong_valeu" in text)
    problems = assignment_problems(assignment)
    assert any(p.startswith(f"solutions/course_x/graders/public/test_alpha.py:{line}: ")
               and "'alpha.wrong_valeu'" in p and "en catalogue" in p for p in problems), problems
    assert any("'alpha.wrong_valeu'" in p and "bn catalogue" in p for p in problems), problems
    result = CliRunner().invoke(main, ["doctor", "--kit", str(kit_root)])
    assert result.exit_code != 0
    assert f"test_alpha.py:{line}" in result.output and "alpha.wrong_valeu" in result.output


def test_a_check_without_points_is_named_even_when_the_totals_match(tmp_path):
    kit_root, assignment = scaffolded(tmp_path)
    check = assignment.graders / "public" / "test_alpha.py"
    edit(check, "@points(4)\ndef test_example(", "@points(4)\ndef test_example_kept(")
    check.write_text(check.read_text(encoding="utf-8") + "\n\ndef test_forgotten(worker):\n    pass\n",
                     encoding="utf-8")
    line = len(check.read_text(encoding="utf-8").splitlines()) - 1
    problems = assignment_problems(assignment)
    assert [p for p in problems if "@points" in p] == [
        f"solutions/course_x/graders/public/test_alpha.py:{line}: test_forgotten has no @points(...), so it "
        "is never graded: give it its points (and take them from the task's other checks), or rename it "
        "without the test_ prefix if it is a helper"]
    validate_points(load_graders(assignment))  # the engine drops it silently: the totals still match
    result = CliRunner().invoke(main, ["doctor", "--kit", str(kit_root)])
    assert result.exit_code != 0 and "test_forgotten has no @points" in result.output


def test_a_missing_placeholder_value_is_a_problem(tmp_path):
    _, assignment = scaffolded(tmp_path)
    edit(assignment.graders / "public" / "test_beta.py", ', want=f"{want:.6g}")', ")")
    problems = assignment_problems(assignment)
    assert any("'beta.wrong_value' uses {want}" in p for p in problems), problems


def test_keys_in_hints_and_require_close_are_found(tmp_path):
    source = tmp_path / "check.py"
    source.write_text(
        "def test(worker):\n"
        "    call(worker, 'p', 'f()', hints={'grad': 'task.needs_detach'})\n"
        "    require_close(got, want, 'task.values', call='f()')\n"
        "    fail('task.other', **params)\n", encoding="utf-8")
    uses = {(u.key, u.line, u.passed) for u in key_uses(source)}
    assert uses == {("task.needs_detach", 2, None), ("task.values", 3, frozenset({"call", "report"})),
                    ("task.other", 4, None)}


def test_catalogue_rules_per_declared_language(tmp_path):
    _, assignment = scaffolded(tmp_path)
    messages = assignment.graders / "messages"
    text = (messages / "bn.toml").read_text(encoding="utf-8")
    text = text.replace('expected = "মান হবে {want}"\n', 'expected = "the value {want}"\n', 1)  # alpha's
    (messages / "bn.toml").write_text(text.replace("[beta.not_float]", "[beta.not_float_]"), encoding="utf-8")
    problems = list(catalogue_problems(messages, ("en", "bn")))
    assert any("alpha.wrong_value.expected is the English text, untranslated" in p for p in problems)
    assert any("[beta.not_float] is not translated" in p for p in problems)
    assert any("[beta.not_float_] is not in en.toml" in p for p in problems)
    assert list(catalogue_problems(messages, ("en",))) == [], "English alone declared: bn is not checked"


def test_translation_rules():
    assert translation_problems("call zero_grad() first", "প্রথমে zero_grad() ডাকুন", "bn") == []
    assert translation_problems("call zero_grad() first", "প্রথমে ডাকুন", "bn") == [
        "lacks the technical terms ['zero_grad()'] (keep them in English)"]
    assert translation_problems("{call}: {raised}", "{call}: {raised}", "bn") == []
    assert "has placeholders" in translation_problems("got {got}", "পাওয়া গেছে {value}", "bn")[0]
    assert translation_problems("got {got}", "got {got}", "bn") == ["is the English text, untranslated"]


def test_a_missing_notebook_cell_is_a_problem(tmp_path):
    _, assignment = scaffolded(tmp_path)
    (assignment.graders / "notebook" / "test_beta.py").unlink()
    problems = assignment_problems(assignment)
    assert len(problems) == 1 and "notebook/test_beta.py: missing" in problems[0], problems


def test_an_undeclared_language_is_refused_not_replaced_by_english(tmp_path):
    _, assignment = scaffolded(tmp_path, languages='["en"]')
    assert assignment.languages == ("en",)
    with pytest.raises(ConfigError, match=re.escape("has no 'bn' feedback")):
        load_graders(assignment, lang="bn")
    assert load_graders(assignment, lang="en").messages["alpha.wrong_value"]


@pytest.mark.parametrize("assignment", list(load_kit(ROOT).assignments))  # exam extensions too
def test_the_kit_assignments_pass_doctor(assignment: str):
    assert assignment_problems(load_kit(ROOT).assignment(assignment)) == []


def test_doctor_names_first_what_the_catalogue_tests_would_reject(tmp_path):
    """Issue #35: the static rules of tests/test_catalogue.py and tests/output/test_pages.py are doctor's
    too (autograder/authoring/misconception_rules.py), each named with its file and its fix."""
    _, assignment = scaffolded(tmp_path)
    edit(assignment.solutions / "alpha.py", "    return 2.0 * x\n", "    return x + x\n")  # the edits drift
    catalogue = assignment.graders / "misconceptions.toml"
    edit(catalogue, 'fails = ["beta.example", "beta.random_inputs"]\nmust_not_fail = []\n\n[[wrong]]\n'
         'id = "beta-returns-int"', 'fails = ["beta.exampel", "beta.random_inputs"]\nmust_not_fail = []\n\n'
         '[[wrong]]\nid = "beta-returns-int"')
    alpha = 'file = "alpha.py"\nreplace = [["    return 2.0 * x\\n", "    return 2'
    edit(catalogue, alpha + '.0 + x', alpha + ' + x')  # an entry of the author's own, no placeholder
    edit(assignment.graders / "messages" / "bn.toml", '"beta" = "', '"beta" = "the task ')
    problems = "\n".join(assignment_problems(assignment))
    where = "solutions/course_x/graders/misconceptions.toml: [[wrong]]"
    assert f"{where} 'alpha-adds-instead': '    return 2.0 * x\\n' occurs 0 times" in problems, problems
    assert f"{where} 'beta-adds-instead': ['beta.exampel'] are not checks of task 'beta'" in problems
    assert "messages/bn.toml: titles.beta has English words ['the']" in problems, problems


def test_the_scaffolds_placeholder_catalogue_left_behind_is_one_problem_per_task(tmp_path):
    """Issue #46: a reference rewritten under the scaffold's placeholder entries is one problem for the
    task, not one per stale edit; a task still the scaffold's has none."""
    _, assignment = scaffolded(tmp_path)
    edit(assignment.solutions / "alpha.py", "    return 2.0 * x\n", "    return x + x\n")
    problems = assignment_problems(assignment)
    assert problems == ["solutions/course_x/graders/misconceptions.toml: task 'alpha': the scaffold's "
                        "placeholder catalogue is still here: write your own mistakes (edits of the "
                        "reference you wrote: docs/authors/authoring.md, step 4)"], problems


def test_an_english_only_scaffold_has_no_problems_without_bn(tmp_path):
    _, assignment = scaffolded(tmp_path, '["en"]')
    (assignment.graders / "messages" / "bn.toml").unlink()
    assert assignment_problems(assignment) == []
