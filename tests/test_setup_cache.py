"""scripts/venv_cache.py, setup's cache of finished venvs: a venv restored for the same inputs is the one
kept, at its new place and without the kit's own install; other inputs miss; old keys are pruned."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    spec = importlib.util.spec_from_file_location("venv_cache", ROOT / "scripts" / "venv_cache.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setenv("AUTOGRADER_SETUP_CACHE", str(tmp_path / "cache"))
    return module


def fake_venv(where: Path) -> Path:
    """A venv as setup leaves it: a console script, pyvenv.cfg, a package, the kit's editable install,
    its command and setup's stamps, each naming the venv's own path where a real one does."""
    venv = where / ".venv"
    site = venv / "lib" / "python3.11" / "site-packages"
    (site / "numpy").mkdir(parents=True)
    (site / "numpy" / "__init__.py").write_text("version = '2'\n")
    finder = site / "__editable___torch_autograder_0_1_0_finder.py"
    finder.write_text(f"MAPPING = {{'autograder': '{where}'}}\n")
    (site / "__editable__.torch_autograder-0.1.0.pth").write_text("import finder\n")
    (site / "torch_autograder-0.1.0.dist-info").mkdir()
    (site / "torch_autograder-0.1.0.dist-info" / "direct_url.json").write_text(f'{{"url": "file://{where}"}}')
    (venv / "bin").mkdir()
    (venv / "bin" / "python").symlink_to("/usr/bin/python3")
    for name in ("pytest", "autograder"):
        script = venv / "bin" / name
        script.write_text(f"#!{venv.resolve()}/bin/python\nimport sys\n")
        script.chmod(0o755)
    (venv / "pyvenv.cfg").write_text(f"home = /usr/bin\ncommand = python -m venv {venv.resolve()}\n")
    (venv / ".installed").write_text("")
    return venv


def test_a_restored_venv_is_the_kept_one_at_its_new_place(cache, tmp_path: Path):
    inputs = tmp_path / "constraints.txt"
    inputs.write_text("torch==2.13.0\n")
    first = fake_venv(tmp_path / "one")
    cache.save(first, [str(inputs)])
    second = tmp_path / "two" / ".venv"
    second.parent.mkdir()
    assert cache.restore(second, [str(inputs)])
    site = second / "lib" / "python3.11" / "site-packages"
    assert (site / "numpy" / "__init__.py").read_text() == "version = '2'\n"
    assert sorted(p.name for p in site.iterdir()) == ["numpy"]  # the kit's own install left out
    assert sorted(p.name for p in (second / "bin").iterdir()) == ["pytest", "python"]
    assert (second / "bin" / "pytest").read_text().startswith(f"#!{second.resolve()}/bin/python\n")
    assert os.access(second / "bin" / "pytest", os.X_OK)
    assert os.readlink(second / "bin" / "python") == "/usr/bin/python3"
    assert str(second.resolve()) in (second / "pyvenv.cfg").read_text()
    assert not (second / ".installed").exists()  # setup's stamps are setup's to make
    # the kept venv is untouched by the rewrite (the script there still names the first venv)
    assert (first / "bin" / "pytest").read_text().startswith(f"#!{first.resolve()}/bin/python\n")
    kept = next(p for p in (tmp_path / "cache").iterdir() if not p.name.startswith("."))
    assert (kept / "bin" / "pytest").read_text().startswith(f"#!{first.resolve()}/bin/python\n")


def test_other_inputs_miss_and_an_existing_venv_is_never_replaced(cache, tmp_path: Path):
    inputs = tmp_path / "constraints.txt"
    inputs.write_text("torch==2.13.0\n")
    cache.save(fake_venv(tmp_path / "one"), [str(inputs)])
    inputs.write_text("torch==2.13.0\nnumpy==2.4.6\n")
    fresh = tmp_path / "two" / ".venv"
    assert not cache.restore(fresh, [str(inputs)]) and not fresh.exists()
    inputs.write_text("torch==2.13.0\n")
    existing = fake_venv(tmp_path / "three")
    (existing / "bin" / "pytest").write_text("#!/mine\n")
    assert not cache.restore(existing, [str(inputs)])
    assert (existing / "bin" / "pytest").read_text() == "#!/mine\n"


def test_only_the_newest_keys_are_kept_and_zero_turns_it_off(cache, tmp_path: Path, monkeypatch):
    inputs = tmp_path / "pyproject.toml"
    for n in range(cache.KEEP + 2):
        inputs.write_text(f"version {n}\n")
        venv = fake_venv(tmp_path / f"v{n}")
        cache.save(venv, [str(inputs)])
        kept = tmp_path / "cache" / cache.key([str(inputs)])
        os.utime(kept, (1_000_000 + n, 1_000_000 + n))
    left = [p for p in (tmp_path / "cache").iterdir()]
    assert len(left) == cache.KEEP
    assert (tmp_path / "cache" / cache.key([str(inputs)])).is_dir()  # the newest among them
    monkeypatch.setenv("AUTOGRADER_SETUP_CACHE", "0")
    assert not cache.restore(tmp_path / "off" / ".venv", [str(inputs)])
