"""Probes of task `counting` (inside the sandboxed worker); helpers shared by tasks are in _shared.py."""

# Self-contained: stdlib, numpy, torch and the engine's probe API (autograder.sandbox.inside.observe,
# whose describers make the observations). A probe never judges: it runs the student's code on
# inputs the check sent and reports what it saw, with the exact type name of everything the
# student returned, so that the check (in the grading process) decides. Helpers and classes start
# with "_" so they are not probes.

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import torch
from torch import nn

from autograder.sandbox.inside.observe import exception, scalar, type_name


def _layer(spec):
    kind = spec[0]
    if kind == "linear":
        return nn.Linear(spec[1], spec[2], bias=spec[3])
    if kind == "bn":
        return nn.BatchNorm1d(spec[1])
    if kind == "relu":
        return nn.ReLU()
    if kind == "dropout":
        return nn.Dropout(0.1)
    if kind == "seq":
        return nn.Sequential(*[_layer(s) for s in spec[1]])
    if kind == "dict":
        return nn.ModuleDict(OrderedDict((name, _layer(s)) for name, s in spec[1]))
    raise ValueError(f"unknown layer spec {spec!r}")


def _build_counting_model(spec):
    """A model described by plain data (the grading process builds the very same one)."""
    root = nn.Module()
    for name, layer in spec.get("modules", []):
        root.add_module(name, _layer(layer))
    if spec.get("tie"):
        vocab, dim = spec["tie"]
        root.emb = nn.Embedding(vocab, dim)
        root.out = nn.Linear(dim, vocab)
        root.out.weight = root.emb.weight  # tied: one Parameter, two modules
    if spec.get("root_param"):
        root.scale = nn.Parameter(torch.ones(spec["root_param"]))
    for i, size in enumerate(spec.get("buffers", [])):
        root.register_buffer(f"stat{i}", torch.zeros(size))
    for name, p in root.named_parameters():
        if any(name == f or name.startswith(f + ".") for f in spec.get("frozen", [])):
            p.requires_grad_(False)
    return root


def counting_stack(mod, cases):
    """count_linear_stack on each [sizes, bias] or [sizes, bias, "tuple"] (sizes passed as a tuple);
    bias None: the default (not passed); exceptions are observations here."""
    out = []
    for case in cases:
        sizes, bias = case[0], case[1]
        sizes = tuple(sizes) if case[2:] == ["tuple"] else list(sizes)
        try:
            if bias is None:
                value = mod.count_linear_stack(sizes)
            else:
                value = mod.count_linear_stack(sizes, bias=bias)
        except Exception as exc:
            out.append({"raised": exception(exc), "type": None, "value": None})
            continue
        out.append({"raised": None, **scalar(value)})
    return out


def counting_model(mod, spec):
    model = _build_counting_model(spec)
    total = mod.count_parameters(model)
    trainable = mod.count_parameters(model, trainable_only=True)
    explicit = mod.count_parameters(model, trainable_only=False)
    return {"total": scalar(total), "trainable": scalar(trainable), "explicit": scalar(explicit)}


def counting_per_layer(mod, spec):
    model = _build_counting_model(spec)
    result = mod.per_layer(model)
    obs: dict[str, Any] = {"type": type_name(result), "items": None, "bad": []}
    if type(result) in (dict, OrderedDict):
        items = []
        for key, value in result.items():
            if type(key) is str and type(value) is int:
                items.append([key, value])
            else:
                obs["bad"].append(f"{type_name(key)} -> {type_name(value)}")
        obs["items"] = items
    return obs
