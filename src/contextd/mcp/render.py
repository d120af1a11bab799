"""Tool results: the structured view for programs plus text a model reads at a glance."""

from typing import Any

from mcp.types import CallToolResult, TextContent

__all__ = ["hits_text", "record_text", "reply", "written_text"]


def reply(data: dict[str, Any], text: str) -> CallToolResult:
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
    """A record in full: its label, title, fields and dates."""
    lines = [f"{_label(view)} {view['title']}"]
    if view.get("archived_reason"):
        lines.append(f"Archived because: {view['archived_reason']}")
    for name, value in view["body"].items():
        if isinstance(value, list) and value:
            lines.append(f"{name}:")
            lines.extend(f"  - {item}" for item in value)
        elif value:
            lines.append(f"{name}: {value}")
    for key in ("current", "successor"):
        if view.get(key):
            lines.append(f"{key}: {view[key]['id']} {view[key]['title']}")
    for older in view.get("supersedes", []):
        lines.append(f"replaces: {older['id']} {older['title']}")
    if view["tags"]:
        lines.append("tags: " + ", ".join(view["tags"]))
    lines.append(f"verified {view['verified_at'][:10]}, origin {view['origin']}")
    return "\n".join(lines)


def written_text(view: dict[str, Any], verb: str = "Stored") -> str:
    """After a write: what was stored, and the similar records the agent should look at."""
    lines = [f"{verb} {_label(view)} {view['title']}"]
    similar = view.get("similar", [])
    if similar:
        lines.append("Similar records (check they do not say the same or the opposite):")
        for item in similar:
            line = f"  {_label(item)} {item['title']} (similarity {item['similarity']})"
            if item.get("likely_replaces"):
                line += " <- this may replace it: call supersede(old_id, new_id) if so"
            lines.append(line)
    return "\n".join(lines)


def hits_text(hits: list[dict[str, Any]], degraded: str | None) -> str:
    lines = [f"{n}. {_label(h)} {h['title']} (score {h['score']})" for n, h in enumerate(hits, 1)]
    if not lines:
        lines.append("No matching records.")
    if degraded:
        lines.append(f"Note: {degraded}")
    return "\n".join(lines)
