"""A Python file as canonical syntax subtrees and their hashes (host side; parsed, never run).

Each statement and expression is hashed bottom-up into a form that survives the usual disguises:
names the file binds are all `v` (builtins, attribute names and imported modules, by their full
path, stay); literals are `n` or `s`; docstrings, bare strings, `pass`, annotations and blocks under
`if False:` are gone; the statements of a block and the keyword arguments of a call are taken as
a set, so reordering them changes nothing; a loop that only appends, adds, sums or fills a dict is
the comprehension it spells (`for x in xs: out.append(f(x))` is `out = [f(x) for x in xs]`); the
statements the stub gives are left out of the block that holds them. Every subtree of at least
`min_size` nodes is a fingerprint with the lines it covers.
"""

from __future__ import annotations

import ast
from typing import Any

from autograder.integrity.prints import Print, combine, label_hash
from autograder.integrity.tokens import BUILTINS, imported_names

_SKIPPED_FIELDS = {"ctx", "type_comment", "annotation", "returns", "kind", "type_params", "is_async"}
_BODIES = {"body", "orelse", "finalbody", "handlers"}
_NAMED = {"name", "arg", "asname"}  # identifiers the file chooses: abstracted
_COLLECTORS = {
    "sum": "sum",
    "list": "list",
    "set": "set",
    "tuple": "list",
    "sorted": "list",
    "any": "any",
    "all": "all",
    "max": "max",
    "min": "min",
    "dict": "dict",
}
_KIND = {ast.ListComp: "list", ast.SetComp: "set", ast.GeneratorExp: "gen", ast.DictComp: "dict"}

Hashed = tuple[int, int]  # (hash, number of nodes)


class _Canon:
    def __init__(self, imports: dict[str, str], min_size: int, boiler: frozenset[int]) -> None:
        self.imports = imports
        self.min_size = min_size
        self.boiler = boiler  # statements the stub gives: left out of every block's hash
        self.prints: list[Print] = []

    def visit(self, node: ast.AST) -> Hashed:
        method = getattr(self, f"_{type(node).__name__}", None)
        hashed: Hashed = method(node) if method else self._generic(node)
        if hashed[1] >= self.min_size and isinstance(node, ast.stmt | ast.expr):
            self.prints.append(Print(hashed[0], node.lineno, node.end_lineno or node.lineno))
        return hashed

    def _join(self, label: str, parts: list[Hashed]) -> Hashed:
        return combine(label_hash(label), *(h for h, _ in parts)), 1 + sum(s for _, s in parts)

    def _leaf(self, *label: str) -> Hashed:
        return label_hash("\x00".join(label)), 1

    def _block(self, statements: list[ast.stmt]) -> Hashed:
        kept = [h for h in (self.visit(s) for s in statements if not _inert(s)) if h[0] not in self.boiler]
        return self._join("block", sorted(kept))

    def _generic(self, node: ast.AST) -> Hashed:
        label = [type(node).__name__]
        parts: list[Hashed] = []
        for name, value in ast.iter_fields(node):
            if name in _SKIPPED_FIELDS:
                continue
            if name in _BODIES and isinstance(value, list):
                parts.append(self._block(value))
            elif isinstance(value, ast.AST):
                parts.append(self.visit(value))
            elif isinstance(value, list):
                parts.append(self._join(name, [self.visit(v) for v in value if isinstance(v, ast.AST)]))
            elif name not in _NAMED and isinstance(value, str | int) and value is not None:
                label.append(f"{name}={value}")
        return self._join("|".join(label), parts)

    def _Name(self, node: ast.Name) -> Hashed:
        if node.id in self.imports:
            return self._leaf("M", self.imports[node.id])
        return self._leaf("B", node.id) if node.id in BUILTINS else self._leaf("v")

    def _Attribute(self, node: ast.Attribute) -> Hashed:
        chain, base = [node.attr], node.value
        while isinstance(base, ast.Attribute):
            chain.append(base.attr)
            base = base.value
        if isinstance(base, ast.Name) and base.id in self.imports:  # nn.Linear is torch.nn.Linear
            return label_hash("M\x00" + ".".join([self.imports[base.id], *reversed(chain)])), len(chain) + 1
        return self._join(f"attr={node.attr}", [self.visit(node.value)])

    def _Constant(self, node: ast.Constant) -> Hashed:
        value = node.value
        if value is None or isinstance(value, bool) or value is Ellipsis:
            return self._leaf("c", repr(value))
        return self._leaf("c", "s" if isinstance(value, str | bytes) else "n")

    def _JoinedStr(self, node: ast.JoinedStr) -> Hashed:
        return self._leaf("c", "s")

    def _Expr(self, node: ast.Expr) -> Hashed:
        return self._join("expr", [self.visit(node.value)])

    def _AnnAssign(self, node: ast.AnnAssign) -> Hashed:
        if node.value is None:
            return self._leaf("declare")
        return self._assign([self.visit(node.target)], self.visit(node.value))

    def _Assign(self, node: ast.Assign) -> Hashed:
        return self._assign([self.visit(t) for t in node.targets], self.visit(node.value))

    def _assign(self, targets: list[Hashed], value: Hashed) -> Hashed:
        return self._join("assign", [*targets, value])

    def _FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Hashed:
        dunder = node.name if node.name.startswith("__") and node.name.endswith("__") else ""
        parts = [
            self.visit(node.args),
            self._join("decorators", [self.visit(d) for d in node.decorator_list]),
            self._block(node.body),
        ]
        return self._join(f"def{dunder}", parts)

    _AsyncFunctionDef = _FunctionDef

    def _ClassDef(self, node: ast.ClassDef) -> Hashed:
        parts = [self._join("bases", [self.visit(b) for b in node.bases]), self._block(node.body)]
        return self._join("class", parts)

    def _Call(self, node: ast.Call) -> Hashed:
        if (
            isinstance(node.func, ast.Name)
            and node.func.id in _COLLECTORS
            and node.func.id not in self.imports
            and len(node.args) == 1
            and not node.keywords
            and isinstance(node.args[0], ast.GeneratorExp)
        ):
            gen = node.args[0]
            return self._comprehension(_COLLECTORS[node.func.id], gen.generators, [self.visit(gen.elt)])
        keywords = sorted(self._join(f"kw={k.arg}", [self.visit(k.value)]) for k in node.keywords)
        return self._join(
            "call",
            [
                self.visit(node.func),
                self._join("args", [self.visit(a) for a in node.args]),
                self._join("kwargs", keywords),
            ],
        )

    def _ListComp(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp) -> Hashed:
        return self._comprehension(_KIND[type(node)], node.generators, [self.visit(node.elt)])

    _SetComp = _GeneratorExp = _ListComp

    def _DictComp(self, node: ast.DictComp) -> Hashed:
        return self._comprehension("dict", node.generators, [self.visit(node.key), self.visit(node.value)])

    def _comprehension(self, kind: str, generators: list[ast.comprehension], element: list[Hashed]) -> Hashed:
        gens = [
            self._join(
                "gen", [self.visit(g.target), self.visit(g.iter), *sorted(self.visit(c) for c in g.ifs)]
            )
            for g in generators
        ]
        return self._join(f"compr={'list' if kind == 'gen' else kind}", [*gens, *element])

    def _For(self, node: ast.For) -> Hashed:
        spelled = self._loop_as_comprehension(node)
        return spelled if spelled is not None else self._generic(node)

    def _loop_as_comprehension(self, node: ast.For) -> Hashed | None:
        """The loop as `acc = <comprehension>` when all it does is collect into `acc`."""
        gens: list[Any] = []
        stmt: ast.stmt = node
        while isinstance(stmt, ast.For) and not stmt.orelse and len(stmt.body) == 1:
            conditions: list[ast.expr] = []
            inner = stmt.body[0]
            while isinstance(inner, ast.If) and not inner.orelse and len(inner.body) == 1:
                conditions.append(inner.test)
                inner = inner.body[0]
            gens.append(ast.comprehension(stmt.target, stmt.iter, conditions, 0))
            stmt = inner
        if not gens or isinstance(stmt, ast.For):
            return None
        target: ast.expr | None = None
        element: list[ast.expr] = []
        kind = ""
        if (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Call)
            and len(stmt.value.args) == 1
            and isinstance(stmt.value.func, ast.Attribute)
            and stmt.value.func.attr in ("append", "add")
        ):
            kind = "list" if stmt.value.func.attr == "append" else "set"
            target, element = stmt.value.func.value, [stmt.value.args[0]]
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add):
            kind, target, element = "sum", stmt.target, [stmt.value]
        elif (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Subscript)
        ):
            kind, target = "dict", stmt.targets[0].value
            element = [stmt.targets[0].slice, stmt.value]
        if target is None:
            return None
        compr = self._comprehension(kind, gens, [self.visit(e) for e in element])
        return self._assign([self.visit(target)], compr)


def _inert(statement: ast.stmt) -> bool:
    """A statement that does nothing: a docstring or bare constant, `pass`, `if False:` without else."""
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return True
    return (
        isinstance(statement, ast.If)
        and isinstance(statement.test, ast.Constant)
        and not statement.test.value
        and not statement.orelse
    )


def syntax_prints(text: str, min_size: int = 4, boiler: frozenset[int] = frozenset()) -> list[Print] | None:
    """The file's canonical subtrees of at least `min_size` nodes (None: it does not parse). A block
    is hashed without its statements in `boiler`, so a function whose own lines are all the stub's
    hashes as the stub's function does."""
    try:
        tree = ast.parse(text)
        canon = _Canon(imported_names(text), min_size, boiler)
        canon.visit(tree)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return canon.prints
