"""A Python file as canonical syntax subtrees and their hashes (host side; parsed, never run).

Each statement and expression is hashed bottom-up into a form that survives the usual disguises:
names the file binds are all `v` (builtins, attribute names and imported modules, by their full
path, stay); literals are `n` or `s`; docstrings, bare strings, `pass`, annotations and blocks under
`if False:` are gone, and so is padding (a local stored a literal and never read, a module flag set
once to a false constant and what `if FLAG:` guards, a private helper the file never names); `x += y`
is `x = x + y`; the statements of a block and the keyword arguments of a call are taken as
a set, so reordering them changes nothing; a loop that only appends, adds, sums or fills a dict is
the comprehension it spells (`out = []` then `for x in xs: out.append(f(x))` is
`out = [f(x) for x in xs]`); the statements the stub gives are left out of the block that holds
them. Every subtree of at least `min_size` nodes is a fingerprint with the lines it covers.
"""

from __future__ import annotations

import ast
from typing import Any

from autograder.integrity.prints import Print, combine, label_hash
from autograder.integrity.tokens import BUILTINS, imported_names
from autograder.pysource import parse_python

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
    def __init__(
        self, imports: dict[str, str], min_size: int, boiler: frozenset[int], module: ast.Module
    ) -> None:
        self.imports = imports
        self.min_size = min_size
        self.boiler = boiler  # statements the stub gives: left out of every block's hash
        self.prints: list[Print] = []
        self.flags, self.unused = _module_dead_names(module)
        self.unread: list[set[str]] = []  # per enclosing function: locals it stores and never reads

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
        live = [s for s in statements if not self._dead(s)]
        kept = [
            h
            for h in (
                self.visit(s)
                for s, after in zip(live, [*live[1:], None], strict=False)
                if not _initialises(s, after)
            )
            if h[0] not in self.boiler
        ]
        return self._join("block", sorted(kept))

    def _dead(self, statement: ast.stmt) -> bool:
        """Code that changes nothing: inert statements, a false flag and what it guards, a private
        helper nobody calls, a local that is stored a literal and never read (padding)."""
        if _inert(statement):
            return True
        if isinstance(statement, ast.If) and not statement.orelse:
            if isinstance(statement.test, ast.Name) and statement.test.id in self.flags:
                return True
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return statement.name in self.unused
        if isinstance(statement, ast.Assign) and _literal(statement.value):
            names = {t.id for t in statement.targets if isinstance(t, ast.Name)}
            if len(names) == len(statement.targets):
                return names <= (self.unread[-1] if self.unread else self.flags)
        return False

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

    def _AugAssign(self, node: ast.AugAssign) -> Hashed:
        """`x += y` is `x = x + y`."""
        spelled = ast.copy_location(ast.BinOp(node.target, node.op, node.value), node)
        return self._assign([self.visit(node.target)], self.visit(spelled))

    def _FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Hashed:
        dunder = node.name if node.name.startswith("__") and node.name.endswith("__") else ""
        self.unread.append(_unread_locals(node))
        try:
            parts = [
                self.visit(node.args),
                self._join("decorators", [self.visit(d) for d in node.decorator_list]),
                self._block(node.body),
            ]
        finally:
            self.unread.pop()
        return self._join(f"def{dunder}", parts)

    _AsyncFunctionDef = _FunctionDef

    def _ClassDef(self, node: ast.ClassDef) -> Hashed:
        self.unread.append(set())  # class attributes are read as attributes: none is dead
        try:
            parts = [self._join("bases", [self.visit(b) for b in node.bases]), self._block(node.body)]
        finally:
            self.unread.pop()
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
        collected = _collecting_loop(node)
        if collected is None:
            return None
        kind, gens, target, element = collected
        compr = self._comprehension(kind, gens, [self.visit(e) for e in element])
        if compr[1] >= self.min_size:  # as the comprehension's own expression would be
            self.prints.append(Print(compr[0], node.lineno, node.end_lineno or node.lineno))
        return self._assign([self.visit(target)], compr)


def _collecting_loop(node: ast.For) -> tuple[str, list[ast.comprehension], ast.expr, list[ast.expr]] | None:
    """(kind, generators, accumulator, element) when all the loop does is collect into one place."""
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
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.BinOp)
        and isinstance(stmt.value.op, ast.Add)
        and isinstance(stmt.value.left, ast.Name)
        and stmt.value.left.id == stmt.targets[0].id
    ):
        kind, target, element = "sum", stmt.targets[0], [stmt.value.right]  # acc = acc + x
    elif (
        isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript)
    ):
        kind, target = "dict", stmt.targets[0].value
        element = [stmt.targets[0].slice, stmt.value]
    if target is None:
        return None
    return kind, gens, target, element


_EMPTY = {"list": (ast.List, ast.Tuple), "set": (ast.Set,), "dict": (ast.Dict,), "sum": (ast.Constant,)}


def _initialises(statement: ast.stmt, after: ast.stmt | None) -> bool:
    """`acc = []` right before a loop that only collects into `acc`: part of the comprehension the
    loop spells (`acc = [f(x) for x in xs]` has no such line)."""
    if not (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and isinstance(after, ast.For)
    ):
        return False
    collected = _collecting_loop(after)
    if collected is None:
        return False
    kind, _, target, _ = collected
    value = statement.value
    empty = isinstance(value, _EMPTY[kind]) and not (
        getattr(value, "elts", None) or getattr(value, "keys", None)
    )
    if kind == "sum":
        empty = isinstance(value, ast.Constant) and value.value == 0 and not isinstance(value.value, bool)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and not value.args:
        empty = value.func.id == kind and not value.keywords  # list(), set(), dict()
    return empty and isinstance(target, ast.Name) and target.id == statement.targets[0].id


def _literal(node: ast.expr) -> bool:
    """A value whose making has no effect: a constant, or a container of literals."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return all(_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _literal(k) for k in node.keys) and all(_literal(v) for v in node.values)
    return False


def _unread_locals(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names the function stores and never reads (nor declares global or nonlocal)."""
    stored: set[str] = set()
    kept: set[str] = set()
    for n in ast.walk(function):
        if isinstance(n, ast.Name):
            (stored if isinstance(n.ctx, ast.Store) else kept).add(n.id)
        elif isinstance(n, ast.Global | ast.Nonlocal):
            kept.update(n.names)
    return stored - kept


def _module_dead_names(module: ast.Module) -> tuple[set[str], set[str]]:
    """(false flags, unused helpers), from one walk of the module: flags are names set once to a
    false constant and read only as the whole test of an `if` (`DEBUG = False`); helpers are
    private module functions and classes the file never names (`_describe` nobody calls)."""
    stores: dict[str, int] = {}
    named: set[str] = set()  # read as a name or an attribute, or spelled in a string (__all__, getattr)
    read_elsewhere: set[str] = set()
    declared: set[str] = set()
    tests: set[int] = set()
    nodes = list(ast.walk(module))
    for n in nodes:
        if isinstance(n, ast.If) and isinstance(n.test, ast.Name):
            tests.add(id(n.test))
    for n in nodes:
        if isinstance(n, ast.Name):
            if isinstance(n.ctx, ast.Store):
                stores[n.id] = stores.get(n.id, 0) + 1
            else:
                named.add(n.id)
                if id(n) not in tests:
                    read_elsewhere.add(n.id)
        elif isinstance(n, ast.Attribute):
            named.add(n.attr)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            named.add(n.value)
        elif isinstance(n, ast.Global):
            declared.update(n.names)
    flags = {
        t.id
        for s in module.body
        if isinstance(s, ast.Assign) and isinstance(s.value, ast.Constant) and not s.value.value
        for t in s.targets
        if isinstance(t, ast.Name) and stores.get(t.id) == 1
    }
    unused = {
        s.name
        for s in module.body
        if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and s.name.startswith("_")
        and not s.name.startswith("__")
        and s.name not in named
    }
    return flags - read_elsewhere - declared, unused


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
        tree = parse_python(text)
        canon = _Canon(imported_names(text), min_size, boiler, tree)
        canon.visit(tree)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return canon.prints
