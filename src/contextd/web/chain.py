"""A record's history: every record linked to it by supersession, what it replaced and what
replaced it, read through the core's record details and laid out for the SVG graph."""

from msgspec import Struct

from contextd.core.reading.reader import RecordReader
from contextd.models import Record

__all__ = ["MAX_NODES", "Chain", "ChainNode", "history"]

MAX_NODES = 40  # a history longer than this is cut (and says so)

_BOX_W, _BOX_H, _GAP_X, _GAP_Y, _PAD = 210, 54, 46, 14, 8


class ChainNode(Struct, frozen=True):
    record: Record
    x: int
    y: int
    focus: bool  # the record whose page this is


class Chain(Struct, frozen=True):
    """The laid-out graph: nodes in columns by generation (oldest left), edges old -> new."""

    nodes: tuple[ChainNode, ...]
    edges: tuple[tuple[int, int, int, int], ...]  # x1, y1, x2, y2 of each arrow
    width: int
    height: int
    cut: bool  # more records are linked than were drawn
    box_w: int = _BOX_W
    box_h: int = _BOX_H


def history(records: RecordReader, focus: Record) -> Chain:
    """The supersession graph around `focus`, walked both ways from record to record."""
    found: dict[str, Record] = {focus.id: focus}
    links: set[tuple[str, str]] = set()  # (old, new)
    waiting = [focus.id]
    cut = False
    while waiting:
        detail = records.detail(waiting.pop())
        neighbours = [(p, (p.id, detail.record.id)) for p in detail.predecessors]
        if detail.successor is not None:
            neighbours.append((detail.successor, (detail.record.id, detail.successor.id)))
        for record, link in neighbours:
            links.add(link)
            if record.id in found:
                continue
            if len(found) >= MAX_NODES:
                cut = True
                continue
            found[record.id] = record
            waiting.append(record.id)
    return _layout(found, {link for link in links if set(link) <= found.keys()}, focus.id, cut)


def _generations(found: dict[str, Record], links: set[tuple[str, str]]) -> dict[str, int]:
    """Each record's column: one right of the latest record it replaced."""
    replaced: dict[str, list[str]] = {rid: [] for rid in found}
    for old, new in links:
        replaced[new].append(old)
    column: dict[str, int] = {}

    def depth(rid: str, seen: frozenset[str]) -> int:
        if rid not in column:
            olders = [o for o in replaced[rid] if o not in seen]
            column[rid] = 1 + max((depth(o, seen | {rid}) for o in olders), default=-1)
        return column[rid]

    for rid in found:
        depth(rid, frozenset())
    return column


def _layout(found: dict[str, Record], links: set[tuple[str, str]], focus: str, cut: bool) -> Chain:
    column = _generations(found, links)
    rows: dict[int, int] = {}
    place: dict[str, tuple[int, int]] = {}
    for rid in sorted(found, key=lambda r: (column[r], found[r].created_at, r)):
        row = rows.get(column[rid], 0)
        rows[column[rid]] = row + 1
        place[rid] = (_PAD + column[rid] * (_BOX_W + _GAP_X), _PAD + row * (_BOX_H + _GAP_Y))
    nodes = tuple(ChainNode(found[rid], x, y, rid == focus) for rid, (x, y) in place.items())
    edges = tuple(
        (
            place[old][0] + _BOX_W,
            place[old][1] + _BOX_H // 2,
            place[new][0],
            place[new][1] + _BOX_H // 2,
        )
        for old, new in sorted(links)
    )
    columns = max(column.values()) + 1
    width = 2 * _PAD + columns * _BOX_W + (columns - 1) * _GAP_X
    most = max(rows.values())
    height = 2 * _PAD + most * _BOX_H + (most - 1) * _GAP_Y
    return Chain(nodes, edges, width, height, cut)
