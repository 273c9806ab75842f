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

import ctypes
import gc
import json
import sys
import types
from collections.abc import Callable, Iterable
from operator import attrgetter, is_, itemgetter
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
# Bound before any submission runs too: the comparisons below are C loops over these.
_all, _map, _len = all, map, len
_CODE, _DEFAULTS = attrgetter("__code__"), attrgetter("__defaults__")
_KWDEFAULTS = attrgetter("__kwdefaults__")


def _getter(keys: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The values of `keys` in a namespace, as a tuple, in one C call (KeyError for a removed one)."""
    if len(keys) == 1:
        one = itemgetter(keys[0])
        return lambda space: (one(space),)
    return itemgetter(*keys) if keys else lambda space: ()


def _version_reader() -> Callable[[dict[Any, Any]], int] | None:
    """How to read a dict's version tag (CPython 3.11's PEP 509 `ma_version_tag`, which takes a new
    value at every change of that dict); None where the layout is not known to be that one."""
    if sys.implementation.name != "cpython" or sys.version_info[:2] != (3, 11):
        return None
    head = object.__basicsize__  # PyObject_HEAD, then Py_ssize_t ma_used, then uint64_t ma_version_tag
    used_at, tag_at = head, head + ctypes.sizeof(ctypes.c_ssize_t)
    ssize, uint64 = ctypes.c_ssize_t.from_address, ctypes.c_uint64.from_address

    def version(space: dict[Any, Any]) -> int:
        return uint64(id(space) + tag_at).value

    probe: dict[str, int] = {}
    before = version(probe)
    probe["x"] = 1
    after = version(probe)
    probe["x"] = 2
    if ssize(id(probe) + used_at).value != 1 or len({before, after, version(probe)}) != 3:
        return None  # not the layout this reads: every namespace is compared name by name
    return version


_version = _version_reader()


def _dict_of(space: Any) -> dict[Any, Any] | None:
    """The dict behind a namespace (a class's vars() is a read-only view of it)."""
    if type(space) is dict:
        return space
    inner = gc.get_referents(space) if type(space) is types.MappingProxyType else []
    return inner[0] if len(inner) == 1 and type(inner[0]) is dict else None


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

    Kept lean: one dictionary look-up per watched name and three attribute reads per function, each
    namespace's and the functions' done in C (operator.itemgetter, map(is_, ...)) with the names
    looked at one by one only to say which changed: about 0.2 ms a check (0.45 ms as a Python
    loop) for the 3,500 names of torch, numpy and the kit that probes rely on, after every call.
    Where a dict's version tag can be read (CPython 3.11) a namespace whose tag is unchanged is not
    compared again (0.02 ms in all instead of ~0.35 ms, and ~1 ms in a task's fresh process): a tag
    moves at any change of its dict, so only a namespace that changed (or had a name added) is
    looked at name by name."""

    def __init__(self) -> None:
        self.watched: list[tuple[str, Any, Any, list[tuple[str, Any]]]] = []
        self.functions: list[tuple[str, Any, Any, Any, Any]] = []
        self.probes: dict[str, Any] = {}
        self.probe_names: dict[str, Any] = {}
        # What `changed` compares in C: per namespace its getter and the values it must give; the
        # functions and their code, defaults and keyword defaults as taken.
        self.fast: list[tuple[Callable[[Any], tuple[Any, ...]], Any, tuple[Any, ...]]] = []
        self.fns: tuple[Any, ...] = ()
        self.codes: tuple[Any, ...] = ()
        self.defaults: tuple[Any, ...] = ()
        self.kwdefaults: tuple[Any, ...] = ()
        # Per namespace of `fast`: its dict and that dict's version tag when it was last found unchanged.
        self.dicts: list[dict[Any, Any] | None] = []
        self.tags: list[int] = []

    @classmethod
    def of_environment(cls) -> Snapshot:
        kept = _KEPT[0] if _KEPT else None
        if kept is not None and kept._as_taken():
            return kept._copy()
        snap = cls()
        for name, owner, space in _spaces():
            snap._watch(name, owner, space)
        return snap

    def _as_taken(self) -> bool:
        """A fresh snapshot would be this one: the same namespaces, no name added, nothing changed."""
        spaces = list(_spaces())
        if len(spaces) != len(self.watched) or self.probes:
            return False
        for (name, owner, space), (name2, owner2, space2, items) in zip(spaces, self.watched, strict=True):
            # A class's vars() is a new view of its one namespace at each call: the class is compared.
            same_space = space is space2 or isinstance(owner, type)
            if name != name2 or owner is not owner2 or not same_space or len(space) != len(items):
                return False
        return self._same()

    def _copy(self) -> Snapshot:
        snap = Snapshot()
        snap.watched, snap.functions, snap.fast = list(self.watched), list(self.functions), list(self.fast)
        snap.dicts, snap.tags = list(self.dicts), list(self.tags)
        snap.fns, snap.codes = self.fns, self.codes
        snap.defaults, snap.kwdefaults = self.defaults, self.kwdefaults
        return snap

    def _watch(self, name: str, owner: Any, space: Any) -> None:
        items = list(space.items())
        self.watched.append((name, owner, space, items))
        self.fast.append((_getter(tuple(k for k, _ in items)), space, tuple(v for _, v in items)))
        inner = _dict_of(space) if _version is not None else None
        self.dicts.append(inner)
        self.tags.append(_version(inner) if _version is not None and inner is not None else -1)
        for key, value in items:
            if isinstance(value, types.FunctionType):
                self.functions.append((f"{name}.{key}", value, value.__code__, value.__defaults__,
                                       value.__kwdefaults__))
        self.fns = tuple(f[1] for f in self.functions)
        self.codes, self.defaults, self.kwdefaults = (tuple(f[i] for f in self.functions) for i in (2, 3, 4))

    def add_probes(self, probes: dict[str, Any], namespace: dict[str, Any]) -> None:
        """The probe table and the namespace its functions run in (taken once they exist)."""
        self.probes = probes
        self.probe_names = dict(probes)
        self._watch("probes", None, namespace)

    def changed(self) -> str:
        """"" when everything is as snapshotted; else what changed, in a few words."""
        if self._same():
            return ""
        return self._what_changed()

    def _same(self) -> bool:
        """Everything as snapshotted, told by identity only (never by a value's own __eq__)."""
        probes = self.probes
        if _len(probes) != _len(self.probe_names) or not _all(
                _map(is_, _map(probes.get, self.probe_names), self.probe_names.values())):
            return False
        modules = sys.modules
        for name, owner, _, _ in self.watched:
            if isinstance(owner, types.ModuleType) and modules.get(name) is not owner:
                return False
        dicts, tags, version = self.dicts, self.tags, _version
        try:
            for index, (getter, space, values) in enumerate(self.fast):
                inner = dicts[index]
                if version is not None and inner is not None:
                    tag = version(inner)  # read before the comparison: a change during it moves it again
                    if tag == tags[index]:
                        continue
                    if not _all(_map(is_, getter(space), values)):
                        return False
                    tags[index] = tag  # as snapshotted (at most names added): unchanged from here on
                elif not _all(_map(is_, getter(space), values)):
                    return False
        except KeyError:  # a name was removed
            return False
        fns = self.fns
        return (_all(_map(is_, _map(_CODE, fns), self.codes))
                and _all(_map(is_, _map(_DEFAULTS, fns), self.defaults))
                and _all(_map(is_, _map(_KWDEFAULTS, fns), self.kwdefaults)))

    def _what_changed(self) -> str:
        """What changed, looked at name by name (only once something did)."""
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


_KEPT: list[Snapshot] = []


def keep_for_forks() -> None:
    """In a warm process that forks the task processes: take the snapshot once, here. Each fork's
    own is then a copy of it (when nothing was added or changed since, which is checked), not a walk
    over the 3,500 names again (in a fresh fork: about 5 ms to check against 9.6 ms to walk; most of
    either is the kernel copying the pages that the names' objects live on)."""
    _KEPT[:] = [Snapshot.of_environment()]


def tampered_answer(what: str) -> bytes:
    """The answer that ends the task: built with json, not the (possibly changed) encoder."""
    return (_dumps({"tampered": f"{what} changed while the submission ran"}) + "\n").encode()
