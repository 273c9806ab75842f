"""autograder.sandbox.inside.spies: backward passes, graph nodes and optimizer steps are counted."""

from __future__ import annotations

import torch

from autograder.sandbox import codec
from autograder.sandbox.inside.spies import backward_runs, graph_nodes, optimizer_steps


def test_every_way_of_starting_a_backward_pass_is_counted():
    w = torch.tensor(2.0, requires_grad=True)
    with backward_runs() as spy:
        (w * 3).backward()
        torch.autograd.backward(w * 3)
        torch.autograd.grad(w * 3, w)
    assert spy.runs == 3 and w.grad is not None and float(w.grad) == 6.0
    with backward_runs() as none:
        (w.detach() * 3).sum()
    assert none.runs == 0


def test_the_engine_is_restored_after_an_exception():
    engine = torch.autograd.variable.Variable._execution_engine
    try:
        with backward_runs():
            raise ValueError("student code raised")
    except ValueError:
        pass
    assert torch.autograd.variable.Variable._execution_engine is engine


def test_graph_nodes_count_recorded_operations_only():
    w = torch.ones(3, requires_grad=True)
    with graph_nodes() as spy:
        _ = (w * 2).sum()
    assert spy.nodes == 2
    with graph_nodes() as quiet, torch.no_grad():
        _ = (w * 2).sum()
    assert quiet.nodes == 0


def test_optimizer_steps_are_counted_with_their_class():
    w = torch.nn.Parameter(torch.ones(2))
    opt = torch.optim.SGD([w], lr=0.1)
    with optimizer_steps() as spy:
        for _ in range(3):
            opt.zero_grad()
            w.sum().backward()
            opt.step()
    assert spy.steps == 3 and spy.optimizers == ["SGD"]
    opt.step()
    assert spy.steps == 3  # the hook is gone after the block


PROBES = '''
from autograder.sandbox.inside.spies import backward_runs

def grad(mod):
    with backward_runs() as spy:
        mod.grad()
    return spy.runs
'''
HONEST = "import torch\n\ndef grad():\n    (torch.tensor(1.0, requires_grad=True) * 2).backward()\n"
# Replaces the spy before the probes import it, so that it always reports one backward pass.
FORGER = '''
import contextlib
from autograder.sandbox.inside import spies

class _Always:
    runs = 1

@contextlib.contextmanager
def _fake():
    yield _Always()

spies.backward_runs = _fake

def grad():
    return None
'''


def _runtime(tmp_path, source: str):
    from autograder.sandbox.inside.runtime import TaskRuntime

    (tmp_path / "student_grad.py").write_text(source, encoding="utf-8")
    runtime = TaskRuntime(str(tmp_path), "student_grad", PROBES)
    return runtime, runtime.open()


def test_a_probe_reports_the_spy_count(tmp_path):
    runtime, status = _runtime(tmp_path, HONEST)
    assert status == {"imported": True}
    assert codec.decode(runtime.call("grad", {}, seed=0)) == {"value": 1}


def test_a_submission_that_replaces_a_spy_is_caught(tmp_path):
    from autograder.sandbox.inside import spies

    original = spies.backward_runs
    try:
        _, status = _runtime(tmp_path, FORGER)
        assert "tampered" in status and "spies" in status["tampered"], status
    finally:
        spies.backward_runs = original
