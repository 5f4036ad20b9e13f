"""The board as inline SVG, drawn from engine state, with the hints laid over it."""

from __future__ import annotations

from html import escape

from meeplecam.engine import Game, Kind, hints

from . import tileart
from .colours import css_colour, ink_for, letter

T = 100  # SVG units per cell


def _pts(points, x: int, y: int) -> str:
    return " ".join(f"{(x + px) * T:.1f},{(y + py) * T:.1f}" for px, py in points)


def tile_svg(orientation, x: int, y: int, done: frozenset[int] = frozenset()) -> list[str]:
    out = [f'<rect x="{x * T}" y="{y * T}" width="{T}" height="{T}" fill="{tileart.FIELD}"/>']
    for shape in tileart.shapes(orientation, done):
        kind = shape[0]
        if kind == "poly":
            _, points, fill, edge = shape
            stroke = f' stroke="{edge}" stroke-width="2"' if edge else ""
            out.append(f'<polygon points="{_pts(points, x, y)}" fill="{fill}"{stroke}/>')
        elif kind == "road":
            _, points, fill = shape
            p = _pts(points, x, y)
            out.append(
                f'<polyline points="{p}" fill="none" stroke="{tileart.ROAD_EDGE}" stroke-width="12"/>'
            )
            out.append(f'<polyline points="{p}" fill="none" stroke="{fill}" stroke-width="8"/>')
        elif kind == "cloister":
            out.append(
                f'<polygon points="{_pts(shape[1], x, y)}" fill="{tileart.CLOISTER}" stroke="#4e1a14" stroke-width="2"/>'
            )
            cx, cy = (x + 0.5) * T, (y + 0.5) * T
            out.append(
                f'<path d="M{cx},{cy - 12} v24 M{cx - 8},{cy - 4} h16" stroke="#fff" stroke-width="3"/>'
            )
        elif kind == "pennant":
            px, py = (x + shape[1][0]) * T, (y + shape[1][1]) * T
            out.append(
                f'<path d="M{px - 6:.1f},{py - 7:.1f} h12 v7 l-6,7 l-6,-7 z" fill="{tileart.PENNANT}" stroke="#fff" stroke-width="1.5"/>'
            )
    return out


def render_board(
    game: Game,
    hint_tile: str | None = None,
    show_chances: bool = True,
    drawn_spot: tuple[int, int] | None = None,
) -> str:
    """The board; ``hint_tile``: where that tile fits; ``drawn_spot``: the cell beside the
    board where the players put the tile just drawn for the camera to read (drawn, but left
    out of the home view: a spot far from the board would shrink it on a phone)."""
    board = game.board
    tiles = board.tiles
    cells = set(tiles) | set(board.frontier)
    xs = [c[0] for c in cells] or [0]
    ys = [c[1] for c in cells] or [0]
    min_x, max_x, min_y, max_y = min(xs), max(xs), min(ys), max(ys)
    if board.bounds is not None:
        # the table's edge in view where the board comes near it (a whole table would shrink
        # a young board on a phone: zoom out to see it all)
        b = board.bounds
        min_x, max_x = min(min_x, max(b.min_x, min_x - 1)), max(max_x, min(b.max_x, max_x + 1))
        min_y, max_y = min(min_y, max(b.min_y, min_y - 1)), max(max_y, min(b.max_y, max_y + 1))
    pad = 0.3
    vb = (
        (min_x - pad) * T,
        (min_y - pad) * T,
        (max_x - min_x + 1 + 2 * pad) * T,
        (max_y - min_y + 1 + 2 * pad) * T,
    )
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="board-svg" viewBox="{vb[0]:.0f} {vb[1]:.0f} '
        f'{vb[2]:.0f} {vb[3]:.0f}" data-home="{vb[0]:.0f} {vb[1]:.0f} {vb[2]:.0f} {vb[3]:.0f}" '
        'role="img" aria-label="the board">',
        f'<rect x="{vb[0]}" y="{vb[1]}" width="{vb[2]}" height="{vb[3]}" fill="#3e2f25"/>',
    ]
    if board.bounds is not None:
        b = board.bounds
        out.append(
            f'<rect class="table-edge" x="{b.min_x * T}" y="{b.min_y * T}" '
            f'width="{(b.max_x - b.min_x + 1) * T}" height="{(b.max_y - b.min_y + 1) * T}" '
            'fill="#5a4636" stroke="#f0c36d" stroke-width="6" stroke-dasharray="20 10"/>'
        )
    # tiles, completed features drawn in a deeper colour
    for (x, y), placed in sorted(tiles.items()):
        done = frozenset(
            i
            for i, seg in enumerate(placed.tile.segments)
            if seg.kind in (Kind.CITY, Kind.ROAD) and board.feature((x, y), i).is_complete
        )
        out.append(f'<g class="tile" data-cell="{x},{y}" data-tile="{placed.tile.id}">')
        out += tile_svg(placed.orientation, x, y, done)
        out.append(
            f'<rect x="{x * T}" y="{y * T}" width="{T}" height="{T}" fill="none" stroke="#00000055" stroke-width="1"/>'
        )
        out.append("</g>")
    last = game.last_placed
    if last is not None:
        out.append(
            f'<rect class="last" x="{last[0] * T + 3}" y="{last[1] * T + 3}" width="{T - 6}" '
            f'height="{T - 6}" fill="none" stroke="#ffeb3b" stroke-width="6"/>'
        )
    # open cells: fitting tiles left and the chance one is drawn before the player's next turn
    placements = hints.placements(game, hint_tile) if hint_tile else []
    hinted = {}
    for p in placements:
        hinted.setdefault((p.x, p.y), []).append(p)
    for cell in hints.open_cells(game) if show_chances else []:
        x, y = cell.x, cell.y
        dead = not cell.fitting
        cls = "open dead" if dead else "open"
        if (x, y) in hinted:
            cls += " fits"
        out.append(
            f'<g class="{cls}" data-cell="{x},{y}" data-fitting="{cell.fitting_left}" '
            f'data-chance="{cell.chance:.3f}">'
        )
        stroke = "#ff5252" if dead else "#ffffffaa"
        fill = "#4fc3f7aa" if (x, y) in hinted else "#ffffff14"
        out.append(
            f'<rect x="{x * T + 4}" y="{y * T + 4}" width="{T - 8}" height="{T - 8}" rx="8" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="3" stroke-dasharray="10 6"/>'
        )
        cx, cy = (x + 0.5) * T, (y + 0.5) * T
        if dead:
            out.append(
                f'<path d="M{cx - 22},{cy - 22} l44,44 M{cx + 22},{cy - 22} l-44,44" '
                'stroke="#ff5252" stroke-width="7"/>'
            )
        elif (x, y) in hinted:
            best = max((sum(p.points.values()) for p in hinted[(x, y)]), default=0)
            label = f"+{best}" if best else "fits"
            out.append(
                f'<text x="{cx}" y="{cy + 10}" text-anchor="middle" font-size="30" '
                f'font-weight="700" fill="#01579b">{label}</text>'
            )
        else:
            out.append(
                f'<text x="{cx}" y="{cy - 4}" text-anchor="middle" font-size="22" fill="#fff">'
                f"{cell.fitting_left} left</text>"
                f'<text x="{cx}" y="{cy + 22}" text-anchor="middle" font-size="22" '
                f'fill="#ffe082">{round(cell.chance * 100)}%</text>'
            )
        out.append("</g>")
    if drawn_spot is not None:
        x, y = drawn_spot
        cx, cy = (x + 0.5) * T, (y + 0.5) * T
        out.append(
            f'<g class="drawn-spot" data-cell="{x},{y}"><rect x="{x * T + 4}" y="{y * T + 4}" '
            f'width="{T - 8}" height="{T - 8}" rx="4" fill="#00000033" stroke="#ffeb3b" '
            'stroke-width="4" stroke-dasharray="6 6"/>'
            f'<text x="{cx}" y="{cy - 4}" text-anchor="middle" font-size="20" fill="#ffeb3b">'
            f'drawn</text><text x="{cx}" y="{cy + 20}" text-anchor="middle" font-size="20" '
            f'fill="#ffeb3b">tile here</text></g>'
        )
    # followers and the Gingerbread Man
    for follower in board.followers():
        placed = tiles[follower.cell]
        px, py = tileart.segment_point(placed.orientation, follower.segment)
        cx, cy = (follower.cell[0] + px) * T, (follower.cell[1] + py) * T
        player = game.players[follower.player]
        colour = css_colour(player.colour)
        lying = placed.tile.segments[follower.segment].kind is Kind.FIELD
        shape = (
            f'<ellipse cx="{cx:.1f}" cy="{cy:.1f}" rx="17" ry="11"'
            if lying
            else f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="14"'
        )
        out.append(
            f'<g class="follower" data-colour="{escape(player.colour)}">{shape} fill="{colour}" '
            f'stroke="#000" stroke-width="3"/><text x="{cx:.1f}" y="{cy + 7:.1f}" '
            f'text-anchor="middle" font-size="19" font-weight="700" fill="{ink_for(player.colour)}">'
            f"{letter(player.colour)}</text></g>"
        )
    if game.gingerbread is not None:
        for cell, placed in tiles.items():
            if placed.node <= game.gingerbread < placed.node + len(placed.tile.segments):
                px, py = tileart.segment_point(placed.orientation, game.gingerbread - placed.node)
                cx, cy = (cell[0] + px) * T + 18, (cell[1] + py) * T
                out.append(
                    f'<g class="gingerbread"><circle cx="{cx:.1f}" cy="{cy:.1f}" r="12" '
                    f'fill="#a0522d" stroke="#fff" stroke-width="3"/><text x="{cx:.1f}" '
                    f'y="{cy + 6:.1f}" text-anchor="middle" font-size="16" fill="#fff">G</text></g>'
                )
    out.append("</svg>")
    return "".join(out)
