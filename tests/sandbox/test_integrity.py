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
