"""How a grading runs: one frozen set of options instead of parameters threaded through layers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class GradeOptions:
    """Options of every grading by one grader or pool.

    `sandbox`: run student code in bubblewrap (off only for trusted code). `lang`: the feedback
    language (None: the kit's). `public_only`: a self-check, the public checks alone.
    `graders_folder`: checks to use instead of the instructor's (a student's shipped copy).
    """

    sandbox: bool = True
    lang: str | None = None
    public_only: bool = False
    graders_folder: Path | None = None

    def language(self, default: str) -> str:
        return self.lang or default


DEFAULT_OPTIONS = GradeOptions()
