"""What every CLI command shares: turning kit errors into messages, and finding the kit."""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.markup import escape

from autograder.atomic import disk_full
from autograder.config import Kit, find_kit_root, load_kit
from autograder.errors import AutograderError

F = TypeVar("F", bound=Callable[..., Any])
# Messages are not wrapped by rich: a path or a command in them stays whole, to copy (a terminal wraps
# long lines itself; a CI log or a pipe keeps them as one line).
err = Console(stderr=True, soft_wrap=True)
DISK_FULL_EXIT = 5


def friendly(fn: F) -> F:
    """Turn the kit's own errors into one clear line and an exit code."""

    @wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except AutograderError as exc:
            err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)  # a [table] stays text
            sys.exit(exc.exit_code)
        except Exception as exc:
            if not disk_full(exc):
                raise
            named = exc.filename if isinstance(exc, OSError) else None
            where = f" writing into {Path(str(named)).parent}" if named else ""
            err.print(f"[bold red]error:[/] the disk is full{escape(where)}: free some space and run the "
                      "same command again (every file is whole or not written, what was recorded is kept)",
                      highlight=False)
            sys.exit(DISK_FULL_EXIT)

    return run  # type: ignore[return-value]


def find_kit(kit_dir: Path | None, search_from: Path | None = None) -> Kit:
    """The kit named by --kit, else the nearest one above `search_from` (or here)."""
    return load_kit(kit_dir) if kit_dir else load_kit(find_kit_root(search_from))


kit_option = click.option(
    "--kit", "kit_dir", type=click.Path(path_type=Path, file_okay=False), default=None,
    help="Folder holding grading.toml (default: found from here upwards).",
)


ALLOW_UNVERIFIED = "--allow-unverified"
allow_unverified_option = click.option(
    "--allow-unverified", "allow_unverified", is_flag=True, default=False,
    help="Export even when a score in OUT no longer matches its signature (see `autograder verify`).",
)


def verifying_key(out: Path) -> bytes:
    """The key to verify OUT with; a missing one is refused (never made), naming the ledger's key id."""
    from autograder.ledger.book import Gradebook, find_gradebook
    from autograder.ledger.signing import key_for, key_path, load_key

    if key_path().is_file() or not find_gradebook(out).is_file():
        return load_key(create=False)
    book = Gradebook(find_gradebook(out), readonly=True)
    try:
        expected = book.key_id()
    finally:
        book.close()
    return key_for(expected) if expected else load_key(create=False)


def require_verified(out: Path, allow: bool) -> None:
    """Refuse to send on grades whose signatures do not hold (a hand-edited score), unless allowed."""
    from autograder.output.verify import verify_out

    report = verify_out(out, verifying_key(out))
    if report.ok:
        return
    shown = "\n  ".join(report.lines()[:20])
    more = f"\n  ... and {len(report.problems) - 20} more" if len(report.problems) > 20 else ""
    if allow:
        err.print(f"[yellow]warning:[/] {out} does not verify ({ALLOW_UNVERIFIED} given):\n  {shown}{more}")
        return
    raise UnverifiedGrades(
        f"{out} does not verify, so nothing was exported:\n  {shown}{more}\n"
        "a ledger edited outside the kit stays so (its log is append-only): restore OUT from a backup or "
        "grade into a new OUT; grades from before signing are signed by `autograder grade ... --regrade`; "
        f"or pass {ALLOW_UNVERIFIED}"
    )


class UnverifiedGrades(AutograderError):
    """Grades whose signatures do not hold."""
