"""JSON with comments (Gemini CLI's settings, VS Code-style files): read it, and write an edited
copy that keeps every comment, trailing comma and line the edit did not touch.

json-five parses the text into a model that holds the whitespace and comments around each
value. An edit is made on plain Python data (the writers know nothing of comments); `patch`
then carries it onto the model: unchanged values keep their nodes, changed ones are rebuilt
in the file's indentation, added ones are inserted after their siblings.
"""

import json
from typing import Any

import json5
from json5.dumper import ModelDumper
from json5.loader import ModelLoader
from json5.model import (
    Comment,
    DoubleQuotedString,
    Identifier,
    JSONArray,
    JSONObject,
    JSONText,
    Node,
    String,
    TrailingComma,
    Value,
)

__all__ = ["Document", "load", "render"]

Space = list[str | Comment]


class Document:
    """A parsed JSONC text: its plain data (a copy to edit) and the model it came from."""

    def __init__(self, model: JSONText, data: Any, unit: str) -> None:
        self.model = model
        self.original = data
        self.data = json.loads(json.dumps(data))  # the writers edit this copy
        self.unit = unit


def load(text: str, unit: str = "  ") -> Document:
    """Parse JSON with comments (and trailing commas).

    Raises:
        ValueError: the text is not JSON with comments (the message says where).
    """
    try:
        model = json5.loads(text, loader=ModelLoader())
        data = json5.loads(text)
    except Exception as exc:  # json-five raises its own error classes, and a few others
        raise ValueError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    return Document(model, data, unit)


def render(document: Document) -> str:
    """The text of the document with its edited data."""
    document.model.value = _patch(
        document.model.value, document.original, document.data, "", document.unit
    )
    document.original = json.loads(json.dumps(document.data))
    dumper: Any = ModelDumper()  # json-five types `dumper` as its other dumper class
    text: str = json5.dumps(document.model, dumper=dumper)
    return text


def _patch(node: Value, before: Any, after: Any, indent: str, unit: str) -> Value:
    if _same(before, after):
        return node
    if isinstance(node, JSONObject) and isinstance(before, dict) and isinstance(after, dict):
        _patch_object(node, before, after, indent, unit)
        return node
    if isinstance(node, JSONArray) and isinstance(before, list) and isinstance(after, list):
        _patch_array(node, before, after, indent, unit)
        return node
    fresh = _node(after, indent, unit)
    fresh.wsc_before, fresh.wsc_after = node.wsc_before, node.wsc_after
    return fresh


def _same(left: Any, right: Any) -> bool:
    return type(left) is type(right) and left == right


def _name(key: Node) -> str:
    if isinstance(key, Identifier):
        return key.name
    assert isinstance(key, String)
    return key.characters


def _patch_object(
    node: JSONObject, before: dict[str, Any], after: dict[str, Any], indent: str, unit: str
) -> None:
    inner = _inner_indent(node, indent, unit)
    old = {_name(k): (k, v) for k, v in zip(node.keys, node.values, strict=True)}
    for name in [n for n in old if n not in after]:
        _remove(node, node.keys.index(old[name][0]))
    for name, value in after.items():
        if name in old:
            key, child = old[name]
            at = node.keys.index(key)
            node.values[at] = _patch(child, before[name], value, inner, unit)
        else:
            key = DoubleQuotedString(name, json.dumps(name, ensure_ascii=False))
            child = _node(value, inner, unit)
            key.wsc_after, child.wsc_before = [], [" "]
            _append(node, key, child, inner, indent)


def _patch_array(
    node: JSONArray, before: list[Any], after: list[Any], indent: str, unit: str
) -> None:
    inner = _inner_indent(node, indent, unit)
    kept: list[tuple[Value, Any]] = []  # (node, its value before) for what stays, in order
    cursor = 0
    for value in after:
        match = next((k for k in range(cursor, len(before)) if _same(before[k], value)), None)
        if match is not None:
            kept.append((node.values[match], value))
            cursor = match + 1
        elif (
            cursor < len(before)
            and type(before[cursor]) is type(value)
            and isinstance(value, dict | list)
        ):
            kept.append((_patch(node.values[cursor], before[cursor], value, inner, unit), value))
            cursor += 1
        else:
            kept.append((_node(value, inner, unit), None))
    old = list(node.values)
    survivors = [n for n, _v in kept if any(n is o for o in old)]
    for index in reversed(range(len(old))):
        if not any(old[index] is s for s in survivors):
            _remove(node, index)
    for position, (child, _value) in enumerate(kept):
        if not any(child is v for v in node.values):
            _insert_value(node, position, child, inner, indent)


def _inner_indent(node: JSONObject | JSONArray, indent: str, unit: str) -> str:
    first: Node | None = node.keys[0] if isinstance(node, JSONObject) and node.keys else None
    if first is None and isinstance(node, JSONArray) and node.values:
        first = node.values[0]
    if first is not None:
        spaces = [s for s in first.wsc_before if isinstance(s, str) and "\n" in s]
        if spaces:
            return spaces[-1].rsplit("\n", 1)[1]
    return indent + unit


def _split_line(space: Space) -> tuple[Space, Space]:
    """What stays on the current line (a trailing comment), and the rest from the newline."""
    for at, item in enumerate(space):
        if isinstance(item, str) and "\n" in item:
            head, tail = item.split("\n", 1)
            return [*space[:at], *([head] if head else [])], ["\n" + tail, *space[at + 1 :]]
    return list(space), []


def _members(node: JSONObject | JSONArray) -> list[Value]:
    return node.values


def _append(node: JSONObject, key: Node, value: Value, inner: str, indent: str) -> None:
    _open_slot(node, key, value, inner, indent)
    node.keys.append(key)  # type: ignore[arg-type]
    node.values.append(value)


def _insert_value(node: JSONArray, position: int, value: Value, inner: str, indent: str) -> None:
    if position >= len(node.values):
        _open_slot(node, value, value, inner, indent)
        node.values.append(value)
        return
    after = node.values[position]
    value.wsc_before = list(after.wsc_before) or ["\n" + inner]
    value.wsc_after = []
    node.values.insert(position, value)


def _open_slot(
    node: JSONObject | JSONArray, head: Node, tail: Node, inner: str, indent: str
) -> None:
    """Lay out a new last member: its own line, with the closing space moved after it."""
    members = _members(node)
    if not members:
        comments = [c for c in node.leading_wsc if isinstance(c, Comment)]
        head.wsc_before = (
            ["\n" + inner, *_with_newlines(comments, inner)] if comments else ["\n" + inner]
        )
        node.leading_wsc = []
        tail.wsc_after = ["\n" + indent]
        return
    holder: Node = node.trailing_comma if node.trailing_comma is not None else members[-1]
    same_line, rest = _split_line(holder.wsc_after)
    head.wsc_before = [*same_line, "\n" + inner]
    if isinstance(holder, TrailingComma):
        holder.wsc_after = rest
    else:
        holder.wsc_after = []
        tail.wsc_after = rest or ["\n" + indent]


def _with_newlines(comments: list[Comment], inner: str) -> Space:
    spaced: Space = []
    for comment in comments:
        spaced += [comment, "\n" + inner]
    return spaced


def _remove(node: JSONObject | JSONArray, index: int) -> None:
    members = _members(node)
    lead = node.keys[index] if isinstance(node, JSONObject) else members[index]
    same_line, _rest = _split_line(lead.wsc_before)
    closing = members[index].wsc_after
    if isinstance(node, JSONObject):
        del node.keys[index]
    del members[index]
    if index < len(members):  # the next member takes over the removed one's line start
        nxt = node.keys[index] if isinstance(node, JSONObject) else members[index]
        nxt.wsc_before = [*same_line, *_split_line(nxt.wsc_before)[1]]
    elif members and node.trailing_comma is not None:  # `last, // its comment` stays so
        comma = node.trailing_comma
        comma.wsc_after = [*same_line, *_split_line(comma.wsc_after)[1]]
    elif members:  # no comma follows the new last member: its comment can end the line
        members[-1].wsc_after = [*same_line, *closing]
    else:
        node.leading_wsc = (
            [*same_line, *closing] if any(isinstance(s, Comment) for s in same_line) else []
        )
        node.trailing_comma = None


def _node(value: Any, indent: str, unit: str) -> Value:
    """A model of `value` laid out like the file: `unit` per level, starting at `indent`."""
    text = json.dumps(value, indent=unit, ensure_ascii=False)
    text = text.replace("\n", "\n" + indent)
    parsed = json5.loads(text, loader=ModelLoader())
    assert isinstance(parsed, JSONText)
    fresh = parsed.value
    fresh.wsc_before, fresh.wsc_after = [], []
    return fresh
