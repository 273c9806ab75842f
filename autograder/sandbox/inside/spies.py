"""Inside the sandbox: spies a probe wraps around a student call to see how the result was computed.

    with backward_runs() as spy:      # did a backward pass run in autograd's engine?
        value = mod.autograd_grad(X, Y, w)
    answer["backward_runs"] = spy.runs

A spy only counts; the check in the grading process decides what the counts mean. The worker
imports this module before any submission, and the integrity snapshot watches it, so a submission
cannot replace a spy with one that reports what the check wants to see.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch.autograd.variable import Variable
from torch.optim.optimizer import register_optimizer_step_post_hook
from torch.overrides import TorchFunctionMode


class BackwardSpy:
    """Stands in for autograd's engine and counts the backward passes that run through it.

    loss.backward(), torch.autograd.backward and torch.autograd.grad all end in
    Variable._execution_engine.run_backward, so whichever the student uses is counted.
    """

    def __init__(self, engine: Any) -> None:
        self._engine = engine
        self.runs = 0

    def run_backward(self, *args: Any, **kwargs: Any) -> Any:
        self.runs += 1
        return self._engine.run_backward(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)


@contextmanager
def backward_runs() -> Iterator[BackwardSpy]:
    """Count backward passes (every way of starting one) while the block runs."""
    engine = Variable._execution_engine
    spy = BackwardSpy(engine)
    Variable._execution_engine = spy  # type: ignore[assignment]
    try:
        yield spy
    finally:
        Variable._execution_engine = engine


class GraphSpy(TorchFunctionMode):
    """Counts the tensors created with a grad_fn (autograd graph nodes) while it is active."""

    def __init__(self) -> None:
        super().__init__()
        self.nodes = 0

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        for item in out if isinstance(out, tuple | list) else (out,):
            if isinstance(item, torch.Tensor) and item.grad_fn is not None:
                self.nodes += 1
        return out


def graph_nodes() -> GraphSpy:
    """`with graph_nodes() as spy:` counts graph nodes made in the block (0: nothing was recorded)."""
    return GraphSpy()


class StepSpy:
    """Counts optimizer steps, and which optimizer classes took them."""

    def __init__(self) -> None:
        self.steps = 0
        self.optimizers: list[str] = []

    def after_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        self.steps += 1
        name = type(optimizer).__name__
        if name not in self.optimizers:
            self.optimizers.append(name)


@contextmanager
def optimizer_steps() -> Iterator[StepSpy]:
    """Count torch.optim optimizer.step() calls (any optimizer) while the block runs."""
    spy = StepSpy()
    handle = register_optimizer_step_post_hook(spy.after_step)
    try:
        yield spy
    finally:
        handle.remove()
