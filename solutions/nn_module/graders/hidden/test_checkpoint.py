"""Hidden checks of task checkpoint: shape mismatch, unsafe files refused, load_partial's key lists."""

from __future__ import annotations

import numpy as np

from autograder.graders import RaisesCase, fail, mix_valid, points

from ..public.test_checkpoint import ckpt_state
from ..support import call, fail_if_not_implemented, raised_name, require_raised

# Each raises check judges refusal alone: the calls that must raise, and among them, at places only
# the grader knows, calls on a file that fits, which must only run (what they load is round_trip's
# business): a loader that raises for every file, or replays another grading's answers, earns nothing.


def _mixed(gen: np.random.Generator, bad: list[RaisesCase], fits: RaisesCase, n: int) -> list[RaisesCase]:
    """`bad` repeated to `n` calls, with as many fitting calls again inserted among them by `gen`."""
    cases = [bad[k % len(bad)] for k in range(n)]
    return mix_valid(gen, cases, [fits] * n)


@points(2)
def test_shape_mismatch_raises(worker, params, challenge):
    """load_weights into a model whose head has a different width raises RuntimeError

    Heads of several widths, and among them, at hidden places, heads that fit, which must load
    without raising (their values are round_trip's business)."""
    cp = params.checkpoint
    gen = challenge.rng("widths")
    wrong = [w for w in range(1, cp.wide_out + 3) if w != cp.out_features]
    bad = [RaisesCase(int(w), True, "load_weights(wider_model, path)") for w in gen.permutation(wrong)]
    cases = _mixed(gen, bad, RaisesCase(cp.out_features, False, "load_weights(model, path)"), 6)
    raised = call(worker, "checkpoint_widths", "load_weights(model, path)", state=ckpt_state(params),
                  widths=[case.inputs for case in cases])
    for case, obs in zip(cases, raised, strict=True):
        fail_if_not_implemented(obs, case.what)
        if not case.must_raise:
            if obs is not None:
                fail("checkpoint.good_load_raised", call=case.what, raised=raised_name(obs))
            continue
        if obs is None:
            fail("checkpoint.shape_no_error", got=case.inputs, want=cp.out_features)
        require_raised(obs, "RuntimeError", case.what, "checkpoint.shape_wrong_error")


LOADERS = ("load_weights", "load_partial")
UNSAFE = {"whole": ("checkpoint.whole_accepted", "checkpoint.whole_wrong_error"),
          "malicious": ("checkpoint.malicious_accepted", "checkpoint.malicious_wrong_error")}


@points(4)
def test_refuses_unsafe_files(worker, params, challenge):
    """load_weights and load_partial refuse a pickled module and a pickle carrying code (UnpicklingError)

    weights_only=True refuses both, and the code never runs. Among the unsafe files, at hidden
    places, files that fit, which must load without raising (their values are round_trip's business)."""
    for loader in LOADERS:
        gen = challenge.rng("unsafe", loader)
        what = f"{loader}(model, path)"
        bad = [RaisesCase(str(kind), True, what) for kind in gen.permutation(list(UNSAFE))]
        cases = _mixed(gen, bad, RaisesCase("fits", False, what), 4)
        answers = call(worker, "checkpoint_refuse", what, state=ckpt_state(params), loader=loader,
                       kinds=[case.inputs for case in cases])
        for case, obs in zip(cases, answers, strict=True):
            fail_if_not_implemented(obs["raised"], what)
            if not case.must_raise:
                if obs["raised"] is not None:
                    fail("checkpoint.good_load_raised", call=what, raised=raised_name(obs["raised"]))
                continue
            if obs["marker"]:
                fail("checkpoint.payload_ran", call=what, raised=raised_name(obs["raised"]))
            accepted, wrong_error = UNSAFE[case.inputs]
            if obs["raised"] is None:
                fail(accepted, call=what)
            require_raised(obs["raised"], "UnpicklingError", what, wrong_error, call=what)


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
