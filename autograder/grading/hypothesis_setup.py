"""How hypothesis runs graders' checks: one derandomized profile, seeds pinned once per check."""

from __future__ import annotations

import hashlib
from typing import Any

from hypothesis import HealthCheck, seed, settings
from hypothesis.internal.reflection import function_digest
from hypothesis.vendor import pretty

PROFILE = "autograder"
_SHOWN_AS: dict[type, str] = {}


def use_profile() -> None:
    """Register and load the kit's profile (idempotent); called before graders are imported, so
    every check is decorated under it, and never as a side effect of importing a module."""
    if PROFILE not in getattr(settings, "_profiles", {}):
        settings.register_profile(
            PROFILE,
            derandomize=True,
            database=None,
            deadline=None,
            max_examples=10,
            print_blob=False,
            report_multiple_bugs=False,
            suppress_health_check=list(HealthCheck),
        )
    settings.load_profile(PROFILE)


def pin_seed(function: Any) -> None:
    """Fix a hypothesis check's seed once, at load: the very seed `derandomize` derives from its
    source, so the examples stay the same, without re-reading and hashing the source on every run."""
    inner = getattr(getattr(function, "hypothesis", None), "inner_test", None)
    if inner is None:
        return
    digest = function_digest(inner)
    seed(int.from_bytes(digest, "big"))(function)
    # What hypothesis would otherwise compute (from the source, again) to name its unused database entry.
    function._hypothesis_internal_database_key = digest


def salt_seed(function: Any, secret: bytes) -> int | None:
    """Seed a pinned hypothesis check from its source and the graders' secret (grading/challenge.py),
    so that its examples are inputs nobody can know in advance, the same on every run of these
    graders; returns the seed (None: not a hypothesis check)."""
    digest = getattr(function, "_hypothesis_internal_database_key", None)
    if digest is None:
        return None
    value = int.from_bytes(hashlib.sha256(b"hypothesis\0" + secret + digest).digest()[:16], "big")
    if getattr(function, "_hypothesis_internal_use_seed", None) != value:
        seed(value)(function)
    return value


def show_fixture_as(kind: type, name: str) -> None:
    """Hypothesis prints every argument of an example it runs: a fixture (the params, whose fields
    are many) is printed as its bare name instead, which costs nothing and is what feedback drops."""
    if kind.__module__ == "builtins":  # a plain value: every other value of its type would be renamed
        return
    if _SHOWN_AS.get(kind) != name:
        _SHOWN_AS[kind] = name
        pretty.for_type_by_name(kind.__module__, kind.__qualname__, lambda _obj, p, _cycle: p.text(name))
