"""Joint decode of a whole board: each cell's candidates re-ranked by agreement with neighbours.

Iterated conditional modes over the cells' top candidates: a cell's choice earns ``side_weight``
for every side that matches the current choice of the neighbour across it and loses as much for
every side that does not; types used more often than the tile set holds cost ``count_weight`` per
extra copy. A few sweeps settle on a layout whose sides agree wherever the image allows.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from .tiles import Candidate

_NEIGHBOURS = ((0, -1, 0, 2), (1, 0, 1, 3), (0, 1, 2, 0), (-1, 0, 3, 1))  # dx, dy, my side, theirs


def decode(cells: dict[tuple[int, int], list[Candidate]], tileset, cfg: dict):
    """The chosen candidate per cell (same keys) after the joint re-ranking."""
    k = int(cfg["candidates"])
    cand = {c: lst[:k] for c, lst in cells.items()}
    logp = {c: np.log(np.array([x.prob for x in lst]) + 1e-9) for c, lst in cand.items()}
    sides = {
        c: [tileset[x.tile].oriented(x.rotation).sides for x in lst] for c, lst in cand.items()
    }
    choice = {c: 0 for c in cand}
    counts = tileset.counts()
    sw, cw = float(cfg["side_weight"]), float(cfg["count_weight"])
    order = sorted(cand, key=lambda c: cand[c][0].prob)  # unsure cells adapt to sure ones first
    for _ in range(int(cfg["iterations"])):
        used = Counter(cand[c][choice[c]].tile for c in cand)
        changed = 0
        for c in order:
            x, y = c
            cur = cand[c][choice[c]].tile
            used[cur] -= 1
            best, best_i = -np.inf, choice[c]
            for i, s in enumerate(sides[c]):
                score = logp[c][i]
                for dx, dy, mine, theirs in _NEIGHBOURS:
                    n = (x + dx, y + dy)
                    if n in choice:
                        score += sw if sides[n][choice[n]][theirs] == s[mine] else -sw
                t = cand[c][i].tile
                over = used[t] + 1 - counts.get(t, 0)
                if over > 0:
                    score -= cw * over
                if score > best:
                    best, best_i = score, i
            if best_i != choice[c]:
                changed += 1
                choice[c] = best_i
            used[cand[c][choice[c]].tile] += 1
        if not changed:
            break
    return {c: cand[c][choice[c]] for c in cand}


def side_conflicts(layout: dict[tuple[int, int], tuple[str, int]], tileset) -> int:
    """How many shared sides disagree in a layout of (tile, rotation) per cell."""
    bad = 0
    for (x, y), (t, r) in layout.items():
        s = tileset[t].oriented(r).sides
        for dx, dy, mine, theirs in _NEIGHBOURS[1:3]:
            n = layout.get((x + dx, y + dy))
            if n and tileset[n[0]].oriented(n[1]).sides[theirs] != s[mine]:
                bad += 1
    return bad
