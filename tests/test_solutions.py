"""The reference solutions meet their SPEC (they are what the graders compare against): nn_module's
SPEC.md, then tensors_autograd's SPEC-tensors_autograd.md."""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import pickle
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

ALL_SOLUTIONS = Path(__file__).resolve().parents[1] / "solutions"
SOLUTIONS = ALL_SOLUTIONS / "nn_module"
_counter = itertools.count()


def _load(name: str, assignment: str = "nn_module") -> ModuleType:
    """Import solutions/<assignment>/<name>.py by path, under a name no other test uses."""
    path = ALL_SOLUTIONS / assignment / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_solution_{name}_{next(_counter)}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def sol() -> Callable[[str], ModuleType]:
    cache: dict[str, ModuleType] = {}

    def get(name: str) -> ModuleType:
        if name not in cache:
            cache[name] = _load(name)
        return cache[name]

    return get


DELIVERY_KEYS = [
    "x_mean",
    "x_std",
    "hidden.0.weight",
    "hidden.0.bias",
    "hidden.3.weight",
    "hidden.3.bias",
    "head.weight",
    "head.bias",
]


def _delivery(sol: Callable[[str], ModuleType], seed: int = 0, p_drop: float = 0.1) -> Any:
    torch.manual_seed(seed)
    return sol("delivery").DeliveryMLP(
        torch.tensor([6.0, 3.0, 0.3]), torch.tensor([3.3, 1.4, 0.45]), p_drop=p_drop
    )


# --- data ------------------------------------------------------------------------------------


def test_data(sol: Callable[[str], ModuleType]) -> None:
    data = sol("data")
    X, y = data.make_toy()
    torch.manual_seed(0)
    assert torch.equal(X, torch.randn(100, 3))
    assert torch.equal(y, (X.sum(dim=1) > 0).long())
    Xo, yo = data.make_orders()
    assert Xo.shape == (400, 3) and yo.shape == (400,)
    assert Xo.dtype == torch.float32 and yo.dtype == torch.float32
    d, items, rain = Xo.unbind(1)
    assert 0.5 <= d.min() and d.max() <= 12
    assert set(items.tolist()) == {1.0, 2.0, 3.0, 4.0, 5.0}
    assert set(rain.tolist()) == {0.0, 1.0} and 0.2 < rain.mean() < 0.4
    noise = yo - (20 + 2.5 * d + 6 * items.sqrt() + 8 * rain + 0.05 * d**2)
    assert abs(noise.mean()) < 0.4 and 1.7 < noise.std() < 2.3
    again = data.make_orders()
    assert torch.equal(again[0], Xo) and torch.equal(again[1], yo)
    assert not torch.equal(data.make_orders(seed=1)[0], Xo)


# --- tinynet ---------------------------------------------------------------------------------


def test_tinynet_registration_and_forward(sol: Callable[[str], ModuleType]) -> None:
    net = sol("tinynet").TinyNet(5, 7, 3)
    shapes = {k: tuple(p.shape) for k, p in net.named_parameters()}
    assert shapes == {
        "fc1.weight": (7, 5),
        "fc1.bias": (7,),
        "fc2.weight": (3, 7),
        "fc2.bias": (3,),
    }
    x = torch.randn(4, 5)
    expected = torch.relu(x @ net.fc1.weight.T + net.fc1.bias) @ net.fc2.weight.T + net.fc2.bias
    torch.testing.assert_close(net(x), expected)


def test_tinynet_trains_on_toy_data(sol: Callable[[str], ModuleType]) -> None:
    tinynet = sol("tinynet")
    X, y = sol("data").make_toy()
    torch.manual_seed(0)
    model = tinynet.TinyNet(3, 8, 2)
    calls = []
    model.register_forward_hook(lambda *_: calls.append(1))
    losses = tinynet.train_tinynet(model, X, y, epochs=100, lr=0.05)
    assert len(losses) == 100 and len(calls) == 100
    assert all(type(loss) is float for loss in losses)
    assert losses[-1] < losses[0] / 5
    with torch.no_grad():
        accuracy = (model(X).argmax(dim=1) == y).float().mean().item()
    assert accuracy >= 0.9
    assert len(tinynet.train_tinynet(model, X, y, epochs=3)) == 3


# --- delivery --------------------------------------------------------------------------------


def test_delivery_structure(sol: Callable[[str], ModuleType]) -> None:
    model = _delivery(sol)
    assert list(model.state_dict()) == DELIVERY_KEYS
    assert sum(p.numel() for p in model.parameters()) == 209
    params = dict(model.named_parameters())
    assert "x_mean" not in params and "x_std" not in params
    assert set(dict(model.named_buffers())) == {"x_mean", "x_std"}
    assert tuple(params["hidden.0.weight"].shape) == (16, 3)
    assert tuple(params["hidden.3.weight"].shape) == (8, 16)
    assert tuple(params["head.weight"].shape) == (1, 8)
    model.double()
    assert model.x_mean.dtype == torch.float64 and model.x_std.dtype == torch.float64
    assert all(p.dtype == torch.float64 for p in model.parameters())


def test_delivery_forward_and_predict(sol: Callable[[str], ModuleType]) -> None:
    model = _delivery(sol).eval()
    x = torch.randn(10, 3) * 3 + 5
    z = (x - model.x_mean) / model.x_std
    h = model.hidden
    expected = model.head(h[4](h[3](h[1](h[0](z))))).squeeze(-1)
    torch.testing.assert_close(model(x), expected)
    assert model(x[:1]).shape == (1,)

    model.train()
    first = sol("delivery").predict(model, x)
    assert not model.training
    assert first.shape == (10,) and not first.requires_grad and first.grad_fn is None
    assert torch.equal(first, sol("delivery").predict(model, x))

    model.train()
    torch.manual_seed(1)
    big = torch.randn(64, 3)
    assert not torch.equal(model(big), model(big))  # dropout is active in train mode


# --- counting --------------------------------------------------------------------------------


def test_count_linear_stack(sol: Callable[[str], ModuleType]) -> None:
    count = sol("counting").count_linear_stack
    assert count([3, 16, 8, 1]) == 209
    assert count([784, 256, 128, 10]) == 235146
    assert count([784, 256, 128, 10], bias=False) == 234752
    assert count((1024, 64, 1024)) == 1024 * 64 + 64 + 64 * 1024 + 1024
    for sizes in ([5, 3, 2], [1, 1], [7, 9, 4, 4, 1]):
        stack = nn.Sequential(*(nn.Linear(a, b) for a, b in itertools.pairwise(sizes)))
        assert count(sizes) == sum(p.numel() for p in stack.parameters())
    for bad in ([], [3], [3, 0, 1], [3, -2], [0, 4]):
        with pytest.raises(ValueError):
            count(bad)


def test_count_parameters_tied_frozen_buffers(sol: Callable[[str], ModuleType]) -> None:
    counting = sol("counting")
    tied = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))
    tied[2].weight = tied[0].weight
    assert (
        counting.count_parameters(tied) == sum(p.numel() for p in tied.parameters()) == 16 + 4 + 4
    )

    frozen = nn.Sequential(nn.Linear(3, 16), nn.BatchNorm1d(16), nn.Linear(16, 1))
    for p in frozen[0].parameters():
        p.requires_grad_(False)
    assert counting.count_parameters(frozen) == 64 + 32 + 17
    trainable = sum(p.numel() for p in frozen.parameters() if p.requires_grad)
    assert counting.count_parameters(frozen, trainable_only=True) == trainable == 32 + 17
    assert counting.count_parameters(_delivery(sol)) == 209


def test_per_layer(sol: Callable[[str], ModuleType]) -> None:
    per_layer = sol("counting").per_layer
    assert per_layer(_delivery(sol)) == {"hidden.0": 64, "hidden.3": 136, "head": 9}

    class Scaled(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.scale = nn.Parameter(torch.ones(2))
            self.body = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 2, bias=False))

    assert per_layer(Scaled()) == {"": 2, "body.0": 8, "body.2": 4}
    assert per_layer(nn.ReLU()) == {}


# --- containers ------------------------------------------------------------------------------


def test_fixed_mlp(sol: Callable[[str], ModuleType]) -> None:
    torch.manual_seed(0)
    model = sol("containers").FixedMLP([3, 16, 8, 1])
    keys = [f"layers.{i}.{kind}" for i in range(3) for kind in ("weight", "bias")]
    assert list(model.state_dict()) == keys
    assert sum(p.numel() for p in model.parameters()) == 209
    torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(6, 3)
    with torch.no_grad():
        model.layers[2].bias.fill_(-3.0)  # negative outputs: no ReLU may follow the last layer
    h = x
    for i, layer in enumerate(model.layers):
        h = layer(h) if i == 2 else torch.relu(layer(h))
    torch.testing.assert_close(model(x), h)
    assert (model(x) < 0).any()
    model.double()
    assert all(p.dtype == torch.float64 for p in model.parameters())


def test_two_head(sol: Callable[[str], ModuleType]) -> None:
    model = sol("containers").TwoHead()
    assert sum(p.numel() for p in model.parameters()) == 115
    keys = list(model.state_dict())
    assert {"heads.time.weight", "heads.time.bias", "heads.late.weight"} <= set(keys)
    out = model(torch.randn(5, 3))
    assert set(out) == {"time", "late"}
    assert out["time"].shape == (5, 1) and out["late"].shape == (5, 2)
    features = model.body(torch.ones(2, 3))
    torch.testing.assert_close(model(torch.ones(2, 3))["late"], model.heads["late"](features))


# --- checkpoint ------------------------------------------------------------------------------


class _Renamed(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("x_mean", torch.zeros(3))
        self.register_buffer("x_std", torch.ones(3))
        self.hidden = nn.Sequential(
            nn.Linear(3, 16), nn.ReLU(), nn.Dropout(0.1), nn.Linear(16, 8), nn.ReLU()
        )
        self.out = nn.Linear(8, 1)


class _Payload:
    """A pickle that writes a file when it is opened."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, ...]:
        return (Path.write_text, (self.marker, "payload ran"))


def test_checkpoint_round_trip(sol: Callable[[str], ModuleType], tmp_path: Path) -> None:
    ckpt = sol("checkpoint")
    model = _delivery(sol, seed=1).eval()
    path = tmp_path / "w.pt"
    assert ckpt.save_weights(model, path) is None
    saved = torch.load(path, weights_only=True)
    assert type(saved) is not nn.Module and list(saved) == DELIVERY_KEYS
    fresh = _delivery(sol, seed=2).eval()
    x = torch.randn(7, 3)
    assert not torch.equal(fresh(x), model(x))
    assert ckpt.load_weights(fresh, path) is fresh
    assert torch.equal(fresh(x), model(x))


def test_checkpoint_strict_errors(sol: Callable[[str], ModuleType], tmp_path: Path) -> None:
    ckpt = sol("checkpoint")
    path = tmp_path / "w.pt"
    ckpt.save_weights(_delivery(sol), path)
    with pytest.raises(RuntimeError) as info:
        ckpt.load_weights(_Renamed(), path)
    assert "out.weight" in str(info.value) and "head.weight" in str(info.value)
    wide = _delivery(sol)
    wide.head = nn.Linear(8, 2)
    with pytest.raises(RuntimeError, match="size mismatch"):
        ckpt.load_weights(wide, path)


def test_checkpoint_refuses_pickles(sol: Callable[[str], ModuleType], tmp_path: Path) -> None:
    ckpt = sol("checkpoint")
    whole = tmp_path / "whole.pt"
    torch.save(nn.Sequential(nn.Linear(3, 16), nn.ReLU()), whole)  # a whole module, not weights
    with pytest.raises(pickle.UnpicklingError):
        ckpt.load_weights(nn.Sequential(nn.Linear(3, 16), nn.ReLU()), whole)

    marker = tmp_path / "pwned.txt"
    evil = tmp_path / "evil.pt"
    torch.save({"head.weight": _Payload(marker)}, evil)
    assert not marker.exists()
    for load in (ckpt.load_weights, ckpt.load_partial):
        with pytest.raises(pickle.UnpicklingError):
            load(_delivery(sol), evil)
    assert not marker.exists()


def test_load_partial(sol: Callable[[str], ModuleType], tmp_path: Path) -> None:
    ckpt = sol("checkpoint")
    source = _delivery(sol, seed=3)
    path = tmp_path / "w.pt"
    ckpt.save_weights(source, path)
    target: Any = _Renamed()
    missing, unexpected = ckpt.load_partial(target, path)
    assert type(missing) is list and type(unexpected) is list
    assert missing == ["out.weight", "out.bias"]
    assert unexpected == ["head.weight", "head.bias"]
    assert torch.equal(target.hidden[3].weight, source.hidden[3].weight)
    assert ckpt.load_partial(_delivery(sol), path) == ([], [])


# --- dropout ---------------------------------------------------------------------------------


def test_dropout_statistics(sol: Callable[[str], ModuleType]) -> None:
    Dropout = sol("dropout").Dropout
    h = np.full((10_000, 16), 2.0)
    before = h.copy()
    for p in (0.1, 0.5, 0.8):
        drop = Dropout(p, np.random.default_rng(42))
        assert drop.training is True
        out = drop(h)
        assert out.shape == h.shape
        zero = out == 0
        assert abs(zero.mean() - p) < 0.01
        assert np.array_equal(out[~zero], np.full((~zero).sum(), 2.0) / (1 - p))
        assert abs(out.mean() - 2.0) < 0.05
        assert not np.array_equal(drop(h) == 0, zero)  # a new mask on every call
    assert np.array_equal(h, before)

    a = Dropout(0.3, np.random.default_rng(7))(h[:50])
    b = Dropout(0.3, np.random.default_rng(7))(h[:50])
    assert np.array_equal(a, b)


def test_dropout_modes_and_edges(sol: Callable[[str], ModuleType]) -> None:
    Dropout = sol("dropout").Dropout
    rng = np.random.default_rng(0)
    drop = Dropout(0.5, rng)
    assert drop.eval() is drop and drop.training is False
    h = np.random.default_rng(1).normal(size=(3, 4))
    out = drop(h)
    assert np.array_equal(out, h)
    out[0, 0] = 99.0
    assert h[0, 0] != 99.0
    assert drop.train() is drop and drop.training is True
    assert np.array_equal(Dropout(0.0, rng)(h), h)
    ones = Dropout(1.0, rng)(np.ones((5, 5)))
    assert np.array_equal(ones, np.zeros((5, 5))) and not np.isnan(ones).any()
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError):
            Dropout(bad, rng)


# --- numpy_forward ---------------------------------------------------------------------------


def test_linear(sol: Callable[[str], ModuleType]) -> None:
    linear = sol("numpy_forward").linear
    rng = np.random.default_rng(0)
    for n_in, n_out in ((4, 4), (3, 5), (6, 2)):
        layer = nn.Linear(n_in, n_out).double()
        x = rng.normal(size=(7, n_in))
        expected = layer(torch.from_numpy(x)).detach().numpy()
        W, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
        np.testing.assert_allclose(linear(x, W, b), expected, rtol=0, atol=1e-12)


def test_delivery_forward_matches_torch(sol: Callable[[str], ModuleType]) -> None:
    forward = sol("numpy_forward").delivery_forward
    rng = np.random.default_rng(0)
    for seed, n in ((0, 1), (1, 5), (2, 200)):
        model = _delivery(sol, seed=seed).double().eval()
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(torch.from_numpy(rng.normal(size=tuple(p.shape))))
        state = {k: v.numpy() for k, v in model.state_dict().items()}
        x = rng.normal(loc=5, scale=3, size=(n, 3))
        with torch.no_grad():
            expected = model(torch.from_numpy(x)).numpy()
        got = forward(state, x)
        assert got.shape == (n,) and got.dtype == np.float64
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("variant", ["reference", "sgd", "no_zero_grad"])
def test_written_out_optimizer_is_torch_optim(sol: Callable[[str], ModuleType], variant: str) -> None:
    """The grading process trains the reference without torch.optim: its losses are torch's, bit for bit."""
    from autograder.config import load_kit
    from autograder.grading.course import load_graders

    graders = load_graders(load_kit(SOLUTIONS.parents[1]).assignment("nn_module"))
    hidden = importlib.import_module(f"{graders.package}.hidden.test_tinynet")
    tinynet = sol("tinynet")
    X, y = sol("data").make_toy()

    def fresh() -> nn.Module:
        torch.manual_seed(3)
        return tinynet.TinyNet(3, 8, 2)

    written_out = hidden.train_as_lesson(fresh(), X, y, 25, 0.05, variant)
    model = fresh()
    if variant == "reference":
        expected = tinynet.train_tinynet(model, X, y, 25, 0.05)
    else:
        optimizer = (torch.optim.SGD if variant == "sgd" else torch.optim.Adam)(model.parameters(), lr=0.05)
        expected = []
        for _ in range(25):
            if variant != "no_zero_grad":
                optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(X), y)
            loss.backward()
            optimizer.step()
            expected.append(loss.item())
    assert list(written_out) == list(expected)


# === tensors_autograd ========================================================================


@pytest.fixture(scope="module")
def ta() -> Callable[[str], ModuleType]:
    cache: dict[str, ModuleType] = {}

    def get(name: str) -> ModuleType:
        if name not in cache:
            cache[name] = _load(name, "tensors_autograd")
        return cache[name]

    return get


def test_ta_data(ta: Callable[[str], ModuleType]) -> None:
    data = ta("data")
    X, Y = data.make_line()
    assert X.dtype == Y.dtype == torch.float32
    assert X.tolist() == [1.0, 2.0, 3.0, 4.0] and torch.equal(Y, 2 * X)
    assert data.make_line(6)[0].tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    Xt, yt = data.make_toy()
    torch.manual_seed(0)
    assert torch.equal(Xt, torch.randn(100, 3)) and torch.equal(yt, (Xt.sum(dim=1) > 0).long())
    net = data.TinyNet(3, 8, 2)
    assert [n for n, _ in net.named_parameters()] == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert net(torch.randn(5, 3)).shape == (5, 2)


def test_ta_tensors(ta: Callable[[str], ModuleType]) -> None:
    tensors = ta("tensors")
    for arr in (np.arange(6, dtype=np.float64).reshape(2, 3), np.arange(4, dtype=np.int64)):
        t = tensors.share_numpy(arr)
        assert t.dtype == torch.from_numpy(arr).dtype and tuple(t.shape) == arr.shape
        arr.flat[0] = 42
        assert t.reshape(-1)[0].item() == 42
        t.reshape(-1)[1] = 7
        assert arr.flat[1] == 7
    leaf = torch.randn(3, dtype=torch.float64, requires_grad=True)
    for t in (leaf, leaf * 2, torch.tensor([True, False]), torch.arange(3)):
        out = tensors.to_numpy(t)
        assert type(out) is np.ndarray and out.dtype == t.detach().numpy().dtype
        assert np.array_equal(out, t.detach().numpy())
    assert leaf.requires_grad and leaf.is_leaf
    a, b = torch.randn(1, 4), torch.randn(1, 4)
    assert tensors.row_dots(a, b).shape == (1,)
    a, b = torch.randn(7, 3), torch.randn(7, 3)
    torch.testing.assert_close(tensors.row_dots(a, b), torch.stack([a[i] @ b[i] for i in range(7)]))


def test_ta_autograd(ta: Callable[[str], ModuleType]) -> None:
    autograd = ta("autograd")
    X, Y = ta("data").make_line()
    assert autograd.autograd_grad(X, Y, 0.0) == -30.0
    assert autograd.manual_grad(X.numpy(), Y.numpy(), 0.0) == -30.0
    rng = np.random.default_rng(0)
    Xn, Yn = rng.normal(size=9), rng.normal(size=9)
    want = float(np.mean(2 * (0.7 * Xn - Yn) * Xn))
    got = autograd.autograd_grad(torch.from_numpy(Xn), torch.from_numpy(Yn), 0.7)
    assert type(got) is float and abs(got - want) < 1e-12
    assert got == autograd.autograd_grad(torch.from_numpy(Xn), torch.from_numpy(Yn), 0.7)
    manual = autograd.manual_grad(Xn, Yn, 0.7)
    assert type(manual) is float and abs(manual - want) < 1e-12


def test_ta_descent(ta: Callable[[str], ModuleType]) -> None:
    descent = ta("descent")
    X, Y = ta("data").make_line()
    w, losses = descent.fit_line(X, Y)
    assert type(w) is float and abs(w - 2.0) < 1e-3
    assert len(losses) == 100 and all(type(loss) is float for loss in losses)
    assert losses[0] == float(((0 * X - Y) ** 2).mean()) and losses[-1] < losses[0]
    assert len(descent.fit_line(X, Y, lr=0.001, steps=3)[1]) == 3

    torch.manual_seed(0)
    ours = [nn.Parameter(torch.randn(3, 2)), torch.randn(4, requires_grad=True), nn.Parameter(torch.randn(2))]
    theirs = [p.detach().clone().requires_grad_(True) for p in ours]
    for mine, other in zip(ours[:2], theirs[:2], strict=True):
        mine.grad = torch.randn_like(mine)
        other.grad = mine.grad.clone()
    assert descent.sgd_step(ours, 0.1) is None
    torch.optim.SGD(theirs, lr=0.1).step()
    for mine, other in zip(ours, theirs, strict=True):
        torch.testing.assert_close(mine.detach(), other.detach(), rtol=0, atol=1e-7)
        assert mine.is_leaf and mine.requires_grad and mine.grad_fn is None


def test_ta_device(ta: Callable[[str], ModuleType], monkeypatch: pytest.MonkeyPatch) -> None:
    device = ta("device")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert torch.device(device.pick_device()).type == "cuda"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert torch.device(device.pick_device()).type == "cpu"
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    X, y = torch.randn(5, 3, dtype=torch.float64), torch.arange(5)
    m, Xm, ym = device.to_device(model, X, y, "meta")
    assert all(t.device.type == "meta" for t in [*m.parameters(), *m.buffers(), Xm, ym])
    assert Xm.dtype == torch.float64 and ym.dtype == torch.int64 and Xm.shape == X.shape


def test_ta_training(ta: Callable[[str], ModuleType]) -> None:
    training, data = ta("training"), ta("data")
    X, y = data.make_toy()
    torch.manual_seed(0)
    model = data.TinyNet(3, 8, 2)
    losses = training.train(model, X, y, 30, 0.05)
    assert len(losses) == 30 and all(type(loss) is float for loss in losses) and losses[-1] < losses[0]
    acc = training.accuracy(model, X, y)
    with torch.no_grad():
        assert type(acc) is float and acc == (model(X).argmax(1) == y).float().mean().item()
    tuned = training.TUNED
    assert set(tuned) == {"hidden", "epochs", "lr"} and tuned["epochs"] <= 300
    torch.manual_seed(0)
    model = data.TinyNet(3, tuned["hidden"], 2)
    training.train(model, X, y, tuned["epochs"], tuned["lr"])
    assert training.accuracy(model, X, y) > 0.9


def test_ta_counting(ta: Callable[[str], ModuleType]) -> None:
    counting, data = ta("counting"), ta("data")
    assert counting.tinynet_count(3, 8, 2) == 50
    assert counting.growth(3, 2, 8, 32) == 144 and counting.growth(3, 2, 32, 8) == -144
    for sizes in ((1, 1, 1), (5, 7, 3), (10, 64, 4)):
        assert counting.tinynet_count(*sizes) == sum(p.numel() for p in data.TinyNet(*sizes).parameters())
