"""A made-up nn_module class for the similarity benchmark and tests: independent students, and copies.

Independent students fill the real stubs (assignments/nn_module/, signatures and docstrings as
shipped) with bodies composed from many small choices, each drawn with the odds a real class has
(most write `for _ in range(epochs)`, few a `while` loop), under habits that stay with the student
across their files (terse or step by step, helpers, comments, names). The reference and the
hand-written correct variants in solutions/nn_module/graders/correct/ are each one more student.
A copy takes another student's file and disguises it at a level:

0 verbatim      comments and layout changed only
1 renamed       + every local name renamed
2 reordered     + functions and independent statements reordered, keyword arguments shuffled
3 restructured  + loops turned into comprehensions and back, `x += y` spelled `x = x + y`
4 padded        + dead code: unused variables, an unused helper, a debug block never run
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STUBS = ROOT / "assignments" / "nn_module"
SOLUTIONS = ROOT / "solutions" / "nn_module"
TASK_FILES = (
    "tinynet.py",
    "delivery.py",
    "counting.py",
    "containers.py",
    "checkpoint.py",
    "dropout.py",
    "numpy_forward.py",
)
LEVELS = ("verbatim", "renamed", "reordered", "restructured", "padded")
_RAISE = re.compile(r'^(\s*)raise NotImplementedError\("\w+: write ([\w.]+)"\)\n', re.M)


class Style:
    """One student's habits: how terse, whether they comment, factor helpers, annotate; their names."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        r = self.rng
        self.terse = r.random()
        self.comments = r.choice([0.0, 0.0, 0.1, 0.3, 0.6])
        self.helpers = r.choice([0.0, 0.1, 0.3, 0.5])
        self.hints = r.random() < 0.4

    def pick(self, *options: object, weights: list[float] | None = None) -> object:
        return self.rng.choices(options, weights=weights)[0]

    def p(self, chance: float) -> bool:
        return self.rng.random() < chance

    def name(self, *pool: str) -> str:
        return self.rng.choice(pool)

    def note(self, *texts: str) -> list[str]:
        return [f"# {self.rng.choice(texts)}"] if self.p(self.comments) else []


Bodies = dict[str, list[str]]


@dataclass
class Parts:
    bodies: Bodies
    imports: list[str]
    helpers: list[str]


def _tinynet(s: Style) -> Parts:
    imports, helpers = [], []
    act = s.pick("module", "functional", "torch", weights=[5, 3, 2])
    relu_name = s.name("relu", "act", "activation")
    init = [
        "self.fc1 = nn.Linear("
        + str(s.pick("in_features, hidden", "in_features=in_features, out_features=hidden", weights=[4, 1]))
        + ")"
    ]
    if act == "module":
        init.append(f"self.{relu_name} = nn.ReLU()")
    init.append(
        "self.fc2 = nn.Linear("
        + str(s.pick("hidden, out_features", "in_features=hidden, out_features=out_features", weights=[4, 1]))
        + ")"
    )
    if act == "module" and s.p(0.3):
        init[1], init[0] = init[0], init[1]
    if s.p(0.15):
        init.insert(0, "self.in_features, self.out_features = in_features, out_features")
    if act == "functional":
        imports.append(
            s.pick("import torch.nn.functional as F", "from torch.nn import functional as F", weights=[4, 1])
        )
    call = {"module": f"self.{relu_name}", "functional": "F.relu", "torch": "torch.relu"}[act]
    if s.p(s.terse):
        forward = [f"return self.fc2({call}(self.fc1(x)))"]
    else:
        h = s.name("h", "z", "hidden", "out", "x")
        forward = [f"{h} = self.fc1(x)", f"{h} = {call}({h})", f"return self.fc2({h})"]
        if s.p(0.3):
            forward = [f"{h} = {call}(self.fc1(x))", f"return self.fc2({h})"]
    opt = s.name("optimizer", "opt", "optim", "adam")
    losses = s.name("losses", "history", "loss_history", "all_losses", "loss_list")
    make = s.pick(
        "torch.optim.Adam(model.parameters(), lr=lr)",
        "torch.optim.Adam(params=model.parameters(), lr=lr)",
        "optim.Adam(model.parameters(), lr=lr)",
        weights=[6, 1, 2],
    )
    if "optim.Adam" in make and not make.startswith("torch"):
        imports.append("from torch import optim")
    train: list[str] = []
    if s.p(0.35):
        train.append("model.train()")
    if s.p(0.15):
        train.append(s.pick("y = y.long()", "X, y = X.float(), y.long()"))
    train.append(f"{opt} = {make}")
    loss_style = s.pick("object", "functional", "nn_functional", weights=[5, 3, 1])
    lf = s.name("loss_fn", "criterion", "loss_func", "ce")
    if loss_style == "object":
        train.append(f"{lf} = nn.CrossEntropyLoss()")
        compute = f"{lf}({{}}, y)"
    elif loss_style == "functional":
        if "F" not in " ".join(imports):
            imports.append("import torch.nn.functional as F")
        compute = "F.cross_entropy({}, y)"
    else:
        compute = "nn.functional.cross_entropy({}, y)"
    train.append(f"{losses} = []")
    zero = s.pick(
        f"{opt}.zero_grad()", "model.zero_grad()", f"{opt}.zero_grad(set_to_none=True)", weights=[6, 2, 1]
    )
    step = [zero]
    if s.p(s.terse):
        step.append(f"loss = {compute.format('model(X)')}")
    else:
        logits = s.name("logits", "out", "scores", "pred", "output")
        step += [f"{logits} = model(X)", f"loss = {compute.format(logits)}"]
    step += ["loss.backward()", f"{opt}.step()"]
    record = s.pick(
        f"{losses}.append(loss.item())",
        f"{losses}.append(float(loss))",
        f"{losses}.append(float(loss.item()))",
        f"{losses} += [loss.item()]",
        weights=[6, 3, 1, 1],
    )
    if s.p(0.25):
        value = s.name("value", "current", "l", "loss_value", "v")
        step += [f"{value} = loss.item()", f"{losses}.append({value})"]
    else:
        step.append(record)
    loop = s.pick("for", "for_epoch", "while", weights=[6, 3, 1])
    if loop != "for" and s.p(0.3):
        every = s.pick("10", "20", "25", "50")
        var = "epoch" if loop == "while" else "{var}"
        step += [
            f"if {var} % {every} == 0:",
            f"    print({s.pick(repr('epoch'), repr('Epoch'))}, {var}, "
            f"{s.pick('loss.item()', f'{losses}[-1]')})",
        ]
    if loop == "while":
        train += ["epoch = 0", "while epoch < epochs:", *["    " + x for x in step], "    epoch += 1"]
    else:
        var = "_" if loop == "for" else s.name("epoch", "e", "i", "ep")
        step = [x.replace("{var}", var) for x in step]
        train += [
            f"for {var} in range(epochs):",
            *s.note("the five steps", "training step"),
            *["    " + x for x in step],
        ]
    train.append(f"return {losses}")
    return Parts(
        {"TinyNet.__init__": init, "TinyNet.forward": forward, "train_tinynet": train}, imports, helpers
    )


def _delivery(s: Style) -> Parts:
    imports, helpers = [], []
    buf = s.pick("as_tensor", "tensor", "clone", "plain", "loop", weights=[4, 2, 2, 1, 1])
    init: list[str] = []
    if buf == "loop":
        init += [
            'for name, value in (("x_mean", x_mean), ("x_std", x_std)):',
            "    self.register_buffer(name, torch.as_tensor(value))",
        ]
    else:
        wrap = {
            "as_tensor": "torch.as_tensor({})",
            "tensor": "torch.tensor({}, dtype=torch.float32)",
            "clone": "{}.clone().detach()",
            "plain": "{}",
        }[buf]
        init += [
            f'self.register_buffer("x_mean", {wrap.format("x_mean")})',
            f'self.register_buffer("x_std", {wrap.format("x_std")})',
        ]
    layers = s.pick("inline", "multiline", "list", "ordered", weights=[4, 3, 2, 1])
    parts = ["nn.Linear(3, 16)", "nn.ReLU()", "nn.Dropout(p_drop)", "nn.Linear(16, 8)", "nn.ReLU()"]
    if layers == "inline":
        init.append(f"self.hidden = nn.Sequential({', '.join(parts)})")
    elif layers == "multiline":
        init += ["self.hidden = nn.Sequential(", *[f"    {p}," for p in parts], ")"]
    elif layers == "list":
        name = s.name("layers", "modules", "blocks", "stack")
        init += [f"{name} = [{', '.join(parts)}]", f"self.hidden = nn.Sequential(*{name})"]
    else:
        imports.append("from collections import OrderedDict")
        init += [
            "self.hidden = nn.Sequential(OrderedDict([",
            *[f'    ("{i}", {p}),' for i, p in enumerate(parts)],
            "]))",
        ]
    init.append("self.head = nn.Linear(8, 1)")
    if s.p(0.3):
        init.insert(0, init.pop())
    if s.p(0.2):
        init.append("self.p_drop = p_drop")
    z = s.name("z", "x_norm", "scaled", "standardized", "xs")
    squeeze = s.pick(
        ".squeeze(-1)",
        ".squeeze(1)",
        "[:, 0]",
        ".view(-1)",
        ".reshape(-1)",
        ".flatten()",
        weights=[5, 2, 1, 1, 1, 1],
    )
    if s.p(s.terse):
        forward = [f"return self.head(self.hidden((x - self.x_mean) / self.x_std)){squeeze}"]
    else:
        forward = [f"{z} = (x - self.x_mean) / self.x_std"]
        if s.p(0.5):
            out = s.name("out", "y", "minutes", "result")
            forward += [f"{out} = self.head(self.hidden({z}))", f"return {out}{squeeze}"]
        else:
            forward.append(f"return self.head(self.hidden({z})){squeeze}")
    if s.p(0.1):
        forward.insert(0, "x = x.to(self.x_mean.dtype)")
    if s.p(0.1):
        forward.insert(0, 'assert x.shape[-1] == 3, "expected 3 features"')
    ctx = s.pick("torch.no_grad()", "torch.inference_mode()", weights=[4, 1])
    if s.p(0.6):
        predict = ["model.eval()", f"with {ctx}:", "    return model(x)"]
    else:
        out = s.name("out", "y", "pred", "result")
        predict = ["model.eval()", f"with {ctx}:", f"    {out} = model(x)", f"return {out}"]
    if s.p(0.15):
        predict.insert(0, "x = torch.as_tensor(x)")
    return Parts(
        {"DeliveryMLP.__init__": init, "DeliveryMLP.forward": forward, "predict": predict}, imports, helpers
    )


def _counting(s: Style) -> Parts:
    imports, helpers = [], []
    sizes = s.name("sizes", "dims", "widths", "s")
    stack: list[str] = [f"{sizes} = list(sizes)"] if sizes == "sizes" or s.p(0.5) else []
    src = sizes if stack else "sizes"
    message = s.pick('"need at least two sizes"', 'f"need two sizes, got {sizes}"', '"too few sizes"')
    stack += [f"if len({src}) < 2:", f"    raise ValueError({message})"]
    check = s.pick("any", "min", "loop", weights=[4, 2, 2])
    if check == "any":
        stack += [f"if any(n < 1 for n in {src}):", '    raise ValueError("sizes must be at least 1")']
    elif check == "min":
        stack += [f"if min({src}) < 1:", '    raise ValueError("every size must be >= 1")']
    else:
        stack += [f"for n in {src}:", "    if n < 1:", '        raise ValueError(f"bad size {n}")']
    pairs = s.pick(
        f"pairwise({src})",
        f"zip({src}, {src}[1:])",
        f"zip({src}[:-1], {src}[1:])",
        "index",
        weights=[3, 3, 2, 2],
    )
    a, b = s.pick(("a", "b"), ("n_in", "n_out"), ("i", "o"), ("fan_in", "fan_out"))  # type: ignore[misc]
    total = s.name("total", "count", "n_params", "result")
    form = s.pick("loop_cond", "loop_if", "sum", "split", weights=[3, 3, 3, 1])
    if pairs == "index":
        head, a_e, b_e = f"for k in range(len({src}) - 1):", f"{src}[k]", f"{src}[k + 1]"
        pairs_src = f"zip({src}, {src}[1:])"
    else:
        head, a_e, b_e = f"for {a}, {b} in {pairs}:", a, b
        pairs_src = pairs
    if form == "loop_cond":
        stack += [
            f"{total} = 0",
            head,
            f"    {total} += {a_e} * {b_e} + ({b_e} if bias else 0)",
            f"return {total}",
        ]
    elif form == "loop_if":
        stack += [
            f"{total} = 0",
            head,
            f"    {total} += {a_e} * {b_e}",
            "    if bias:",
            f"        {total} += {b_e}",
            f"return {total}",
        ]
    elif form == "sum":
        stack.append(f"return sum({a} * {b} + ({b} if bias else 0) for {a}, {b} in {pairs_src})")
    else:
        stack += [
            f"weights = sum({a} * {b} for {a}, {b} in {pairs_src})",
            f"biases = sum({src}[1:]) if bias else 0",
            "return weights + biases",
        ]
    if s.p(0.1):
        stack.insert(0, "sizes = [int(n) for n in sizes]")
    params = s.pick("genexp_or", "filter", "loop", "dedupe", weights=[4, 3, 2, 1])
    if params == "genexp_or":
        count = ["return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)"]
    elif params == "filter":
        count = [
            "params = model.parameters()",
            "if trainable_only:",
            "    params = (p for p in params if p.requires_grad)",
            "return sum(p.numel() for p in params)",
        ]
    elif params == "loop":
        n = s.name("total", "count", "n")
        count = [
            f"{n} = 0",
            "for p in model.parameters():",
            "    if trainable_only and not p.requires_grad:",
            "        continue",
            f"    {n} += p.numel()",
            f"return {n}",
        ]
    else:
        count = [
            "seen = set()",
            "total = 0",
            "for p in model.parameters():",
            "    if id(p) in seen:",
            "        continue",
            "    seen.add(id(p))",
            "    if p.requires_grad or not trainable_only:",
            "        total += p.numel()",
            "return total",
        ]
    layer = s.pick("list_own", "sum_positive", "named_parameters", weights=[3, 3, 2])
    counts = s.name("counts", "result", "out", "table", "per")
    mod = s.name("module", "m", "layer", "sub")
    skip_root = ["    if not name:", "        continue"] if s.p(0.15) else []
    if layer == "list_own":
        per = [
            f"{counts} = {{}}",
            f"for name, {mod} in model.named_modules():",
            *skip_root,
            f"    own = list({mod}.parameters(recurse=False))",
            "    if own:",
            f"        {counts}[name] = sum(p.numel() for p in own)",
            f"return {counts}",
        ]
    elif layer == "sum_positive":
        per = [
            f"{counts} = {{}}",
            f"for name, {mod} in model.named_modules():",
            *skip_root,
            f"    n = sum(p.numel() for p in {mod}.parameters(recurse=False))",
            "    if n > 0:",
            f"        {counts}[name] = n",
            f"return {counts}",
        ]
    else:
        per = [
            f"{counts} = {{}}",
            f"for name, {mod} in model.named_modules():",
            *skip_root,
            f"    n = sum(t.numel() for _, t in {mod}.named_parameters(recurse=False))",
            "    if n:",
            f"        {counts}[name] = n",
            f"return {counts}",
        ]
    return Parts({"count_linear_stack": stack, "count_parameters": count, "per_layer": per}, imports, helpers)


def _containers(s: Style) -> Parts:
    imports, helpers = [], []
    pairs = s.pick(
        "pairwise(sizes)", "zip(sizes, sizes[1:])", "zip(sizes[:-1], sizes[1:])", weights=[3, 4, 2]
    )
    a, b = s.pick(("a", "b"), ("n_in", "n_out"), ("i", "o"), ("d_in", "d_out"))  # type: ignore[misc]
    build = s.pick("genexp", "listcomp", "loop", "index", weights=[3, 3, 3, 1])
    if build == "genexp":
        init = [f"self.layers = nn.ModuleList(nn.Linear({a}, {b}) for {a}, {b} in {pairs})"]
    elif build == "listcomp":
        init = [f"self.layers = nn.ModuleList([nn.Linear({a}, {b}) for {a}, {b} in {pairs}])"]
    elif build == "loop":
        init = [
            "self.layers = nn.ModuleList()",
            f"for {a}, {b} in {pairs}:",
            f"    self.layers.append(nn.Linear({a}, {b}))",
        ]
    else:
        init = [
            "self.layers = nn.ModuleList(",
            "    [nn.Linear(sizes[k], sizes[k + 1]) for k in range(len(sizes) - 1)]",
            ")",
        ]
    if s.p(0.2):
        init.append("self.sizes = list(sizes)")
    if s.p(0.1):
        init.insert(0, 'assert len(sizes) >= 2, "need at least an input and an output size"')
    relu = s.pick("torch.relu", "F.relu", "nn.functional.relu", weights=[4, 3, 1])
    if relu == "F.relu":
        imports.append("import torch.nn.functional as F")
    fwd = s.pick("enumerate", "slice", "index", weights=[3, 4, 2])
    layer = s.name("layer", "lin", "linear", "l", "fc")
    if fwd == "enumerate":
        forward = [
            "last = len(self.layers) - 1",
            f"for i, {layer} in enumerate(self.layers):",
            f"    x = {layer}(x)",
            "    if i < last:",
            f"        x = {relu}(x)",
            "return x",
        ]
    elif fwd == "slice":
        forward = [
            f"for {layer} in self.layers[:-1]:",
            f"    x = {relu}({layer}(x))",
            "return self.layers[-1](x)",
        ]
    else:
        forward = [
            "n = len(self.layers)",
            "for i in range(n):",
            "    x = self.layers[i](x)",
            "    if i != n - 1:",
            f"        x = {relu}(x)",
            "return x",
        ]
    heads = s.pick("dict", "assign", "kwargs", weights=[5, 2, 1])
    body = ["self.body = nn.Sequential(nn.Linear(3, 16), nn.ReLU())"]
    if heads == "dict":
        body.append('self.heads = nn.ModuleDict({"time": nn.Linear(16, 1), "late": nn.Linear(16, 2)})')
    elif heads == "assign":
        body += [
            "self.heads = nn.ModuleDict()",
            'self.heads["time"] = nn.Linear(16, 1)',
            'self.heads["late"] = nn.Linear(16, 2)',
        ]
    else:
        body.append("self.heads = nn.ModuleDict(dict(time=nn.Linear(16, 1), late=nn.Linear(16, 2)))")
    if heads != "assign" and s.p(0.2):
        body.reverse()
    feats = s.name("features", "h", "shared", "z", "f")
    out = s.pick("comprehension", "explicit", "loop", weights=[4, 3, 2])
    if out == "comprehension":
        two = [
            f"{feats} = self.body(x)",
            f"return {{name: head({feats}) for name, head in self.heads.items()}}",
        ]
    elif out == "explicit":
        two = [
            f"{feats} = self.body(x)",
            f'return {{"time": self.heads["time"]({feats}), "late": self.heads["late"]({feats})}}',
        ]
    else:
        res = s.name("out", "result", "outputs")
        two = [
            f"{feats} = self.body(x)",
            f"{res} = {{}}",
            "for name, head in self.heads.items():",
            f"    {res}[name] = head({feats})",
            f"return {res}",
        ]
    return Parts(
        {
            "FixedMLP.__init__": init,
            "FixedMLP.forward": forward,
            "TwoHead.__init__": body,
            "TwoHead.forward": two,
        },
        imports,
        helpers,
    )


def _checkpoint(s: Style) -> Parts:
    imports, helpers = [], []
    if s.p(0.6):
        save = ["torch.save(model.state_dict(), path)"]
    else:
        held = s.name("state", "sd", "weights")
        save = [f"{held} = model.state_dict()", f"torch.save({held}, path)"]
    if s.p(0.1):
        save.insert(0, "path = os.fspath(path)")
    if s.p(0.1):
        save.insert(0, 'os.makedirs(os.path.dirname(os.fspath(path)) or ".", exist_ok=True)')
    where = s.pick('map_location="cpu"', 'map_location=torch.device("cpu")', weights=[5, 1])
    read = s.pick(
        f"torch.load(path, {where}, weights_only=True)",
        f"torch.load(path, weights_only=True, {where})",
        f"torch.load(f=path, {where}, weights_only=True)",
        weights=[5, 2, 1],
    )
    state = s.name("state", "state_dict", "sd", "weights", "loaded")
    helper = s.p(s.helpers)
    if helper:
        fn = s.name("_read", "_load_state", "read_state", "_safe_load")
        helpers += [f"def {fn}(path):", f"    return {read}", ""]
        read = f"{fn}(path)"
    load = [
        f"{state} = {read}",
        f"model.load_state_dict({state}{s.pick(', strict=True', '')})",
        "return model",
    ]
    form = s.pick("result", "unpack", "direct", weights=[4, 3, 1])
    partial = [f"{state} = {read}"]
    if form == "result":
        r = s.name("result", "res", "report", "keys", "info")
        partial += [
            f"{r} = model.load_state_dict({state}, strict=False)",
            f"return list({r}.missing_keys), list({r}.unexpected_keys)",
        ]
    elif form == "unpack":
        partial += [
            f"missing, unexpected = model.load_state_dict({state}, strict=False)",
            "return list(missing), list(unexpected)",
        ]
    else:
        partial += [
            f"r = model.load_state_dict({state}, strict=False)",
            "return ([*r.missing_keys], [*r.unexpected_keys])",
        ]
    return Parts({"save_weights": save, "load_weights": load, "load_partial": partial}, imports, helpers)


def _dropout(s: Style) -> Parts:
    check = s.pick("not 0 <= p <= 1", "p < 0 or p > 1", "not (0.0 <= p <= 1.0)", weights=[4, 3, 1])
    msg = s.pick(
        'f"p must be in [0, 1], got {p}"', '"p must be between 0 and 1"', 'f"invalid dropout probability {p}"'
    )
    init = [
        f"if {check}:",
        f"    raise ValueError({msg})",
        s.pick("self.p = p", "self.p = float(p)", weights=[3, 1]),
        "self.rng = rng",
        "self.training = True",
    ]
    if s.p(0.3):
        init[2], init[3] = init[3], init[2]
    train, ev = ["self.training = True", "return self"], ["self.training = False", "return self"]
    mask = s.name("keep", "mask", "keep_mask", "m")
    draw = s.pick(
        "self.rng.random(h.shape) >= self.p",
        "self.rng.random(h.shape) < 1 - self.p",
        "self.rng.binomial(1, 1 - self.p, size=h.shape)",
        "self.rng.uniform(size=h.shape) >= self.p",
        weights=[4, 2, 2, 1],
    )
    call: list[str] = []
    if s.p(0.5):
        call.append("h = np.asarray(h)")
    same = s.pick("h.copy()", "np.array(h, copy=True)", "h + 0", weights=[5, 2, 1])
    if s.p(0.5):
        call += ["if not self.training or self.p == 0:", f"    return {same}"]
    else:
        call += ["if not self.training:", f"    return {same}", "if self.p == 0:", f"    return {same}"]
    call += [
        "if self.p == 1:",
        "    return "
        + str(s.pick("np.zeros_like(h)", "h * 0.0", "np.zeros(h.shape, dtype=h.dtype)", weights=[5, 1, 1])),
    ]
    call.append(f"{mask} = {draw}")
    out = s.pick("where", "mul_div", "scale", "fill", weights=[3, 3, 2, 1])
    if out == "where":
        call.append(f"return np.where({mask}, h / (1 - self.p), 0.0)")
    elif out == "mul_div":
        call.append(f"return h * {mask} / (1 - self.p)")
    elif out == "scale":
        scale = s.name("scale", "factor", "k")
        call += [f"{scale} = 1.0 / (1.0 - self.p)", f"return h * {mask} * {scale}"]
    else:
        res = s.name("out", "result", "y")
        call += [
            f"{res} = np.zeros_like(h)",
            f"{res}[{mask}.astype(bool)] = h[{mask}.astype(bool)] / (1 - self.p)",
            f"return {res}",
        ]
    return Parts(
        {"Dropout.__init__": init, "Dropout.train": train, "Dropout.eval": ev, "Dropout.__call__": call},
        [],
        [],
    )


def _numpy_forward(s: Style) -> Parts:
    helpers: list[str] = []
    lin = s.pick(
        "x @ W.T + b",
        "np.dot(x, W.T) + b",
        "np.matmul(x, W.transpose()) + b",
        'np.einsum("ni,oi->no", x, W) + b',
        weights=[5, 3, 2, 1],
    )
    relu = s.pick(
        "np.maximum({}, 0)", "np.maximum({}, 0.0)", "np.clip({}, 0, None)", "helper", weights=[4, 2, 2, 2]
    )
    if relu == "helper":
        fn = s.name("relu", "_relu", "rectify")
        helpers += [f"def {fn}(a):", "    return np.maximum(a, 0)", ""]
        relu = fn + "({})"
    z = s.name("z", "h", "a", "x_std")
    last = s.pick("[..., 0]", "[:, 0]", ".reshape(-1)", ".squeeze(-1)", ".ravel()", weights=[3, 3, 2, 2, 1])
    form = s.pick("steps", "loop", weights=[3, 2])
    body = [f'{z} = ({s.pick("np.asarray(x)", "x")} - state["x_mean"]) / state["x_std"]']
    if form == "steps":
        body += [
            f"{z} = " + relu.format(f'linear({z}, state["hidden.0.weight"], state["hidden.0.bias"])'),
            f"{z} = " + relu.format(f'linear({z}, state["hidden.3.weight"], state["hidden.3.bias"])'),
            f'return linear({z}, state["head.weight"], state["head.bias"]){last}',
        ]
    else:
        body += [
            'for name in ("hidden.0", "hidden.3"):',
            f"    {z} = " + relu.format(f'linear({z}, state[name + ".weight"], state[name + ".bias"])'),
            f'out = linear({z}, state["head.weight"], state["head.bias"])',
            f"return out{last}",
        ]
    if form == "steps" and s.p(0.3):
        names = s.pick(("W1", "b1", "W2", "b2", "W3", "b3"), ("w0", "c0", "w1", "c1", "w2", "c2"))
        keys = (
            "hidden.0.weight",
            "hidden.0.bias",
            "hidden.3.weight",
            "hidden.3.bias",
            "head.weight",
            "head.bias",
        )
        unpack = [f'{n} = state["{k}"]' for n, k in zip(names, keys, strict=True)]
        body = (
            body[:1]
            + unpack
            + [
                f"{z} = {relu.format(f'linear({z}, {names[0]}, {names[1]})')}",
                f"{z} = {relu.format(f'linear({z}, {names[2]}, {names[3]})')}",
                f"return linear({z}, {names[4]}, {names[5]}){last}",
            ]
        )
    linear = [f"return {lin}"] if s.p(0.7) else [f"{s.name('y', 'out', 'result')} = {lin}", "return {}"]
    if len(linear) == 2:
        linear[1] = linear[1].format(linear[0].split(" =")[0])
    return Parts({"linear": linear, "delivery_forward": body}, [], helpers)


WRITERS: dict[str, Callable[[Style], Parts]] = {
    "tinynet.py": _tinynet,
    "delivery.py": _delivery,
    "counting.py": _counting,
    "containers.py": _containers,
    "checkpoint.py": _checkpoint,
    "dropout.py": _dropout,
    "numpy_forward.py": _numpy_forward,
}


def fill(stub: str, parts: Parts, style: Style) -> str:
    """The stub with every `raise NotImplementedError` replaced by the student's body."""

    def body(match: re.Match[str]) -> str:
        indent, qual = match.group(1), match.group(2)
        lines = style.note("my solution", "TODO: check this", "see lesson") + parts.bodies[qual]
        return "".join(f"{indent}{line}\n" if line else "\n" for line in lines)

    text = _RAISE.sub(body, stub)
    if style.p(0.3):  # some students delete the docstrings they were given
        text = _drop_docstrings(text)
    lines = text.split("\n")
    last_import = max(i for i, line in enumerate(lines) if line.startswith(("import ", "from ")))
    extra = [imp for imp in dict.fromkeys(parts.imports) if imp not in lines]
    helpers = ["", "", *parts.helpers] if parts.helpers else []
    lines[last_import + 1 : last_import + 1] = extra + helpers
    return "\n".join(lines)


def _drop_docstrings(text: str) -> str:
    tree = ast.parse(text)
    spans = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.FunctionDef | ast.ClassDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
            and len(node.body) > 1
        ):
            spans.append((node.body[0].lineno, node.body[0].end_lineno or node.body[0].lineno))
    lines = text.split("\n")
    for first, last in sorted(spans, reverse=True):
        del lines[first - 1 : last]
    return "\n".join(lines)


def fixed_styles() -> dict[str, list[str]]:
    """Task file -> whole files written by hand: the reference, then every correct variant of it."""
    out: dict[str, list[str]] = {f: [(SOLUTIONS / f).read_text(encoding="utf-8")] for f in TASK_FILES}
    for folder in sorted((SOLUTIONS / "graders" / "correct").iterdir()):
        for path in sorted(folder.glob("*.py")):
            if path.name in out:
                out[path.name].append(path.read_text(encoding="utf-8"))
    for f in out:
        out[f] = [re.sub(r"^[ \t]*### (BEGIN|END) SOLUTION\n", "", t, flags=re.M) for t in out[f]]
    return out


def independent_student(
    index: int, seed: int = 0, fixed: dict[str, list[str]] | None = None
) -> dict[str, str]:
    """Student `index`'s own seven files (the first few of each task are the hand-written ones)."""
    style = Style(seed * 1_000_003 + index)
    files = {}
    for name in TASK_FILES:
        hand = (fixed or {}).get(name, [])
        if index < len(hand):
            files[name] = hand[index]
        else:
            files[name] = fill((STUBS / name).read_text(encoding="utf-8"), WRITERS[name](style), style)
    return files


# ----------------------------------------------------------------------------- disguises

CONTRACT = {
    "TinyNet",
    "train_tinynet",
    "DeliveryMLP",
    "predict",
    "count_linear_stack",
    "count_parameters",
    "per_layer",
    "FixedMLP",
    "TwoHead",
    "save_weights",
    "load_weights",
    "load_partial",
    "Dropout",
    "linear",
    "delivery_forward",
    "forward",
    "train",
    "eval",
    "self",
    "cls",
}
WORDS = ("val", "tmp", "thing", "acc", "buf", "res", "item", "data", "var", "cur", "obj", "elem", "arr", "q")


ATTRIBUTES = {
    "fc1",
    "fc2",
    "hidden",
    "head",
    "layers",
    "body",
    "heads",
    "p",
    "rng",
    "training",
    "x_mean",
    "x_std",
}


class _Renamer(ast.NodeTransformer):
    """Every name the file binds itself (arguments the graders do not pass by name, helpers, `self.`
    attributes the contract does not name) gets a new one."""

    def __init__(self, rng: random.Random, bound: set[str], own: set[str]) -> None:
        self.map = {name: f"{rng.choice(WORDS)}_{i}" for i, name in enumerate(sorted(bound))}
        self.own = own - ATTRIBUTES  # `self.` attributes the file sets (not nn.Module's register_buffer)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == "self" and node.attr in self.own:
            node.attr = "my_" + node.attr.lstrip("_")
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self.map.get(node.id, node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self.map.get(node.arg, node.arg)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.name = self.map.get(node.name, node.name)
        self.generic_visit(node)
        return node


def _bound_names(tree: ast.Module) -> set[str]:
    imported = {
        a.asname or a.name.split(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in n.names
    }
    keywords_used = {k.arg for n in ast.walk(tree) if isinstance(n, ast.Call) for k in n.keywords if k.arg}
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.FunctionDef):
            bound.add(node.name)
    # Arguments callers pass by keyword (epochs=..., trainable_only=...) keep their names: the contract.
    contract_args = {
        "epochs",
        "lr",
        "bias",
        "trainable_only",
        "p_drop",
        "x_mean",
        "x_std",
        "p",
        "rng",
        "path",
        "model",
        "in_features",
        "hidden",
        "out_features",
        "sizes",
        "state",
        "x",
        "h",
        "X",
        "y",
        "W",
        "b",
    }
    dunders = {name for name in bound if name.startswith("__") and name.endswith("__")}
    return bound - imported - CONTRACT - keywords_used - contract_args - dunders - {"_"}


def _reads_writes(node: ast.stmt) -> tuple[set[str], set[str]]:
    reads, writes = set(), set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            (writes if isinstance(sub.ctx, ast.Store) else reads).add(sub.id)
        elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "self":
            (writes if isinstance(sub.ctx, ast.Store) else reads).add("self." + sub.attr)
    return reads, writes


def _independent(a: ast.stmt, b: ast.stmt) -> bool:
    """Two assignments neither of which reads or writes what the other writes, and that call nothing
    with an effect (an optimizer step, a buffer's registration)."""
    if not all(isinstance(s, ast.Assign | ast.AnnAssign) for s in (a, b)):
        return False
    ra, wa = _reads_writes(a)
    rb, wb = _reads_writes(b)
    calls = any(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr
        in ("append", "backward", "step", "zero_grad", "register_buffer", "eval", "train", "load_state_dict")
        for s in (a, b)
        for n in ast.walk(s)
    )
    return not calls and not (wa & (rb | wb)) and not (wb & ra)


def _reorder(body: list[ast.stmt], rng: random.Random) -> None:
    for i in range(len(body) - 1):
        if _independent(body[i], body[i + 1]) and rng.random() < 0.8:
            body[i], body[i + 1] = body[i + 1], body[i]
    for node in body:
        for field in ("body", "orelse"):
            inner = getattr(node, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                _reorder(inner, rng)


class _Restructure(ast.NodeTransformer):
    """Loops that collect become comprehensions, comprehensions that are assigned become loops,
    `x += y` becomes `x = x + y`, keyword arguments are shuffled."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        self.rng.shuffle(node.keywords)
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.target, ast.Name):
            load = ast.Name(node.target.id, ast.Load())
            return ast.Assign(
                [ast.Name(node.target.id, ast.Store())], ast.BinOp(load, node.op, node.value), lineno=0
            )
        return node

    def _body(self, body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        i = 0
        while i < len(body):
            s, nxt = body[i], body[i + 1] if i + 1 < len(body) else None
            # acc = [] ; for t in it: acc.append(e)  ->  acc = [e for t in it]
            if (
                isinstance(s, ast.Assign)
                and isinstance(s.value, ast.List)
                and not s.value.elts
                and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name)
                and isinstance(nxt, ast.For)
                and len(nxt.body) == 1
                and not nxt.orelse
                and isinstance(nxt.body[0], ast.Expr)
                and isinstance(nxt.body[0].value, ast.Call)
                and isinstance(nxt.body[0].value.func, ast.Attribute)
                and nxt.body[0].value.func.attr == "append"
                and isinstance(nxt.body[0].value.func.value, ast.Name)
                and nxt.body[0].value.func.value.id == s.targets[0].id
                and len(nxt.body[0].value.args) == 1
            ):
                comp = ast.ListComp(
                    nxt.body[0].value.args[0], [ast.comprehension(nxt.target, nxt.iter, [], 0)]
                )
                out.append(ast.Assign(s.targets, comp, lineno=0))
                i += 2
                continue
            # acc = [e for t in it if c]  ->  acc = [] ; for t in it: if c: acc.append(e)
            if (
                isinstance(s, ast.Assign)
                and isinstance(s.value, ast.ListComp)
                and len(s.value.generators) == 1
                and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name)
            ):
                gen, name = s.value.generators[0], s.targets[0].id
                inner: ast.stmt = ast.Expr(
                    ast.Call(
                        ast.Attribute(ast.Name(name, ast.Load()), "append", ast.Load()), [s.value.elt], []
                    )
                )
                for cond in reversed(gen.ifs):
                    inner = ast.If(cond, [inner], [])
                out += [
                    ast.Assign([ast.Name(name, ast.Store())], ast.List([], ast.Load()), lineno=0),
                    ast.For(gen.target, gen.iter, [inner], [], lineno=0),
                ]
                i += 1
                continue
            out.append(s)
            i += 1
        return out

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for field in ("body", "orelse"):
            inner = getattr(node, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                setattr(node, field, self._body(inner))
        return node


def _pad(tree: ast.Module, rng: random.Random) -> None:
    """Dead code: an unused helper, unused variables in functions, a debug block that never runs."""
    helper = ast.parse(
        rng.choice(
            [
                "def _describe(obj):\n    text = str(obj)\n    return text.strip()[:80]\n",
                "def _check_shape(t, n):\n    if len(t.shape) != n:\n"
                "        print('unexpected shape', t.shape)\n    return t\n",
                "def _debug(*args):\n    if False:\n        print(*args)\n",
            ]
        )
    ).body[0]
    first_def = next(i for i, n in enumerate(tree.body) if isinstance(n, ast.FunctionDef | ast.ClassDef))
    tree.body.insert(first_def, helper)
    debug = ast.parse("DEBUG = False\n").body[0]
    tree.body.insert(first_def, debug)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.FunctionDef)
            and node is not helper
            and len(node.body) > 1
            and rng.random() < 0.7
        ):
            extra = ast.parse(
                rng.choice(
                    ["unused = 0\n", "steps_done = []\n", "note = 'ok'\n", "if DEBUG:\n    print('called')\n"]
                )
            ).body[0]
            node.body.insert(1 if ast.get_docstring(node) else 0, extra)


def disguise(text: str, level: int, rng: random.Random) -> str:
    """`text` copied and disguised up to `level` (0..4, LEVELS)."""
    if level == 0:
        lines = [line for line in text.split("\n") if not line.strip().startswith("#")]
        return "\n".join(
            line.rstrip() + ("  # ok" if rng.random() < 0.1 and line.strip() else "") for line in lines
        )
    tree = ast.parse(text)
    own = {
        n.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute)
        and isinstance(n.ctx, ast.Store)
        and isinstance(n.value, ast.Name)
        and n.value.id == "self"
    }
    tree = _Renamer(rng, _bound_names(tree), own).visit(tree)
    if level >= 2:
        defs = [i for i, n in enumerate(tree.body) if isinstance(n, ast.FunctionDef | ast.ClassDef)]
        moved = [tree.body[i] for i in defs]
        rng.shuffle(moved)
        for i, node in zip(defs, moved, strict=True):
            tree.body[i] = node
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                methods = [n for n in node.body if isinstance(n, ast.FunctionDef)]
                rng.shuffle(methods)
                node.body = [n for n in node.body if not isinstance(n, ast.FunctionDef)] + methods
            if isinstance(node, ast.FunctionDef):
                _reorder(node.body, rng)
    if level >= 3:
        tree = _Restructure(rng).visit(tree)
    if level >= 4:
        _pad(tree, rng)
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


@dataclass(frozen=True)
class Planted:
    copier: str
    source: str
    file: str
    level: int


def make_class(students: int, copiers: int, seed: int = 0) -> tuple[dict[str, dict[str, str]], list[Planted]]:
    """`students` independent students and `copiers` more who each copy 1 to 4 files of one of them
    (each at its own disguise level, the levels spread evenly); the copiers' other files are their own."""
    rng = random.Random(seed)
    fixed = fixed_styles()
    order = list(range(students))
    rng.shuffle(order)  # which student gets the hand-written files is not tied to the names
    people = {f"s{k:04d}": independent_student(order[k], seed, fixed) for k in range(students)}
    planted = []
    sources = rng.sample(sorted(people), copiers)
    for c, source in enumerate(sources):
        name = f"s{students + c:04d}"
        own = independent_student(students + c, seed, None)
        for file in rng.sample(TASK_FILES, rng.randint(1, 4)):
            level = len(planted) % len(LEVELS)
            own[file] = disguise(people[source][file], level, rng)
            planted.append(Planted(name, source, file, level))
        people[name] = own
    return people, planted


def write_class(people: dict[str, dict[str, str]], folder: Path) -> Path:
    for student, files in people.items():
        (folder / student).mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (folder / student / name).write_text(text, encoding="utf-8")
    return folder
