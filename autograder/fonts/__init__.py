"""The Bengali webfont every Bangla page embeds (feedback, class report, the notebook's self-check).

Noto Sans Bengali (SIL OFL 1.1, OFL.txt beside this file), the Bengali subset that
@fontsource/noto-sans-bengali 5.3.0 publishes on npm: a real Regular (400) and a real Bold (700),
~45 KB of woff2 each, so a page draws its Bangla, bold included, on a machine without any Bengali
font (the students' lab machines, this one). Each face is declared at its own weight: a browser
given one static face for `100 900` would draw bold as regular (or smear it synthetically).
"""

from __future__ import annotations

import base64
from functools import lru_cache
from pathlib import Path

FONTS = Path(__file__).resolve().parent
FACES = {400: FONTS / "noto-sans-bengali-bengali-400-normal.woff2",
         700: FONTS / "noto-sans-bengali-bengali-700-normal.woff2"}
FAMILY = "Kit Noto Sans Bengali"
RANGE = ("U+0951-0952,U+0964-0965,U+0980-09FE,U+1CD0,U+1CD2,U+1CD5-1CD6,U+1CD8,U+1CE1,"
         "U+1CEA,U+1CED,U+1CF2,U+1CF5-1CF7,U+200C-200D,U+20B9,U+25CC,U+A8F1")


@lru_cache(maxsize=2)
def _data(weight: int) -> str:
    return base64.b64encode(FACES[weight].read_bytes()).decode("ascii")


def font_css(lang: str) -> str:
    """The @font-face rules that embed the Bengali faces, for a Bangla page; "" otherwise."""
    if lang != "bn":
        return ""
    return "\n".join(
        f'@font-face {{ font-family: "{FAMILY}"; font-style: normal; font-weight: {weight}; '
        f'font-display: block; src: url(data:font/woff2;base64,{_data(weight)}) format("woff2"); '
        f"unicode-range: {RANGE}; }}"
        for weight in FACES
    )


def font_family(lang: str) -> str:
    """The pages' font stack: the embedded Bengali font first on Bangla pages (its unicode-range
    leaves every other letter to the system's fonts)."""
    first = f'"{FAMILY}", ' if lang == "bn" else ""
    return f'{first}system-ui, "Noto Sans Bengali", sans-serif'
