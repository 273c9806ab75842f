"""The worker's integrity snapshot: what a probe relies on, changed by a submission, is noticed."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from autograder.sandbox import codec
from autograder.sandbox.inside import runtime
from autograder.sandbox.inside.integrity import Snapshot

PROBES = '''
import torch

def structure(mod, n):
    model = mod.Net(n)
    return {"names": [name for name, _ in model.named_parameters()]}
'''
HONEST = '''
import torch
from torch import nn

class Net(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 1)
'''


def _runtime(tmp_path: Path, source: str) -> runtime.TaskRuntime:
    (tmp_path / "net.py").write_text(source)
    return runtime.TaskRuntime(str(tmp_path), "net", PROBES)


def _answer(task: runtime.TaskRuntime) -> dict:
    return json.loads(task.call("structure", {"n": 3}, 1).split(b"\n", 1)[0])


def test_an_honest_module_answers(tmp_path):
    task = _runtime(tmp_path, HONEST)
    assert task.open() == {"imported": True}
    assert _answer(task)["value"]["names"] == ["fc.weight", "fc.bias"]


def test_a_patched_library_function_at_import_is_tampering(tmp_path):
    original = torch.nn.Module.named_parameters
    task = _runtime(tmp_path, HONEST + "\nnn.Module.named_parameters = lambda self, *a, **k: iter(())\n")
    try:
        status = task.open()
    finally:
        torch.nn.Module.named_parameters = original  # this very process: later tests need torch whole
    assert status["imported"] is False and "torch.nn.Module.named_parameters" in status["tampered"]


def test_torch_is_whole_again():
    assert torch.nn.Module.named_parameters.__module__ == "torch.nn.modules.module"


def test_a_probe_replaced_during_a_call_is_tampering(tmp_path):
    forger = HONEST.replace("super().__init__()", "super().__init__()\n        _forge()") + '''
import sys

def _forge():
    frame = sys._getframe(1)
    while frame is not None:
        table = getattr(frame.f_locals.get("self"), "probes", None)
        if isinstance(table, dict) and "structure" in table:
            table["structure"] = lambda mod, n: {"names": ["forged"]}
            return
        frame = frame.f_back
'''
    task = _runtime(tmp_path, forger)
    assert task.open() == {"imported": True}
    assert "probe structure" in _answer(task)["tampered"]


def test_the_encoder_and_the_runtime_are_watched(monkeypatch):
    snap = Snapshot.of_environment()
    assert snap.changed() == ""
    torch.brand_new_name = 1  # an added name (a submodule imported) is not tampering
    try:
        assert snap.changed() == ""
    finally:
        del torch.brand_new_name
    monkeypatch.setattr(codec, "encode", lambda message: b"{}\n")
    assert snap.changed() == "autograder.sandbox.codec.encode"
    monkeypatch.undo()
    monkeypatch.setattr(runtime.TaskRuntime, "call", lambda *args: b"{}\n")
    assert "TaskRuntime.call" in snap.changed()
    monkeypatch.undo()
    snap2 = Snapshot.of_environment()
    monkeypatch.setattr(codec.encode, "__code__", (lambda message: b"").__code__)
    assert "codec.encode (its code" in snap2.changed()


class _EqualToAll:
    """A forger's stand-in that says it equals anything: only identity may judge it."""

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


OTHER_CODE = (lambda mod, n=1, *, k=2: 0).__code__


def _watched(names: dict) -> Snapshot:
    snap = Snapshot()
    snap.add_probes({"probe": names["probe"]}, names)
    return snap


def test_every_kind_of_change_is_noticed_by_the_fast_check():
    def probe(mod, n=1, *, k=2):
        return n

    def fresh() -> dict:
        return {"probe": probe, "value": object(), "other": 3.5}

    names = fresh()
    snap = _watched(names)
    assert snap.changed() == ""
    names["added"] = 1  # added names are allowed
    assert snap.changed() == ""
    changes = [
        ("probes.value", lambda ns: ns.__setitem__("value", _EqualToAll())),
        ("probes.other", lambda ns: ns.pop("other")),
        ("(its code or defaults)", lambda ns: setattr(probe, "__defaults__", (5,))),
        ("(its defaults)", lambda ns: setattr(probe, "__kwdefaults__", {"k": 3})),
        ("(its code or defaults)", lambda ns: setattr(probe, "__code__", OTHER_CODE)),
    ]
    for what, change in changes:
        code, defaults, kwdefaults = probe.__code__, probe.__defaults__, probe.__kwdefaults__
        names = fresh()
        snap = _watched(names)
        change(names)
        try:
            assert what in snap.changed(), what
        finally:
            probe.__code__, probe.__defaults__, probe.__kwdefaults__ = code, defaults, kwdefaults
    names = fresh()
    snap = _watched(names)
    snap.probes["probe"] = _EqualToAll()
    assert snap.changed() == "probe probe"
    snap.probes.clear()
    assert snap.changed() == "the table of probes"


def test_a_kept_snapshot_is_reused_only_while_a_fresh_one_would_be_the_same(monkeypatch):
    from autograder.sandbox.inside import integrity

    monkeypatch.setattr(integrity, "_KEPT", [])
    integrity.keep_for_forks()
    kept = integrity._KEPT[0]
    copied = Snapshot.of_environment()
    assert copied.watched is not kept.watched
    # A copy of the kept one (its very entries), not a fresh walk that happens to be equal: a class's
    # vars() is a new view at each call, which once made every fork walk the 3,500 names again.
    assert len(copied.watched) == len(kept.watched)
    assert all(mine is theirs for mine, theirs in zip(copied.watched, kept.watched, strict=True))
    assert any(isinstance(owner, type) for _, owner, _, _ in kept.watched)
    torch.brand_new_name = 1  # a fresh snapshot would watch it: so one is taken
    try:
        fresh = Snapshot.of_environment()
        assert any(key == "brand_new_name" for name, _, _, items in fresh.watched if name == "torch"
                   for key, _ in items)
    finally:
        del torch.brand_new_name
    monkeypatch.setattr(codec, "encode", lambda message: b"{}\n")  # changed before this task's snapshot
    assert kept.changed() == "autograder.sandbox.codec.encode"
    assert Snapshot.of_environment().changed() == ""  # its own baseline, as without a kept one


def test_an_unchanged_namespace_is_not_compared_again_and_a_changed_one_is(monkeypatch):
    from autograder.sandbox.inside import integrity

    assert integrity._version is not None  # the kit's worker runs CPython 3.11: tags are read there
    snap = Snapshot.of_environment()
    assert snap.changed() == ""
    classes = [i for i, (_, owner, _, _) in enumerate(snap.watched) if isinstance(owner, type)]
    assert classes and all(snap.dicts[i] is not None for i in classes)  # a class's dict, behind its view
    looked: list[int] = []

    def counting(index: int, getter):
        return lambda space: (looked.append(index), getter(space))[1]

    snap.fast = [(counting(i, g), space, values) for i, (g, space, values) in enumerate(snap.fast)]
    assert snap.changed() == "" and looked == []  # nothing changed: no namespace is walked
    module = [name for name, *_ in snap.watched].index("torch.nn")
    torch.nn.brand_new_name = 1  # an added name: walked once, then known unchanged again
    try:
        assert snap.changed() == "" and looked == [module]
        looked.clear()
        assert snap.changed() == "" and looked == []
    finally:
        del torch.nn.brand_new_name
    original = torch.nn.Module.train
    monkeypatch.setattr(torch.nn.Module, "train", lambda self, mode=True: self)
    assert snap.changed() == "torch.nn.Module.train"
    monkeypatch.setattr(torch.nn.Module, "train", original)
    monkeypatch.setattr(torch.nn, "Linear", torch.nn.Bilinear)
    assert snap.changed() == "torch.nn.Linear"
