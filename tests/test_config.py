"""grading.toml is validated: a wrong key or value is an error naming the key."""

from pathlib import Path

import pytest

from autograder.config import load_kit, parse_kit
from autograder.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


def test_bundled_config_matches_spec_points():
    kit = load_kit(ROOT)
    points = {t.id: t.points for t in kit.assignment("nn_module").tasks}
    assert points == {
        "tinynet": 15, "delivery": 20, "counting": 15, "containers": 10,
        "checkpoint": 15, "dropout": 15, "numpy_forward": 10,
    }
    assert kit.assignment().max_score == 100


def _minimal(**task):
    return {"assignments": {"a": {"tasks": {"t": {"file": "t.py", "points": 5, **task}}}}}


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"kit": {"langauge": "en"}, **_minimal()}, "kit.langauge"),
        ({"kit": {"language": "fr"}, **_minimal()}, "kit.language"),
        (_minimal(time_limit="ten"), "assignments.a.tasks.t.time_limit"),
        (_minimal(time_limit=-1), "assignments.a.tasks.t.time_limit"),
        (_minimal(memroy_mb=3), "assignments.a.tasks.t.memroy_mb"),
        (_minimal(file="../x.py"), "assignments.a.tasks.t.file"),
        ({"assignments": {}}, "no [assignments"),
        ({"assignments": {"a": {"tasks": {"t": {"file": "t.py"}}}}}, "points is required"),
        ({"kit": {"default_assignment": "b"}, **_minimal()}, "kit.default_assignment"),
    ],
)
def test_errors_name_the_key(data, words):
    with pytest.raises(ConfigError) as info:
        parse_kit(ROOT, data)
    assert words in str(info.value)


def test_missing_file_says_where(tmp_path):
    with pytest.raises(ConfigError, match="grading.toml not found"):
        load_kit(tmp_path)


def test_broken_toml_names_the_file(tmp_path):
    (tmp_path / "grading.toml").write_text("[kit\n")
    with pytest.raises(ConfigError, match="grading.toml"):
        load_kit(tmp_path)


def _with_languages(value):
    data = _minimal()
    data["assignments"]["a"]["languages"] = value
    return data


@pytest.mark.parametrize(("value", "words"), [
    ("en", "must be a list"), ([], "must be a list"), (["en", "fr"], "unknown language 'fr'"),
    (["bn"], "must start with \"en\""), (["en", "en"], "each language once"),
])
def test_languages_are_validated(value, words):
    with pytest.raises(ConfigError) as info:
        parse_kit(ROOT, _with_languages(value))
    assert "assignments.a.languages" in str(info.value) and words in str(info.value)


def test_languages_default_to_english_and_an_exam_inherits_them():
    assert parse_kit(ROOT, _minimal()).assignment("a").languages == ("en",)
    data = _with_languages(["en", "bn"])
    data["assignments"]["e"] = {"extends": "a"}
    kit = parse_kit(ROOT, data)
    assert kit.assignment("a").languages == kit.assignment("e").languages == ("en", "bn")
    assert load_kit(ROOT).assignment("tensors_autograd").languages == ("en", "bn")
