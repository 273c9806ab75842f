"""Hidden checks of task checkpoint: shape mismatch, unsafe files refused, load_partial's key lists."""

from __future__ import annotations

import numpy as np

from autograder.checks import fail, points

from ..public.test_checkpoint import ckpt_state, in_chain
from ..support import call, fail_if_not_implemented, raised_name


@points(2)
def test_shape_mismatch_raises(worker, params):
    """load_weights into a model whose head has a different width raises RuntimeError"""
    cp = params.checkpoint
    obs = call(worker, "checkpoint_mismatch", "load_weights(wider_model, path)",
               state=ckpt_state(params), kind="wide", renamed=cp.renamed, wide_out=cp.wide_out)
    raised = obs["raised"]
    fail_if_not_implemented(raised, "load_weights(model, path)")
    if raised is None:
        fail("checkpoint.shape_no_error", got=cp.wide_out, want=cp.out_features)
    if not in_chain(raised, "RuntimeError"):
        fail("checkpoint.shape_wrong_error", raised=raised_name(raised))


def _refuse(worker, params, kind: str):
    obs = call(worker, "checkpoint_refuse", "load_weights(model, path)",
               state=ckpt_state(params), kind=kind)
    fail_if_not_implemented(obs["raised"], "load_weights(model, path)")
    return obs


@points(2)
def test_refuses_whole_module(worker, params):
    """load_weights refuses a file holding a whole pickled module (UnpicklingError from weights_only=True)"""
    obs = _refuse(worker, params, "whole")
    if obs["raised"] is None:
        fail("checkpoint.whole_accepted")
    if not in_chain(obs["raised"], "UnpicklingError"):
        fail("checkpoint.whole_wrong_error", raised=raised_name(obs["raised"]))


@points(2)
def test_refuses_malicious_pickle(worker, params):
    """load_weights refuses a pickle carrying code, and the code never runs"""
    obs = _refuse(worker, params, "malicious")
    if obs["marker"]:
        fail("checkpoint.payload_ran", raised=raised_name(obs["raised"]))
    if obs["raised"] is None:
        fail("checkpoint.malicious_accepted")
    if not in_chain(obs["raised"], "UnpicklingError"):
        fail("checkpoint.malicious_wrong_error", raised=raised_name(obs["raised"]))


@points(2)
def test_load_partial(worker, params):
    """load_partial loads the matching keys and returns exactly (missing_keys, unexpected_keys)"""
    cp = params.checkpoint
    state = ckpt_state(params)
    obs = call(worker, "checkpoint_partial", "load_partial(renamed_model, path)",
               state=state, renamed=cp.renamed)
    want_missing = [f"{cp.renamed}.weight", f"{cp.renamed}.bias"]
    want_unexpected = ["head.weight", "head.bias"]
    if obs["parts"] is None:
        fail("checkpoint.partial_type", got_type=obs["type"])
    lists = [part["items"] for part in obs["parts"]]
    if any(items is None or None in items for items in lists):
        fail("checkpoint.partial_type",
             got_type=f"{obs['type']} of {', '.join(p['type'] for p in obs['parts'])}")
    missing, unexpected = lists
    if sorted(missing) != sorted(want_missing) or sorted(unexpected) != sorted(want_unexpected):
        fail("checkpoint.partial_lists", missing=missing, unexpected=unexpected,
             want_missing=want_missing, want_unexpected=want_unexpected)
    after, before = obs["after"], obs["before"]
    not_loaded = [k for k in state if not k.startswith("head.")
                  and not np.array_equal(after[k]["values"], state[k])]
    if not_loaded:
        fail("checkpoint.partial_not_applied", names=not_loaded)
    changed = [k for k in want_missing if not np.array_equal(after[k]["values"], before[k]["values"])]
    if changed:
        fail("checkpoint.partial_changed", names=changed)
