"""Tool results: the structured view for programs plus text a model reads at a glance."""

from typing import Any

from mcp.types import CallToolResult, TextContent

from contextd.core.recall.presentation import fence, one_line
from contextd.models import Record

__all__ = ["fenced_lines", "held_text", "hits_text", "record_text", "reply", "written_text"]


def reply(data: dict[str, Any], text: str) -> CallToolResult:
    """`data` is the tool's structured content: it must match the tool's model in
    contextd.mcp.outputs, which the SDK checks before the result leaves the server."""
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _label(view: dict[str, Any]) -> str:
    label = f"[{view.get('category') or view['kind']} {view['id']}]"
    if view.get("label"):
        successor = view.get("superseded_by")
        label += f" {view['label']}" + (f" (replaced by {successor})" if successor else "")
    elif view.get("status") == "archived":
        label += " ARCHIVED"
    return label


def record_text(view: dict[str, Any]) -> str:
    """A record in full, fenced: its label, title, fields and dates, one line each."""
    lines = [f"{_label(view)} {one_line(view['title'])}"]
    if view.get("archived_reason"):
        lines.append(f"Archived because: {one_line(view['archived_reason'])}")
    for name, value in view["body"].items():
        if isinstance(value, list) and value:
            lines.append(f"{name}:")
            lines.extend(f"  - {one_line(str(item))}" for item in value)
        elif value:
            lines.append(f"{name}: {one_line(str(value))}")
    for key in ("current", "successor"):
        if view.get(key):
            lines.append(f"{key}: {view[key]['id']} {one_line(view[key]['title'])}")
    for older in view.get("supersedes", []):
        lines.append(f"replaces: {older['id']} {one_line(older['title'])}")
    if view["tags"]:
        lines.append("tags: " + ", ".join(one_line(t) for t in view["tags"]))
    if view.get("group"):
        lines.append(f"group: {one_line(str(view['group']))} (every member project sees it)")
    lines.append(f"verified {view['verified_at'][:10]}, origin {view['origin']}")
    return fence("\n".join(lines))


def held_text(request: str, record: Record) -> str:
    """A change an agent asked for, kept for a person: nothing changed yet."""
    return (
        f"Held for review: the {request} of [{record.kind} {record.id}] "
        f"{one_line(record.title)} waits for a person's approval; the record stays as it is "
        "until then. Do not ask again."
    )


def fenced_lines(head: str, lines: list[str]) -> str:
    """A list of stored records (already one line each) under a head line of our own."""
    return fence("\n".join([head, *lines])) if lines else head


def written_text(view: dict[str, Any], verb: str = "Stored") -> str:
    """After a write: what was stored, and the similar records the agent should look at."""
    lines = [f"{verb} {_label(view)} {one_line(view['title'])}"]
    if view.get("group"):
        lines[0] += f" (in project group {one_line(str(view['group']))}: every member sees it)"
    if view.get("held_for_review"):
        lines = [
            f"Held for review {_label(view)} {one_line(view['title'])}",
            "It is not in memory until a person approves it; do not write it again.",
        ]
    similar = view.get("similar", [])
    if similar:
        lines.append("Similar records (check they do not say the same or the opposite):")
        for item in similar:
            line = f"  {_label(item)} {one_line(item['title'])} (similarity {item['similarity']})"
            if item.get("likely_replaces"):
                line += " <- this may replace it: call supersede(old_id, new_id) if so"
            lines.append(line)
    return "\n".join(lines)


def hits_text(hits: list[dict[str, Any]], degraded: str | None) -> str:
    """Ranked hits, one line each, fenced."""
    lines = [
        f"{n}. {_label(h)} {one_line(h['title'])} (score {h['score']})"
        for n, h in enumerate(hits, 1)
    ]
    text = fence("\n".join(lines)) if lines else "No matching records."
    return f"{text}\nNote: {degraded}" if degraded else text
