"""Pictures drawn as inline SVG for the pages: QR codes and the score history chart."""

from __future__ import annotations

from .colours import css_colour


def qr_svg(url: str) -> str:
    import segno

    return segno.make(url, error="m").svg_inline(
        scale=4, border=2, omitsize=True, dark="#000", light="#fff"
    )


def history_chart(state: dict, width: int = 360, height: int = 170) -> str:
    """Score history as inline SVG: one line per player over the turns."""
    history = state["history"]
    players = state["players"]
    top = max([1, *(v for row in history for v in row)])
    n = max(1, len(history))
    pad = 28
    out = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        'aria-label="score history" preserveAspectRatio="none">',
        f'<rect width="{width}" height="{height}" fill="#fff"/>',
    ]
    for frac in (0.5, 1.0):
        y = height - pad - frac * (height - 2 * pad)
        out.append(
            f'<line x1="{pad}" x2="{width - 6}" y1="{y:.0f}" y2="{y:.0f}" stroke="#ddd"/>'
            f'<text x="2" y="{y + 4:.0f}" font-size="11" fill="#555">{round(top * frac)}</text>'
        )
    for i, p in enumerate(players):
        points = [f"{pad},{height - pad}"]
        for t, row in enumerate(history, start=1):
            x = pad + t * (width - pad - 6) / n
            y = height - pad - row[i] * (height - 2 * pad) / top
            points.append(f"{x:.1f},{y:.1f}")
        dash = [
            "",
            ' stroke-dasharray="8 4"',
            ' stroke-dasharray="2 3"',
            ' stroke-dasharray="10 3 2 3"',
        ]
        out.append(
            f'<polyline points="{" ".join(points)}" fill="none" stroke="{css_colour(p["colour"])}" '
            f'stroke-width="3"{dash[i % 4]}><title>{p["colour"]}</title></polyline>'
        )
    out.append(
        f'<text x="{pad}" y="{height - 8}" font-size="11" fill="#555">turn 0</text>'
        f'<text x="{width - 6}" y="{height - 8}" font-size="11" text-anchor="end" fill="#555">'
        f"turn {len(history)}</text></svg>"
    )
    return "".join(out)


__all__ = ["history_chart", "qr_svg"]
