"""Inside the sandbox: notice when a submission changes the probes, the encoder or what they use.

The probes run in the student's own process, so a submission can reach them (by walking frames or
the garbage collector's objects) and put a forger in their place. A snapshot of everything that
answers a probe call — the probe functions and their code, the probes' module namespace, the
encoder, the runtime, and the functions of torch, numpy and builtins they use — is taken before
the student's module is imported; it is compared after the import and after every probe call.
A change ends the task with its own verdict, never an ordinary mistake. Added names are allowed
(importing a submodule adds one); changed or removed ones are not.

This is one line of defence; the other makes forging pointless: checks award points for answers
to challenges drawn in the grading process, which only real code computes.
"""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Iterable
from typing import Any

_MISSING = object()
# Modules and classes whose namespaces a probe's answer depends on (when they are loaded).
WATCHED = (
    "builtins", "json", "numpy", "numpy.random", "torch", "torch.nn", "torch.nn.functional",
    "torch.nn.modules.module", "torch.optim", "torch.autograd", "torch.serialization",
    "autograder.sandbox.codec", "autograder.sandbox.inside.runtime", "autograder.sandbox.inside.integrity",
    "autograder.sandbox.inside.spies",
)
WATCHED_CLASSES = (("torch", "Tensor"), ("torch.nn", "Module"), ("torch.nn", "Parameter"),
                   ("torch.optim", "Optimizer"), ("torch.autograd", "Function"),
                   ("autograder.sandbox.inside.runtime", "TaskRuntime"),
                   ("autograder.sandbox.inside.integrity", "Snapshot"),
                   ("autograder.sandbox.inside.spies", "BackwardSpy"),
                   ("autograder.sandbox.inside.spies", "GraphSpy"),
                   ("autograder.sandbox.inside.spies", "StepSpy"))
_dumps = json.dumps  # bound before any submission runs: the verdict never goes through its changes


def _namespaces() -> Iterable[tuple[str, dict[str, Any]]]:
    for name in WATCHED:
        module = sys.modules.get(name)
        if module is not None:
            yield name, vars(module)
    for module_name, attr in WATCHED_CLASSES:
        module = sys.modules.get(module_name)
        cls = getattr(module, attr, None) if module is not None else None
        if isinstance(cls, type):
            yield f"{module_name}.{attr}", dict(vars(cls))


def _function_parts(value: Any) -> tuple[Any, ...] | None:
    if isinstance(value, types.FunctionType):
        cells = tuple(c.cell_contents if _has(c) else _MISSING for c in value.__closure__ or ())
        return (value.__code__, value.__defaults__, value.__kwdefaults__, value.__globals__, *cells)
    return None


def _same(a: tuple[Any, ...], b: tuple[Any, ...] | None) -> bool:
    """Element by element identity (== would compare arrays in a closure element-wise)."""
    return b is not None and len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def _has(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018  (an empty cell raises)
    except ValueError:
        return False
    return True


class Snapshot:
    """What a probe call's answer depends on, as object identities."""

    def __init__(self) -> None:
        self.spaces: dict[str, dict[str, Any]] = {}
        self.parts: dict[int, tuple[Any, ...]] = {}
        self.probes: dict[str, Any] = {}
        self.probe_space: dict[str, Any] = {}
        self.probe_names: dict[str, Any] = {}

    @classmethod
    def of_environment(cls) -> Snapshot:
        snap = cls()
        for name, space in _namespaces():
            snap.spaces[name] = dict(space)
            for value in space.values():
                parts = _function_parts(value)
                if parts is not None:
                    snap.parts[id(value)] = parts
        return snap

    def add_probes(self, probes: dict[str, Any], namespace: dict[str, Any]) -> None:
        """The probe table and the namespace its functions run in (taken once they exist)."""
        self.probes = probes
        self.probe_names = dict(probes)
        self.probe_space = namespace
        self.spaces["probes"] = dict(namespace)
        for value in namespace.values():
            parts = _function_parts(value)
            if parts is not None:
                self.parts[id(value)] = parts

    def changed(self) -> str:
        """"" when everything is as snapshotted; else what changed, in a few words."""
        if self.probes.keys() != self.probe_names.keys():
            return "the table of probes"
        for name, fn in self.probe_names.items():
            if self.probes.get(name) is not fn:
                return f"probe {name}"
        current = dict(_namespaces())
        current["probes"] = self.probe_space
        for space_name, saved in self.spaces.items():
            now = current.get(space_name)
            if now is None:
                return f"module {space_name}"
            for key, value in saved.items():
                if now.get(key, _MISSING) is not value:
                    return f"{space_name}.{key}"
                parts = self.parts.get(id(value))
                if parts is not None and not _same(parts, _function_parts(value)):
                    return f"{space_name}.{key} (its code or defaults)"
        return ""


def tampered_answer(what: str) -> bytes:
    """The answer that ends the task: built with json, not the (possibly changed) encoder."""
    return (_dumps({"tampered": f"{what} changed while the submission ran"}) + "\n").encode()
