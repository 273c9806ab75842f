"""Grading side: reference solutions imported by file path, for hidden checks (trusted code only)."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

from autograder.errors import ConfigError


@contextmanager
def _on_path(folder: Path) -> Iterator[None]:
    """`folder` first on sys.path while a reference runs its imports (it may `import data`)."""
    entry = str(folder)
    added = entry not in sys.path
    if added:
        sys.path.insert(0, entry)
    try:
        yield
    finally:
        if added:
            sys.path.remove(entry)


def load_path(path: Path, name: str) -> ModuleType:
    """Import the file `path` as module `name` (registered in sys.modules, as pickling needs)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None or not path.is_file():
        raise ConfigError(f"{path}: no such reference file to import")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    with _on_path(path.parent):
        spec.loader.exec_module(module)
    return module


def exec_source(path: Path, source: str, name: str) -> ModuleType:
    """Import `source` as if it were the file `path` (a reference rewritten for an exam variant)."""
    module = ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module
    with _on_path(path.parent):
        exec(compile(source, str(path), "exec"), module.__dict__)  # noqa: S102  the kit's own reference
    return module


class References:
    """The reference solutions of one assignment folder (solutions/<id>/), each imported once."""

    def __init__(self, folder: Path):
        self.folder = folder.resolve()
        self.prefix = "_reference_" + re.sub(r"\W", "_", self.folder.name)
        self.module = functools.cache(self._module)
        self.variant = functools.lru_cache(maxsize=64)(self._variant)
        self.graders_module = functools.cache(self._graders_module)

    @classmethod
    def of_graders(cls, graders_file: str) -> References:
        """From any file of graders/ or graders/hidden/: the references of its assignment."""
        here = Path(graders_file).resolve().parent
        graders = here if here.name == "graders" else here.parent
        return cls(graders.parent)

    def _module(self, task: str) -> ModuleType:
        """The reference `<folder>/<task>.py`, imported once per grading process."""
        return load_path(self.folder / f"{task}.py", f"{self.prefix}_{task}")

    def _variant(self, task: str, source: str) -> ModuleType:
        """The reference `<task>.py` with its text replaced by `source`, imported once per text."""
        digest = hashlib.sha256(source.encode()).hexdigest()[:16]
        return exec_source(self.folder / f"{task}.py", source, f"{self.prefix}_{task}_{digest}")

    def _graders_module(self, name: str) -> ModuleType:
        """A graders file by name (say, probes.py) as a module, to build what the worker builds; the
        probes of a `probes/` folder as one module, filled in the worker's order."""
        graders = self.folder / "graders"
        if name != "probes" or (graders / "probes.py").is_file():
            return load_path(graders / f"{name}.py", f"{self.prefix}_graders_{name}")
        module = ModuleType(f"{self.prefix}_graders_probes")
        sys.modules[module.__name__] = module
        for path in probe_files(graders):
            code = compile(path.read_text(encoding="utf-8"), str(path), "exec")
            exec(code, module.__dict__)  # noqa: S102  the assignment's own probes (trusted code)
        return module


def probe_files(graders: Path) -> list[Path]:
    """The probe files of a graders folder in the order they fill one namespace: `probes.py`, or the
    files of `probes/`, shared helpers (a leading `_`) first, then one per task, by name."""
    single, folder = graders / "probes.py", graders / "probes"
    if single.is_file() and folder.is_dir():
        raise ConfigError(f"{graders}: has both probes.py and probes/: keep one of them")
    if single.is_file():
        return [single]
    files = sorted(folder.glob("*.py"), key=lambda p: (not p.name.startswith("_"), p.name))
    if not files:
        raise ConfigError(f"{graders}: no probes: write graders/probes.py or graders/probes/<task>.py")
    return files
