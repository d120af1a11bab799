"""The sessions and checkpoints of a project as one timeline, newest first, and the small SVG
strip that shows them over time."""

from datetime import datetime

from msgspec import Struct

from contextd.clock import now, parse_instant
from contextd.core.workspace.sessions import SessionRow, duration_seconds
from contextd.models import Record

__all__ = ["Entry", "Strip", "entries", "strip"]

STRIP_W, STRIP_H = 900, 46


class Entry(Struct, frozen=True):
    """A session with the checkpoints made in it, or a checkpoint made outside any session."""

    at: str  # when it started (a session) or was made (a checkpoint)
    session: SessionRow | None
    seconds: int
    checkpoints: tuple[Record, ...]


class Mark(Struct, frozen=True):
    x: float
    width: float  # 0 for a checkpoint
    label: str
    open: bool = False


class Strip(Struct, frozen=True):
    marks: tuple[Mark, ...]
    start: str
    end: str
    width: int = STRIP_W
    height: int = STRIP_H


def entries(sessions: list[SessionRow], checkpoints: list[Record]) -> list[Entry]:
    """Each checkpoint under the session it was linked to or made during; the rest alone."""
    until = now()
    windows = {s.id: (s.started_at, s.ended_at or until) for s in sessions}
    placed: dict[str, list[Record]] = {s.id: [] for s in sessions}
    alone: list[Entry] = []
    for checkpoint in checkpoints:
        owner = checkpoint.session_id if checkpoint.session_id in placed else None
        if owner is None:
            owner = next(
                (sid for sid, (a, b) in windows.items() if a <= checkpoint.created_at <= b), None
            )
        if owner is None:
            alone.append(Entry(checkpoint.created_at, None, 0, (checkpoint,)))
        else:
            placed[owner].append(checkpoint)
    made = [
        Entry(
            s.started_at,
            s,
            duration_seconds(s.started_at, s.ended_at or until),
            tuple(sorted(placed[s.id], key=lambda r: r.created_at, reverse=True)),
        )
        for s in sessions
    ]
    return sorted(made + alone, key=lambda e: e.at, reverse=True)


def strip(timeline: list[Entry]) -> Strip | None:
    """Sessions as bars and lone checkpoints as ticks between the first entry and now."""
    if not timeline:
        return None
    end = now()
    start = min(e.at for e in timeline)
    first, last = parse_instant(start), parse_instant(end)
    span = max((last - first).total_seconds(), 1.0)

    def x(moment: datetime) -> float:
        return round(10 + (STRIP_W - 20) * (moment - first).total_seconds() / span, 1)

    marks = []
    for entry in timeline:
        began = parse_instant(entry.at)
        if entry.session is None:
            marks.append(Mark(x(began), 0, f"checkpoint: {entry.checkpoints[0].title}"))
            continue
        stop = parse_instant(entry.session.ended_at or end)
        left = x(began)
        marks.append(
            Mark(
                left,
                max(x(stop) - left, 2.0),
                f"session by {entry.session.agent}, {entry.at[:16].replace('T', ' ')}",
                entry.session.ended_at is None,
            )
        )
    return Strip(tuple(marks), start, end)
