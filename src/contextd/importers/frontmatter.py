"""The front matter of a Markdown note: the flat `key: value` block between `---` lines that
note tools write (scalars, quoted or not, and lists in `[a, b]` or `- item` form). Nothing more
of YAML is read; anything else is refused with its line."""

import re

__all__ = ["FrontMatterError", "Value", "split_front_matter"]

Value = str | list[str]

_FENCE = "---"
_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:(?:\s+(.*))?$")
_ITEM = re.compile(r"^\s*-(?:\s+(.*))?$")


class FrontMatterError(ValueError):
    """The front matter cannot be read; the message names the line and what is wrong."""


def split_front_matter(text: str) -> tuple[dict[str, Value], str]:
    """The note's front matter fields and its body (the text after the closing `---`).

    Raises:
        FrontMatterError: the note does not open with `---`, the block is never closed, or a
            line is not `key: value`, a list item or a comment.
    """
    lines = text.replace("\r\n", "\n").split("\n")
    if not lines or lines[0].strip() != _FENCE:
        raise FrontMatterError("it does not start with a front matter block (a `---` line)")
    fields: dict[str, Value] = {}
    current: str | None = None  # the key written without a value, whose list items may follow
    for number, line in enumerate(lines[1:], 2):
        stripped = line.strip()
        if stripped in (_FENCE, "..."):
            return fields, "\n".join(lines[number:]).strip()
        if not stripped or stripped.startswith("#"):
            continue
        item = _ITEM.match(line)
        if item is not None:
            if current is None:
                raise FrontMatterError(f"line {number} is a list item outside a list")
            listed = fields[current]
            fields[current] = [*(listed or []), _scalar(item.group(1) or "", number)]
            continue
        key, value = _pair(line, number)
        if key in fields:
            raise FrontMatterError(f"line {number} repeats the field `{key}`")
        fields[key] = _value(value, number)
        current = key if not value else None
    raise FrontMatterError("its front matter block is never closed with a `---` line")


def _pair(line: str, number: int) -> tuple[str, str]:
    match = _KEY.match(line)
    if match is None:
        raise FrontMatterError(f"line {number} is not a `key: value` line")
    return match.group(1), (match.group(2) or "").strip()


def _value(text: str, number: int) -> Value:
    if text.startswith("[") and text.endswith("]") and not text.startswith("[["):
        inner = text[1:-1].strip()
        return [_scalar(part.strip(), number) for part in inner.split(",")] if inner else []
    return _scalar(text, number)


def _scalar(text: str, number: int) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        try:
            return _unescape(text[1:-1])
        except ValueError:
            raise FrontMatterError(f"line {number} has a broken escape in quotes") from None
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    if text[:1] in ('"', "'"):
        raise FrontMatterError(f"line {number} opens a quote it never closes")
    if " #" in text:  # a trailing comment
        text = text.split(" #", 1)[0].rstrip()
    return text


def _unescape(text: str) -> str:
    out: list[str] = []
    escapes = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "/": "/"}
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            following = text[index + 1 : index + 2]
            if following not in escapes:
                raise ValueError(following)
            out.append(escapes[following])
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)
