"""Python source parsed to an AST safely from any thread of a grading or service process."""

from __future__ import annotations

import ast
import threading

# CPython 3.11 before 3.11.8 keeps the AST converter's recursion count in one state per interpreter,
# not per thread (gh-106905): two threads converting at once, the service's grading thread and a
# request's, raise "SystemError: AST constructor recursion depth mismatch" in either. One at a time.
_lock = threading.Lock()


def parse_python(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """ast.parse, one thread at a time (SyntaxError, RecursionError, ValueError as it raises them)."""
    with _lock:
        return ast.parse(source, filename)
