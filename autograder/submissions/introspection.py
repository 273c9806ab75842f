"""Lines of a submission that look into the interpreter itself, for an instructor to review.

Walking frames, the garbage collector's objects, closures and code objects, ctypes, or the
process's own memory is how a submission could reach the grader's probes in its process. Such
lines are listed (file and line) for academic-integrity review; they cost no points by themselves,
since some correct code uses `inspect`.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from autograder.pysource import parse_python

MODULES = {"gc": "the garbage collector", "ctypes": "ctypes (raw memory)", "inspect": "inspect",
           "sys": None, "_ctypes": "ctypes (raw memory)", "cffi": "cffi (raw memory)"}
ATTRIBUTES = {
    "_getframe": "frame walking", "f_back": "frame walking", "f_globals": "a frame's globals",
    "f_locals": "a frame's locals", "tb_frame": "frame walking", "gi_frame": "frame walking",
    "currentframe": "frame walking", "get_objects": "the garbage collector's objects",
    "get_referrers": "the garbage collector's referrers",
    "get_referents": "the garbage collector's referents",
    "cell_contents": "closure cells", "__closure__": "closure cells", "__code__": "code objects",
    "settrace": "tracing hooks", "setprofile": "profiling hooks", "addaudithook": "audit hooks",
}
TEXTS = {"/proc/self/mem": "the process's own memory", "/proc/self/maps": "the process's memory map"}
MAX_FLAGS = 20


def _what(node: ast.AST) -> str | None:
    if isinstance(node, ast.Import):
        found = [MODULES.get(a.name.split(".")[0]) for a in node.names]
        return next((f"imports {w}" for w in found if w), None)
    if isinstance(node, ast.ImportFrom) and node.module:
        what = MODULES.get(node.module.split(".")[0])
        if what:
            return f"imports {what}"
        names = [ATTRIBUTES.get(a.name) for a in node.names]
        return next((w for w in names if w), None)
    if isinstance(node, ast.Attribute):
        return ATTRIBUTES.get(node.attr)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        if MODULES.get(node.value):
            return None  # a bare name in a string is too common to flag on its own
        return next((w for text, w in TEXTS.items() if text in node.value), None)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__":
        first = node.args[0] if node.args else None
        if isinstance(first, ast.Constant) and MODULES.get(str(first.value)):
            return f"imports {MODULES[str(first.value)]}"
    return None


def review_flags(files: Mapping[str, bytes]) -> tuple[str, ...]:
    """`file:line: what` for each line of the Python files that introspects the interpreter."""
    flags: list[str] = []
    for name in sorted(files):
        try:
            tree = parse_python(files[name].decode("utf-8", "replace"), filename=name)
        except (SyntaxError, ValueError):
            continue  # a file that does not parse is graded (and reported) as such
        seen: set[tuple[int, str]] = set()
        for node in ast.walk(tree):
            what = _what(node)
            line = getattr(node, "lineno", 0)
            if what and (line, what) not in seen:
                seen.add((line, what))
        flags += [f"{name}:{line}: {what}" for line, what in sorted(seen)]
    if len(flags) > MAX_FLAGS:
        flags = [*flags[:MAX_FLAGS], f"... and {len(flags) - MAX_FLAGS} more"]
    return tuple(flags)
