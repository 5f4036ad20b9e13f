"""The score report of ``FORMATS.md``: totals, breakdown, per-turn history and final scoring."""

from __future__ import annotations

from .game import Game
from .scoring import CATEGORIES

LAP = 50  # squares on the physical score track


def score_report(game: Game) -> dict:
    """Scores as if the game ended after its last turn (final scoring always applied)."""
    final = game.final_scoring()
    colours = [p.colour for p in game.players]
    players = []
    for index, player in enumerate(game.players):
        breakdown = {c: game.scores[index][c] + final[index][c] for c in CATEGORIES}
        players.append(
            {
                "name": player.name,
                "colour": player.colour,
                "score": sum(breakdown.values()),
                "breakdown": breakdown,
            }
        )
    best = max(p["score"] for p in players)
    return {
        "players": players,
        "turns": [{"scores": dict(zip(colours, totals, strict=True))} for totals in game.history],
        "final_scoring": {c: sum(final[i].values()) for i, c in enumerate(colours)},
        "winner": [p["colour"] for p in players if p["score"] == best],
    }


def laps(score: int) -> tuple[int, int]:
    """(completed laps of the 50-square track, square the marker stands on)."""
    return divmod(score, LAP)


def format_report(report: dict) -> str:
    """A readable table of a score report."""
    header = ["player", "colour", *CATEGORIES, "total", "track"]
    rows = []
    for p in report["players"]:
        lap, square = laps(p["score"])
        track = f"{square}" + (f" (+{lap}x50)" if lap else "")
        rows.append(
            [
                p["name"],
                p["colour"],
                *(str(p["breakdown"][c]) for c in CATEGORIES),
                str(p["score"]),
                track,
            ]
        )
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i < 2 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    out = [line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)]
    turns = len(report["turns"])
    final = ", ".join(f"{c} +{n}" for c, n in report["final_scoring"].items())
    out.append("")
    out.append(f"{turns} turns; final scoring: {final}; winner: {', '.join(report['winner'])}")
    return "\n".join(out)
