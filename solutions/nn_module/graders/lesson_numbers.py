"""The numbers the nn_module graders and references depend on, as the lesson has them (dataclasses).

graders/params.py gives them out (`default()`) and makes each exam variant's (`for_variant`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field


def _compact(sizes: tuple[int, ...]) -> str:
    return "[" + ",".join(map(str, sizes)) + "]"


def _stack_count(sizes: tuple[int, ...], bias: bool) -> int:
    return sum(b * a + (b if bias else 0) for a, b in itertools.pairwise(sizes))


@dataclass(frozen=True)
class Tolerances:
    """How close is close enough: |got - want| <= tol * max(1, |want|), per dtype."""

    float64: float = 1e-12  # equivalence in float64: absolute, relative for |want| > 1
    float32: float = 1e-5  # float32 results against a float64 formula or another float32 run
    loss: float = 1e-4  # one training trajectory against another (float32 Adam, a few epochs)


@dataclass(frozen=True)
class TinyNetParams:
    in_features: int = 3
    hidden: int = 8
    out_features: int = 2
    epochs: int = 100
    lr: float = 0.05
    accuracy: float = 0.9
    toy_n: int = 100
    toy_seed: int = 0
    names: tuple[str, ...] = ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias")
    short_epochs: int = 4  # losses-are-floats and forward-hook checks
    trajectory_epochs: int = 15
    trajectory_lr: float = 0.03  # not the default: lr must be passed through to Adam
    default_lr_epochs: int = 5  # the default-arguments run is stopped after this many losses
    init_seed: int = 1234  # initial weights of the trajectory check
    accuracy_seed: int = 0  # torch seed before building the student's TinyNet(3, 8, 2)
    forward_seed: int = 2024
    forward_batch: int = 16
    forward_sizes: tuple[tuple[int, int, int], ...] = ((3, 8, 2), (5, 4, 3))
    max_random_size: int = 40  # the weight_shapes sweep: layer sizes 1..this

    @property
    def sizes(self) -> tuple[int, int, int]:
        return (self.in_features, self.hidden, self.out_features)

    @property
    def label(self) -> str:
        return f"TinyNet({self.in_features}, {self.hidden}, {self.out_features})"

    @property
    def fc1_shape(self) -> str:
        return f"({self.hidden}, {self.in_features})"

    @property
    def fc2_shape(self) -> str:
        return f"({self.out_features}, {self.hidden})"

    @property
    def weights_title(self) -> str:
        """TinyNet(3, 8, 2) stores fc1.weight as (8, 3) and fc2.weight as (2, 8)"""
        return f"{self.label}: fc1.weight {self.fc1_shape}, fc2.weight {self.fc2_shape}"


@dataclass(frozen=True)
class DeliveryParams:
    sizes: tuple[int, ...] = (3, 16, 8, 1)
    p_drop: float = 0.1
    n_params: int = 209
    keys: tuple[str, ...] = (
        "x_mean", "x_std", "hidden.0.weight", "hidden.0.bias",
        "hidden.3.weight", "hidden.3.bias", "head.weight", "head.bias",
    )
    buffers: tuple[str, ...] = ("x_mean", "x_std")
    weight_shapes: tuple[tuple[str, tuple[int, ...]], ...] = (
        ("hidden.0.weight", (16, 3)), ("hidden.3.weight", (8, 16)), ("head.weight", (1, 8)),
    )
    x_mean: tuple[float, ...] = (6.185, 3.102, 0.29)  # the lesson's buffers
    x_std: tuple[float, ...] = (3.209, 1.392, 0.454)
    batch_sizes: tuple[int, ...] = (1, 5, 64)  # N = 1 catches squeeze() without a dim
    state_seed: int = 77
    input_seed: int = 78
    train_p: float = 0.3  # p_drop of the train-mode check
    train_batch: int = 64
    predict_calls: int = 3

    @property
    def layers(self) -> tuple[tuple[str, int, int], ...]:
        """(state_dict prefix, in, out) of the three Linear layers."""
        _, h1, h2, out = self.sizes
        return (("hidden.0", self.sizes[0], h1), ("hidden.3", h1, h2), ("head", h2, out))

    @property
    def layer_counts(self) -> tuple[int, ...]:
        return tuple(b * a + b for _, a, b in self.layers)

    @property
    def count_terms(self) -> str:
        """64 + 136 + 9"""
        return " + ".join(map(str, self.layer_counts))

    @property
    def shapes_text(self) -> str:
        """(16, 3), (8, 16), (1, 8)"""
        shapes = [f"({b}, {a})" for _, a, b in self.layers]
        return ", ".join(shapes)

    @property
    def layers_text(self) -> str:
        """Linear(3, 16), Linear(16, 8) and Linear(8, 1)"""
        names = [f"Linear({a}, {b})" for _, a, b in self.layers]
        return ", ".join(names[:-1]) + " and " + names[-1]

    @property
    def layer_counts_text(self) -> str:
        """Linear(3, 16) has 48 + 16, Linear(16, 8) has 128 + 8, Linear(8, 1) has 8 + 1"""
        return ", ".join(f"Linear({a}, {b}) has {a * b} + {b}" for _, a, b in self.layers)

    @property
    def layers_list(self) -> str:
        """Linear(3, 16), Linear(16, 8), Linear(8, 1): the same in every language"""
        return ", ".join(f"Linear({a}, {b})" for _, a, b in self.layers)

    @property
    def layer_sums(self) -> str:
        """Linear(3, 16): 48 + 16, Linear(16, 8): 128 + 8, Linear(8, 1): 8 + 1"""
        return ", ".join(f"Linear({a}, {b}): {a * b} + {b}" for _, a, b in self.layers)

    @property
    def hidden_code(self) -> str:
        (_, i, h1), (_, _, h2) = self.layers[:2]
        return (f"nn.Sequential(nn.Linear({i}, {h1}), nn.ReLU(), nn.Dropout(p_drop), "
                f"nn.Linear({h1}, {h2}), nn.ReLU())")

    @property
    def per_layer(self) -> dict[str, int]:
        """per_layer(DeliveryMLP): {"hidden.0": 64, "hidden.3": 136, "head": 9}"""
        return {name: count for (name, _, _), count in zip(self.layers, self.layer_counts, strict=True)}


@dataclass(frozen=True)
class CountingParams:
    known_stacks: tuple[tuple[tuple[int, ...], bool, int], ...] = (
        ((3, 16, 8, 1), True, 209),
        ((784, 256, 128, 10), True, 235146),
        ((784, 256, 128, 10), False, 234752),
        ((1024, 64, 1024), True, 132160),
    )
    bad_stacks: tuple[tuple[int, ...], ...] = ((), (5,), (3, 0, 2), (4, -1, 3))
    delivery_total: int = 209  # DeliveryMLP-shaped model (with 6 buffer values)
    tied_total: int = 50  # Embedding(10, 4) tied to Linear(4, 10): 40 + 10
    frozen_trainable: int = 145  # DeliveryMLP-shaped, hidden.0 frozen: 209 - 64
    twohead_layers: tuple[tuple[str, int], ...] = (
        ("body.0", 64), ("heads.time", 17), ("heads.late", 34),
    )
    max_size: int = 12  # hypothesis: layer widths 1..this
    max_stack: int = 2048  # hypothesis: count_linear_stack sizes 1..this
    delivery_sizes: tuple[int, ...] = (3, 16, 8, 1)  # the DeliveryMLP-shaped model of the checks
    twohead_body: tuple[int, int] = (3, 16)  # the TwoHead-shaped model: Linear(3, 16) body ...
    twohead_heads: tuple[tuple[str, int], ...] = (("time", 1), ("late", 2))  # ... and its heads

    @property
    def known_text(self) -> str:
        """[3,16,8,1] -> 209, [784,256,128,10] -> 235146 (bias=False: 234752)"""
        (first, _, first_n), (stack, _, stack_n), (_, _, stack_nb) = self.known_stacks[:3]
        return f"{_compact(first)} -> {first_n}, {_compact(stack)} -> {stack_n} (bias=False: {stack_nb})"

    @property
    def twohead_text(self) -> str:
        """body.0 64, heads.time 17, heads.late 34"""
        return ", ".join(f"{name} {count}" for name, count in self.twohead_layers)

    @property
    def delivery_per_layer(self) -> dict[str, int]:
        _, h1, h2, out = self.delivery_sizes
        i = self.delivery_sizes[0]
        return {"hidden.0": i * h1 + h1, "hidden.3": h1 * h2 + h2, "head": h2 * out + out}


@dataclass(frozen=True)
class ContainersParams:
    sizes: tuple[int, ...] = (3, 16, 8, 1)
    n_params: int = 209
    in_features: int = 3
    body: int = 16
    head_names: tuple[str, ...] = ("time", "late")
    head_widths: tuple[int, ...] = (1, 2)
    twohead_params: int = 115
    batch: int = 9
    forward_sizes: tuple[tuple[int, ...], ...] = ((3, 16, 8, 1), (4, 4), (2, 7, 7, 3, 5), (5, 1, 6))
    state_seed: int = 31

    @property
    def heads(self) -> tuple[tuple[str, int], ...]:
        return tuple(zip(self.head_names, self.head_widths, strict=True))

    @property
    def head_keys_text(self) -> str:
        """heads.time.*, heads.late.*"""
        return ", ".join(f"heads.{name}.*" for name in self.head_names)

    @property
    def per_layer_text(self) -> str:
        """body.0: 64, heads.time: 17, heads.late: 34"""
        i, body = self.in_features, self.body
        heads = (f"heads.{n}: {body * w + w}" for n, w in self.heads)
        return ", ".join([f"body.0: {i * body + body}", *heads])

    @property
    def registered_text(self) -> str:
        """115 parameters, keys heads.time.*, heads.late.*"""
        return f"{self.twohead_params} parameters, keys {self.head_keys_text}"

    @property
    def head_names_text(self) -> str:
        """The heads as code: heads["time"], heads["late"] (the same in every language)."""
        return ", ".join(f'heads["{name}"]' for name in self.head_names)

    @property
    def heads_code(self) -> str:
        """"time": nn.Linear(16, 1), "late": nn.Linear(16, 2)"""
        return ", ".join(f'"{n}": nn.Linear({self.body}, {w})' for n, w in self.heads)

    @property
    def outputs_text(self) -> str:
        """"time": (N, 1) tensor, "late": (N, 2) tensor"""
        return ", ".join(f'"{n}": (N, {w}) tensor' for n, w in self.heads)

    @property
    def layer_counts_text(self) -> str:
        """body.0 has 64, heads.time 17 and heads.late 34 parameters: 115 in all"""
        counts = [f"heads.{n} {self.body * w + w}" for n, w in self.heads]
        body = self.in_features * self.body + self.body
        return (f"body.0 has {body}, " + ", ".join(counts[:-1]) + " and " + counts[-1]
                + f" parameters: {self.twohead_params} in all")


@dataclass(frozen=True)
class CheckpointParams:
    in_features: int = 3
    hidden: int = 5
    out_features: int = 2
    wide_out: int = 3  # head of the shape-mismatch model
    renamed: str = "out"  # the renamed head
    state_seed: int = 11
    batch: int = 6


@dataclass(frozen=True)
class DropoutParams:
    valid_p: tuple[float, ...] = (0.0, 0.5, 1.0)
    bad_p: tuple[float, ...] = (-0.1, 1.5, -1.0, 2.0)
    shape: tuple[int, ...] = (200, 100)  # 20000 values per statistical sample
    small_shape: tuple[int, ...] = (8, 16)
    other_shapes: tuple[tuple[int, ...], ...] = ((2000,), (10, 10, 20))  # inputs of rank 1 and 3
    survivor_p: float = 0.25
    stats_p: tuple[float, ...] = (0.1, 0.3, 0.75)
    sigmas: float = 6.0  # width of the statistical bounds, in standard deviations
    calls: int = 3  # calls on the same input (masks must differ)
    h_seed: int = 5
    rng_seed: int = 7


@dataclass(frozen=True)
class NumpyForwardParams:
    # the lesson's worked example (nn.Linear, section 3): x (1, 3), W (2, 3), b (2,) -> [4.6, -0.7]
    lesson_x: tuple[float, ...] = (1.0, 2.0, 3.0)
    lesson_W: tuple[tuple[float, ...], ...] = ((0.5, -1.0, 2.0), (1.0, 0.0, -0.5))
    lesson_b: tuple[float, ...] = (0.1, -0.2)
    lesson_y: tuple[float, ...] = (4.6, -0.7)
    square_sizes: tuple[int, ...] = (2, 5, 16)
    batch_sizes: tuple[int, ...] = (1, 7, 50)
    float32_batches: tuple[int, ...] = (1, 7)  # the float32 values path (in batch_sizes: references cached)
    state_seed: int = 404
    input_seed: int = 405


@dataclass(frozen=True)
class Params:
    tol: Tolerances = field(default_factory=Tolerances)
    tinynet: TinyNetParams = field(default_factory=TinyNetParams)
    delivery: DeliveryParams = field(default_factory=DeliveryParams)
    counting: CountingParams = field(default_factory=CountingParams)
    containers: ContainersParams = field(default_factory=ContainersParams)
    checkpoint: CheckpointParams = field(default_factory=CheckpointParams)
    dropout: DropoutParams = field(default_factory=DropoutParams)
    numpy_forward: NumpyForwardParams = field(default_factory=NumpyForwardParams)
