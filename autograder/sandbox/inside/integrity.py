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
    "autograder.sandbox.inside.spies", "autograder.sandbox.inside.observe",
)
WATCHED_CLASSES = (("torch", "Tensor"), ("torch.nn", "Module"), ("torch.nn", "Parameter"),
                   ("torch.optim", "Optimizer"), ("torch.autograd", "Function"),
                   ("autograder.sandbox.inside.runtime", "TaskRuntime"),
                   ("autograder.sandbox.inside.integrity", "Snapshot"),
                   ("autograder.sandbox.inside.spies", "BackwardSpy"),
                   ("autograder.sandbox.inside.spies", "GraphSpy"),
                   ("autograder.sandbox.inside.spies", "StepSpy"))
_dumps = json.dumps  # bound before any submission runs: the verdict never goes through its changes


def _spaces() -> Iterable[tuple[str, Any, Any]]:
    """(name, owner, live namespace) of every watched module and class that is loaded."""
    for name in WATCHED:
        module = sys.modules.get(name)
        if module is not None:
            yield name, module, vars(module)
    for module_name, attr in WATCHED_CLASSES:
        module = sys.modules.get(module_name)
        cls = getattr(module, attr, None) if module is not None else None
        if isinstance(cls, type):
            yield f"{module_name}.{attr}", cls, vars(cls)  # a live view of the class's namespace


class Snapshot:
    """What a probe call's answer depends on, as object identities, checked against the live state.

    Kept lean: one dictionary look-up per watched name and three attribute reads per function,
    about 0.2 ms a check for the 3,000 names of torch, numpy and the kit that probes rely on."""

    def __init__(self) -> None:
        self.watched: list[tuple[str, Any, Any, list[tuple[str, Any]]]] = []
        self.functions: list[tuple[str, Any, Any, Any, Any]] = []
        self.probes: dict[str, Any] = {}
        self.probe_names: dict[str, Any] = {}

    @classmethod
    def of_environment(cls) -> Snapshot:
        snap = cls()
        for name, owner, space in _spaces():
            snap._watch(name, owner, space)
        return snap

    def _watch(self, name: str, owner: Any, space: Any) -> None:
        items = list(space.items())
        self.watched.append((name, owner, space, items))
        for key, value in items:
            if isinstance(value, types.FunctionType):
                self.functions.append((f"{name}.{key}", value, value.__code__, value.__defaults__,
                                       value.__kwdefaults__))

    def add_probes(self, probes: dict[str, Any], namespace: dict[str, Any]) -> None:
        """The probe table and the namespace its functions run in (taken once they exist)."""
        self.probes = probes
        self.probe_names = dict(probes)
        self._watch("probes", None, namespace)

    def changed(self) -> str:
        """"" when everything is as snapshotted; else what changed, in a few words."""
        probes = self.probes
        if len(probes) != len(self.probe_names):
            return "the table of probes"
        for name, fn in self.probe_names.items():
            if probes.get(name) is not fn:
                return f"probe {name}"
        modules = sys.modules
        for name, owner, space, items in self.watched:
            if isinstance(owner, types.ModuleType) and modules.get(name) is not owner:
                return f"module {name}"
            get = space.get
            for key, value in items:
                if get(key, _MISSING) is not value:
                    return f"{name}.{key}"
        for name, fn, code, defaults, kwdefaults in self.functions:
            if fn.__code__ is not code or fn.__defaults__ is not defaults:
                return f"{name} (its code or defaults)"
            if fn.__kwdefaults__ is not kwdefaults:
                return f"{name} (its defaults)"
        return ""


def tampered_answer(what: str) -> bytes:
    """The answer that ends the task: built with json, not the (possibly changed) encoder."""
    return (_dumps({"tampered": f"{what} changed while the submission ran"}) + "\n").encode()
