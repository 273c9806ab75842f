"""Public checks of task checkpoint: a plain state_dict file, an exact round trip, strict loading."""

from __future__ import annotations

import numpy as np

from autograder.graders import fail, points

from ..support import call, fail_if_not_implemented, raised_name, require_raised, rng

# state_seed is hidden (challenge.hide_seeds): every file the probes write holds values nobody knows
# in advance. A "raises"/"refuses" answer is the same for any file, though, so each check of a refusal
# mixes files that fit among the bad ones, in an order only the grader knows (mix_valid): the loader
# must refuse exactly the bad ones. What a fitting file loads is round_trip's business, judged there
# alone (one slip, one charge).


def ckpt_state(params) -> dict[str, np.ndarray]:
    """The grader model's state_dict (probes._ckpt_model): Linear, BatchNorm1d (buffers), Linear."""
    return draw_state(rng(params.checkpoint.state_seed), params)


def draw_state(gen: np.random.Generator, params) -> dict[str, np.ndarray]:
    """A state_dict of the grader model drawn from `gen`."""
    cp = params.checkpoint
    i, h, o = cp.in_features, cp.hidden, cp.out_features
    f32 = np.float32
    return {
        "body.weight": gen.normal(0, 0.5, (h, i)).astype(f32),
        "body.bias": gen.normal(0, 0.5, h).astype(f32),
        "norm.weight": gen.uniform(0.5, 1.5, h).astype(f32),
        "norm.bias": gen.normal(0, 0.5, h).astype(f32),
        "norm.running_mean": gen.normal(0, 0.5, h).astype(f32),
        "norm.running_var": gen.uniform(0.5, 2.0, h).astype(f32),
        "norm.num_batches_tracked": np.array(gen.integers(1, 1000), dtype=np.int64),
        "head.weight": gen.normal(0, 0.5, (o, h)).astype(f32),
        "head.bias": gen.normal(0, 0.5, o).astype(f32),
    }


def ckpt_input(params) -> np.ndarray:
    cp = params.checkpoint
    return rng(cp.state_seed + 1).normal(0, 1.0, (cp.batch, cp.in_features)).astype(np.float32)


def same_state(got: dict, want: dict[str, np.ndarray]) -> list[str]:
    """Names whose saved/loaded tensor is not exactly the expected one (type, shape and values)."""
    bad = []
    for name, value in want.items():
        obs = got.get(name)
        if obs is None or obs["type"] != "Tensor" or obs["values"] is None:
            bad.append(name)
        elif obs["values"].shape != value.shape or not np.array_equal(obs["values"], value):
            bad.append(name)
    return bad


def judge_saved(obs: dict, state: dict[str, np.ndarray], path: str) -> None:
    """The file save_weights wrote opens with weights_only=True and holds exactly the state_dict."""
    if not obs["exists"]:
        fail("checkpoint.no_file", path=path)
    if obs["error"]:
        key = "checkpoint.saved_module" if obs["saved_type"] == "Sequential" else "checkpoint.save_unloadable"
        fail(key, saved_type=f"{obs['saved_type']} (written for {path})", error=raised_name(obs["error"]))
    if obs["saved_type"] not in ("OrderedDict", "dict"):
        fail("checkpoint.saved_type", saved_type=f"{obs['saved_type']} (written for {path})")
    if sorted(obs["keys"]) != sorted(state):
        fail("checkpoint.saved_keys", keys=obs["keys"], want=list(state))
    bad = same_state(obs["values"], state)
    if bad:
        fail("checkpoint.saved_values", names=bad)


@points(2)
def test_save_is_state_dict(worker, params):
    """save_weights writes only the state_dict: a dict of tensors that torch.load(weights_only=True) opens

    Both for a str path and a pathlib.Path."""
    state = ckpt_state(params)
    obs = call(worker, "checkpoint_save", "save_weights(model, path)", state=state,
               path_types=["str", "pathlib"])
    judge_saved(obs, state, "a str path")
    other = obs["others"]["pathlib"]
    if other["raised"]:
        fail_if_not_implemented(other["raised"], "save_weights(model, path)")
        fail("checkpoint.save_pathlike_raised", raised=raised_name(other["raised"]))
    judge_saved(other, state, "a pathlib.Path")


@points(2)
def test_round_trip(worker, params):
    """load_weights of a saved state_dict into a fresh model reproduces every tensor and the outputs exactly

    load_weights returns the model; both for a str path and a pathlib.Path. The file is one the
    grader saved (torch.save(model.state_dict(), path)): what save_weights writes is the
    save_is_state_dict check's business."""
    state = ckpt_state(params)
    obs = call(worker, "checkpoint_round_trip", "load_weights(other, path)", state=state,
               x=ckpt_input(params), path_types=["str", "pathlib"])
    judge_round_trip(obs, state, "a str path")
    other = obs["others"]["pathlib"]
    if other["raised"]:
        fail_if_not_implemented(other["raised"], "load_weights(model, path)")
        fail("checkpoint.pathlike_raised", raised=raised_name(other["raised"]))
    judge_round_trip(other, state, "a pathlib.Path")


def judge_round_trip(obs, state: dict[str, np.ndarray], path: str) -> None:
    """load_weights returned the model it loaded into, every tensor and the outputs came back."""
    if not obs["returned_model"]:
        fail("checkpoint.returns_model", got_type=obs["returned_type"], path=path)
    bad = same_state(obs["state"], state)
    if bad:
        fail("checkpoint.round_trip_state", names=bad, path=path)
    got, want = obs["got"]["values"], obs["want"]["values"]
    if got is None or want is None or not np.array_equal(got, want):
        fail("checkpoint.round_trip_outputs", path=path)


def hidden_name(challenge, stem: str) -> str:
    """A layer name nobody knows in advance: `stem` and five hidden letters (out_qkzva)."""
    letters = challenge.rng("name").choice(list("abcdefghijklmnopqrstuvwxyz"), 5)
    return f"{stem}_{''.join(letters)}"


@points(3)
def test_strict_renamed_layer(worker, params, challenge):
    """load_weights into a model with a renamed head raises RuntimeError naming missing/unexpected keys

    The head's new name is hidden: the message torch raises names keys nobody knows in advance."""
    cp = params.checkpoint
    renamed = hidden_name(challenge, cp.renamed)
    obs = call(worker, "checkpoint_mismatch", "load_weights(renamed_model, path)",
               state=ckpt_state(params), kind="renamed", renamed=renamed, wide_out=cp.wide_out)
    raised = obs["raised"]
    fail_if_not_implemented(raised, "load_weights(model, path)")
    missing = [f"{renamed}.weight", f"{renamed}.bias"]
    unexpected = ["head.weight", "head.bias"]
    if raised is None:
        fail("checkpoint.renamed_no_error", missing=missing, unexpected=unexpected)
    require_raised(raised, "RuntimeError", "load_weights(renamed_model, path)",
                   "checkpoint.renamed_wrong_error")
    absent = [k for k in missing + unexpected if k not in raised["message"]]
    if absent:
        fail("checkpoint.renamed_message", raised=raised_name(raised), absent=absent)
