"""autograder.sandbox.inside.probe_source: probe files joined into one text, split exactly again."""

from __future__ import annotations

import pytest

from autograder.sandbox.inside import probe_source
from autograder.sandbox.inside.runtime import TaskRuntime, compile_probes


def test_one_probes_file_is_sent_as_it_is():
    assert probe_source.join([("probes.py", "def p(mod):\n    return 1\n")]) == "def p(mod):\n    return 1\n"
    assert probe_source.split("x = 1\n") == [("probes.py", "x = 1\n")]


def test_files_come_back_in_order_under_their_names():
    files = [("probes/_shared.py", "A = 1\n"), ("probes/beta.py", "\n\ndef beta(mod):\n    return A\n")]
    assert probe_source.split(probe_source.join(files)) == files


def test_each_file_compiles_under_its_own_name():
    source = probe_source.join(
        [("probes/_shared.py", "X = 1\n"), ("probes/alpha.py", "def alpha(mod):\n    1 / 0\n")]
    )
    codes = compile_probes(source)
    assert [c.co_filename for c in codes] == ["probes/_shared.py", "probes/alpha.py"]
    with pytest.raises(SyntaxError):
        compile_probes(probe_source.join([("probes/a.py", "x = 1\n"), ("probes/b.py", "def (:\n")]))


def test_a_worker_runs_the_probes_of_every_file_in_one_namespace(tmp_path):
    (tmp_path / "student_alpha.py").write_text("def value():\n    return 20\n", encoding="utf-8")
    source = probe_source.join(
        [
            ("probes/_shared.py", "def _plus(x):\n    return x + 1\n"),
            ("probes/alpha.py", "def alpha(mod):\n    return _plus(mod.value())\n"),
        ]
    )
    runtime = TaskRuntime(str(tmp_path), "student_alpha", source)
    assert runtime.open() == {"imported": True}
    assert set(runtime.probes) == {"alpha"}  # a helper is not a probe
