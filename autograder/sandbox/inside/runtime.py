"""Inside a worker: import one student file and run probes on it, answering in plain data."""

from __future__ import annotations

import importlib.util
import os
import random
import sys
import types
from pathlib import Path
from typing import Any

from autograder.sandbox import codec
from autograder.sandbox.inside import probe_source
from autograder.sandbox.inside.integrity import Snapshot, tampered_answer

MESSAGE_LIMIT = 2000  # characters of a student's exception message kept for feedback


def _clip(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """At most `limit` characters, valid Unicode (lone surrogates become "?")."""
    if len(text) > limit:
        text = text[:limit] + f"... [{len(text) - limit} more characters]"
    return text if text.isascii() else text.encode("utf-8", "replace").decode("utf-8")


def _safe_str(exc: BaseException) -> str:
    try:
        text = str(exc)
    except BaseException:  # a hostile __str__ must not take the worker down
        return "<exception message could not be read>"
    return _clip(text if type(text) is str else "<not a string>")


def _student_frame(exc: BaseException, task_dir: str) -> str:
    """The last traceback line that points into the student's files, as `file:line in func`.

    Walks the frames without formatting them, so a traceback of a million frames costs little.
    """
    where = ""
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        # os.sep: the student's own check runs this on Windows too
        if type(code.co_filename) is str and code.co_filename.startswith((task_dir + "/", task_dir + os.sep)):
            where = f"{Path(code.co_filename).name}:{tb.tb_lineno} in {code.co_name}"
        tb = tb.tb_next
    return _clip(where, 300)


def describe_error(exc: BaseException, task_dir: str) -> dict[str, str]:
    return {
        "type": _clip(type(exc).__name__, 200),
        "message": _safe_str(exc),
        "where": _student_frame(exc, task_dir),
    }


def seed_everything(seed: int) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    # The CPU generator only: torch.manual_seed also visits every accelerator backend (0.2 ms).
    torch.default_generator.manual_seed(seed)


_lazy_loaded = False


def load_lazy_torch() -> None:
    """Load what torch imports on first use (an optimizer's first step brings in torch._dynamo, which
    wraps torch.manual_seed and more), before the integrity snapshot: honest code that trains is
    then no change to what the probes use. Once per process; the warm worker does it before forking."""
    global _lazy_loaded
    if _lazy_loaded:
        return
    import io

    import numpy
    import torch
    import torch.nn.functional as F
    import torch.optim

    # The first optimizer step and the first save/load import large parts of torch lazily
    # (seconds, more on a busy machine): paid here, once, before any task's clock starts.
    layer = torch.nn.Linear(2, 2)
    for optimizer in (torch.optim.Adam(layer.parameters()), torch.optim.SGD(layer.parameters(), lr=0.1)):
        optimizer.zero_grad()
        F.cross_entropy(layer(torch.zeros(1, 2)), torch.zeros(1, dtype=torch.long)).backward()
        optimizer.step()
    buffer = io.BytesIO()
    torch.save(layer.state_dict(), buffer)
    buffer.seek(0)
    torch.load(buffer, weights_only=True)
    numpy.random.default_rng(0).random(2)
    # The probes' API, loaded before the snapshot in every kind of worker, so that it is watched.
    from autograder.sandbox.inside import observe  # noqa: F401

    _lazy_loaded = True


def warm_torch() -> None:
    """Import torch on one thread and load its lazy parts: what a process does once before it forks
    the processes that run tasks (the sandbox's worker, the self-check's warm child)."""
    import torch

    torch.set_num_threads(1)  # as graded; a fork after parallel work would also risk OpenMP's pool
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # a process that already ran parallel work (the grading process) keeps its own
        pass
    load_lazy_torch()


def compile_probes(source: str) -> tuple[Any, ...]:
    """The code of every probe file in the source (probe_source.join), in order."""
    return tuple(compile(text, name, "exec") for name, text in probe_source.split(source))


class TaskRuntime:
    """One student module and the assignment's probes, loaded in this process."""

    def __init__(self, task_dir: str, module_name: str, probes_source: str, probes_code: Any = None):
        self.task_dir = str(Path(task_dir).resolve())
        self.module_name = module_name
        self.probes_source = probes_source
        self.probes_code = probes_code
        self.module: types.ModuleType | None = None
        self.probes: dict[str, Any] = {}
        self.snapshot = Snapshot()

    def open(self) -> dict[str, Any]:
        """Import the student's module; report an import failure as data.

        The probes come into being only after the import, so module-level code never meets them;
        what they will use is snapshotted before it, and checked after it and after every call."""
        load_lazy_torch()
        self.snapshot = Snapshot.of_environment()
        status = self._import()
        changed = self.snapshot.changed()
        if changed:
            return {"imported": False, "tampered": f"{changed} changed while the submission was imported"}
        self._load_probes()
        return status

    def adopt(self, module: types.ModuleType) -> dict[str, Any]:
        """Run the probes on `module`, already made (a notebook's names), instead of importing a file."""
        load_lazy_torch()
        self.snapshot = Snapshot.of_environment()
        self._load_probes()
        self.module = module
        return {"imported": True}

    def _load_probes(self) -> None:
        probes_ns: dict[str, Any] = {"__name__": "autograder_probes"}
        for code in self.probes_code or compile_probes(self.probes_source):
            exec(code, probes_ns)  # the assignment's probes: one namespace for all their files
        self.probes = {
            name: fn
            for name, fn in probes_ns.items()
            if callable(fn)
            and not name.startswith("_")
            and getattr(fn, "__module__", "") == "autograder_probes"
        }
        self.snapshot.add_probes(self.probes, probes_ns)

    def _import(self) -> dict[str, Any]:
        # Last on the path: a student's helper modules import, but never in place of an installed
        # or standard module (a `json.py` or `torch.py` would otherwise win for lazy imports).
        if self.task_dir not in sys.path:
            sys.path.append(self.task_dir)
        path = Path(self.task_dir) / f"{self.module_name}.py"
        try:
            spec = importlib.util.spec_from_file_location(self.module_name, path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[self.module_name] = module
            spec.loader.exec_module(module)
        except BaseException as exc:  # SystemExit and KeyboardInterrupt at import are the student's too
            return {"imported": False, "error": describe_error(exc, self.task_dir)}
        self.module = module
        return {"imported": True}

    def call(self, probe: str, kwargs: dict[str, Any], seed: int) -> bytes:
        """Run one probe; the answer is already encoded, so nothing unencodable escapes."""
        fn = self.probes.get(probe)
        if fn is None:
            return codec.encode({"kit_error": f"unknown probe {probe!r}"})
        seed_everything(seed)
        try:
            value = fn(self.module, **kwargs)
        except BaseException as exc:
            answer = codec.encode({"error": describe_error(exc, self.task_dir)})
        else:
            try:
                answer = codec.encode({"value": value})
            except Exception as exc:  # whatever the value's own methods raise
                error = {"type": "UnsendableResult", "message": _safe_str(exc), "where": ""}
                answer = codec.encode({"error": error})
        changed = self.snapshot.changed()
        return tampered_answer(changed) if changed else answer
