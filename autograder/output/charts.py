"""Inline SVG bar charts for the pages: readable without JavaScript or network, named for screen readers."""

from __future__ import annotations

from html import escape


def bar_chart(
    values: list[float], labels: list[str], maximum: float, name: str, width: int = 640, unit: str = ""
) -> str:
    """A horizontal-axis bar chart as inline SVG: readable without JavaScript or network, and named
    for screen readers (role="img" with an aria-label, and a <title>): `name`, then every bar's value."""
    height, pad, top = 220, 30, 12
    n = max(len(values), 1)
    step = (width - 2 * pad) / n
    bar = step * 0.7
    said = f"{name}: " + "; ".join(f"{label}: {value:g}{unit}" for value, label in zip(values, labels,
                                                                                        strict=True))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{escape(said)}" '
             f'viewBox="0 0 {width} {height + 40}" width="100%" style="max-width:{width}px">',
             f"<title>{escape(said)}</title>"]
    parts.append(f'<line x1="{pad}" y1="{height}" x2="{width - pad}" y2="{height}" stroke="#555"/>')
    for i, (value, label) in enumerate(zip(values, labels, strict=True)):
        h = 0 if maximum <= 0 else (height - top - 10) * value / maximum
        x = pad + i * step + (step - bar) / 2
        parts.append(f'<rect x="{x:.1f}" y="{height - h:.1f}" width="{bar:.1f}" height="{h:.1f}" '
                     f'fill="#3b6ea5"><title>{escape(label)}: {value:g}{unit}</title></rect>')
        parts.append(f'<text x="{x + bar / 2:.1f}" y="{height - h - 3:.1f}" font-size="11" '
                     f'text-anchor="middle" aria-hidden="true">{value:g}{unit}</text>')
        parts.append(f'<text x="{x + bar / 2:.1f}" y="{height + 14}" font-size="10" '
                     f'text-anchor="middle" aria-hidden="true">{escape(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)
