"""Every number the nn_module graders (and the reference solutions) depend on, in one place."""

from __future__ import annotations

from dataclasses import dataclass, field


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
    init_seed: int = 1234  # initial weights of the trajectory check
    accuracy_seed: int = 0  # torch seed before building the student's TinyNet(3, 8, 2)
    forward_seed: int = 2024
    forward_batch: int = 16
    forward_sizes: tuple[tuple[int, int, int], ...] = ((3, 8, 2), (5, 4, 3))
    max_random_size: int = 40  # hypothesis: layer sizes 1..this


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


def default() -> Params:
    """The parameters of the default grading run."""
    return Params()
