"""Hidden checks of task checkpoint: shape mismatch, unsafe files refused, load_partial's key lists."""

from __future__ import annotations

import numpy as np

from autograder.graders import fail, points

from ..public.test_checkpoint import ckpt_state, good_load, judge_good_load
from ..support import call, fail_if_not_implemented, raised_name, require_raised


@points(2)
def test_shape_mismatch_raises(worker, params, challenge):
    """load_weights into a model whose head has a different width raises RuntimeError

    And the same load_weights loads a matching file of hidden weights."""
    cp = params.checkpoint
    good = good_load(challenge, params)
    obs = call(worker, "checkpoint_mismatch", "load_weights(wider_model, path)",
               state=ckpt_state(params), kind="wide", renamed=cp.renamed, wide_out=cp.wide_out, good=good)
    raised = obs["raised"]
    fail_if_not_implemented(raised, "load_weights(model, path)")
    if raised is None:
        fail("checkpoint.shape_no_error", got=cp.wide_out, want=cp.out_features)
    require_raised(raised, "RuntimeError", "load_weights(wider_model, path)", "checkpoint.shape_wrong_error")
    judge_good_load(obs["good"], good, "load_weights(model, path)")


LOADERS = ("load_weights", "load_partial")


def _refuse(worker, params, challenge, kind: str, loader: str):
    """The unsafe file given to `loader`, and for load_weights (judged last, by the check) a matching
    file of hidden weights given to it too: a loader that refuses everything earns nothing (one such
    file per check is enough: each costs a save and a load; load_partial's own check loads files)."""
    what = f"{loader}(model, path)"
    good = good_load(challenge, params, loader) if loader == "load_weights" else None
    obs = call(worker, "checkpoint_refuse", what, state=ckpt_state(params), kind=kind, loader=loader,
               good=good)
    fail_if_not_implemented(obs["raised"], what)
    return obs, what, good


@points(2)
def test_refuses_whole_module(worker, params, challenge):
    """load_weights and load_partial refuse a whole pickled module (UnpicklingError from weights_only=True)

    And load_weights loads a matching file of hidden weights."""
    for loader in LOADERS:
        obs, what, good = _refuse(worker, params, challenge, "whole", loader)
        if obs["raised"] is None:
            fail("checkpoint.whole_accepted", call=what)
        require_raised(obs["raised"], "UnpicklingError", what, "checkpoint.whole_wrong_error", call=what)
        if good is not None:
            judge_good_load(obs["good"], good, what)


@points(2)
def test_refuses_malicious_pickle(worker, params, challenge):
    """load_weights and load_partial refuse a pickle carrying code, and the code never runs

    And load_weights loads a matching file of hidden weights."""
    for loader in LOADERS:
        obs, what, good = _refuse(worker, params, challenge, "malicious", loader)
        if obs["marker"]:
            fail("checkpoint.payload_ran", call=what, raised=raised_name(obs["raised"]))
        if obs["raised"] is None:
            fail("checkpoint.malicious_accepted", call=what)
        require_raised(obs["raised"], "UnpicklingError", what, "checkpoint.malicious_wrong_error", call=what)
        if good is not None:
            judge_good_load(obs["good"], good, what)


@points(2)
def test_load_partial(worker, params):
    """load_partial loads the matching keys and returns exactly (missing_keys, unexpected_keys)

    Both for a str path and a pathlib.Path."""
    cp = params.checkpoint
    state = ckpt_state(params)
    obs = call(worker, "checkpoint_partial", "load_partial(renamed_model, path)",
               {"RuntimeError": "checkpoint.partial_raised"}, state=state, renamed=cp.renamed,
               path_types=["str", "pathlib"])
    judge_partial(obs, state, cp.renamed, "a str path")
    other = obs["others"]["pathlib"]
    if other["raised"]:
        fail_if_not_implemented(other["raised"], "load_partial(model, path)")
        fail("checkpoint.partial_pathlike_raised", raised=raised_name(other["raised"]))
    judge_partial(other, state, cp.renamed, "a pathlib.Path")


def judge_partial(obs, state: dict[str, np.ndarray], renamed: str, path: str) -> None:
    want_missing = [f"{renamed}.weight", f"{renamed}.bias"]
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
