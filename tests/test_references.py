"""autograder.references: reference solutions imported by path, once, with their folder importable."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.errors import ConfigError
from autograder.references import References, probe_files


@pytest.fixture
def assignment(tmp_path: Path) -> Path:
    folder = tmp_path / "some_assignment"
    (folder / "graders" / "hidden").mkdir(parents=True)
    (folder / "data.py").write_text("N = 3\n")
    (folder / "task.py").write_text("import data\n\ndef f():\n    return data.N\n")
    (folder / "graders" / "probes.py").write_text("def probe(mod):\n    return 1\n")
    (folder / "graders" / "hidden" / "_ref.py").write_text("")
    return folder


def test_a_reference_imports_once_and_may_import_its_data(assignment):
    refs = References.of_graders(str(assignment / "graders" / "hidden" / "_ref.py"))
    assert refs.folder == assignment.resolve()
    module = refs.module("task")
    assert module.f() == 3 and refs.module("task") is module


def test_of_graders_from_the_graders_folder_itself(assignment):
    refs = References.of_graders(str(assignment / "graders" / "support.py"))
    assert refs.folder == assignment.resolve()
    assert refs.graders_module("probes").probe(None) == 1
    assert refs.graders_module("probes") is refs.graders_module("probes")


def test_a_variant_is_its_own_module(assignment):
    refs = References(assignment)
    variant = refs.variant("task", "def f():\n    return 7\n")
    assert variant.f() == 7 and refs.module("task").f() == 3
    assert refs.variant("task", "def f():\n    return 7\n") is variant


def test_a_missing_reference_is_a_clear_error(assignment):
    with pytest.raises(ConfigError, match="no_such.py"):
        References(assignment).module("no_such")


def test_probes_in_a_folder_fill_one_module_helpers_first(assignment):
    graders = assignment / "graders"
    (graders / "probes.py").unlink()
    (graders / "probes").mkdir()
    (graders / "probes" / "alpha.py").write_text("def alpha(mod):\n    return _twice(2)\n")
    (graders / "probes" / "_shared.py").write_text("def _twice(x):\n    return 2 * x\n")
    assert [p.name for p in probe_files(graders)] == ["_shared.py", "alpha.py"]
    assert References(assignment).graders_module("probes").alpha(None) == 4
    (graders / "probes.py").write_text("")
    with pytest.raises(ConfigError, match="both probes.py and probes/"):
        probe_files(graders)


def test_a_graders_folder_without_probes_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="no probes"):
        probe_files(tmp_path)
