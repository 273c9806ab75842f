"""What every CLI command shares: turning kit errors into messages, and finding the kit."""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console

from autograder.config import Kit, find_kit_root, load_kit
from autograder.errors import AutograderError

F = TypeVar("F", bound=Callable[..., Any])
err = Console(stderr=True)


def friendly(fn: F) -> F:
    """Turn the kit's own errors into one clear line and an exit code."""

    @wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except AutograderError as exc:
            err.print(f"[bold red]error:[/] {exc}", highlight=False)
            sys.exit(exc.exit_code)

    return run  # type: ignore[return-value]


def find_kit(kit_dir: Path | None, search_from: Path | None = None) -> Kit:
    """The kit named by --kit, else the nearest one above `search_from` (or here)."""
    return load_kit(kit_dir) if kit_dir else load_kit(find_kit_root(search_from))


kit_option = click.option(
    "--kit", "kit_dir", type=click.Path(path_type=Path, file_okay=False), default=None,
    help="Folder holding grading.toml (default: found from here upwards).",
)
