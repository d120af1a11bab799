"""The one printer: every line the CLI prints goes through `write` (or `echo`), in the
in-process commands and in the daemon's fast client alike. It styles as click styles, shows
colours on a terminal unless $NO_COLOR or --color says otherwise, writes UTF-8 where a stream
claims ASCII, degrades what another encoding cannot carry (a Windows console's cp1252: ✓
becomes "ok", an unknown character "?", and in JSON a \\u escape, so the data stays whole)
and makes whatever it prints safe for a terminal (`terminal_text`). The standard library
only: the fast client must not pay for importing click.
"""

import codecs
import json
import os
import re
import sys
from typing import Any

__all__ = [
    "COLOUR_MODES",
    "Printout",
    "clip",
    "colour_on",
    "echo",
    "json_text",
    "terminal_text",
    "kind_cell",
    "state_cell",
    "strip",
    "style",
    "table_lines",
    "terminal_width",
    "use_colour",
    "write",
]

Printout = list[tuple[int, str]]  # (1 for stdout or 2 for stderr, text), in order

_COLOURS = {"red": 31, "green": 32, "yellow": 33, "magenta": 35, "cyan": 36, "bright_black": 90}
_KIND_COLOUR = {
    "decision": "cyan",
    "constraint": "red",
    "pipeline": "magenta",
    "checkpoint": "yellow",
    "memory": "green",
}
_RESET = "\x1b[0m"

# --color: auto (a terminal, unless $NO_COLOR is set: no-color.org), always, never.
COLOUR_MODES = ("auto", "always", "never")
_colour_mode = "auto"

# Our own decorations, in the plain ASCII a console without them shows instead.
_PLAIN = {
    "✓": "ok",
    "✗": "x",
    "─": "-",
    "…": "...",
    "·": "-",
    "→": "->",
    "←": "<-",
    "•": "*",
    "—": "-",
    "–": "-",
    "‹": "<",
    "›": ">",
    "“": '"',
    "”": '"',
    "‘": "'",
    "’": "'",
}

# What may reach a terminal of a text contextd prints: the styles it writes itself (colours,
# bold, dim, reset) and line breaks and tabs. Any other escape sequence (a title, a cursor move,
# a hyperlink) and any other control or invisible character is dropped, whatever its source: a
# record, a file name, a project or remote name.
_UNSAFE = re.compile(
    "(\x1b\\[(?:0|1|2|22|39|3[0-7]|9[0-7])m)"  # kept: our own styles
    "|\x1b(?:\\[[0-?]*[ -/]*[@-~]?"  # any other CSI sequence
    "|\\][^\x07\x1b]*(?:\x07|\x1b\\\\)?|[PX^_][^\x1b]*(?:\x1b\\\\)?|.)?"  # OSC, DCS...
    "|\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]"
)
# Characters that hide or reorder text, written out in JSON (where they may only stand in a
# string) so the data stays the same and the terminal shows what it is.
_INVISIBLE = re.compile("[\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_FORMAT = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def style(text: str, fg: str | None = None, *, bold: bool = False, dim: bool = False) -> str:
    """`text` in ANSI codes (the codes click writes)."""
    codes = f"\x1b[{_COLOURS[fg]}m" if fg else ""
    codes += "\x1b[1m" if bold else ""
    codes += "\x1b[2m" if dim else ""
    return f"{codes}{text}{_RESET}"


def strip(text: str) -> str:
    """`text` without ANSI escape sequences (ESC [ digits ; ? … letter)."""
    if "\x1b" not in text:
        return text
    out: list[str] = []
    at = 0
    while (start := text.find("\x1b[", at)) >= 0:
        end = start + 2
        while end < len(text) and (
            text[end].isdigit() and text[end].isascii() or text[end] in ";?"
        ):
            end += 1
        if end < len(text) and text[end].isascii() and text[end].isalpha():
            out.append(text[at:start])
            at = end + 1
        else:
            out.append(text[at : start + 2])
            at = start + 2
    out.append(text[at:])
    return "".join(out)


def terminal_text(text: str) -> str:
    """`text` safe to print on a terminal (see _UNSAFE): line breaks and tabs kept, a CR LF
    read as a line break, every other control character and foreign escape sequence gone."""
    if text.isprintable():
        return text
    cleaned = _UNSAFE.sub(_kept, text)
    return _FORMAT.sub("", cleaned)


def _kept(match: re.Match[str]) -> str:
    if match[1]:
        return match[1]
    return "\n" if match[0] == "\r\n" else ""


def json_text(payload: Any, *, indent: int | None = None) -> str:
    """`payload` as JSON for a terminal: non-ASCII text as it is, but invisible and control
    characters as \\u escapes, so the data is whole and nothing acts on the terminal."""
    text = json.dumps(payload, ensure_ascii=False, indent=indent)
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def echo(message: object = "", *, err: bool = False, nl: bool = True) -> None:
    """Print one message on stdout (stderr with `err`), as `write` prints."""
    write([(2 if err else 1, f"{message}\n" if nl else f"{message}")])


def kind_cell(kind: str, label: str) -> str:
    """A record's kind (or a memory's category), in its kind's colour."""
    return style(label, fg=_KIND_COLOUR[kind])


def state_cell(state: str) -> str:
    """NOT CURRENT in bold red, archived dimmed, anything else as it is."""
    if state == "archived":
        return style(state, dim=True)
    return style(state, fg="red", bold=True) if state else ""


def terminal_width(default: int = 100) -> int:
    """$COLUMNS, else the width of the terminal on stdout, else `default` (as shutil's)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0 and sys.__stdout__ is not None:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else default


def clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: max(width - 1, 1)] + "…"


def table_lines(rows: list[list[str]], clip_column: int | None = 3) -> list[str]:
    """Rows as aligned columns; one column (the title) is clipped to the terminal width."""
    if not rows:
        return []
    visible = [[strip(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in visible) for i in range(len(rows[0]))]
    title_col = -1 if clip_column is None else clip_column
    fixed = sum(w + 2 for i, w in enumerate(widths) if i != title_col)
    room = max(terminal_width() - fixed, 20)
    lines = []
    for row, plain in zip(rows, visible, strict=True):
        cells = []
        for i, (cell, text) in enumerate(zip(row, plain, strict=True)):
            if i == title_col:
                cells.append(clip(text, room).ljust(min(widths[i], room)))
            else:
                cells.append(cell + " " * (widths[i] - len(text)))
        lines.append("  ".join(cells).rstrip())
    return lines


def use_colour(mode: str) -> None:
    """What --color asked for, for everything printed from now on in this process."""
    global _colour_mode
    _colour_mode = mode if mode in COLOUR_MODES else "auto"


def colour_on(stream: object) -> bool:
    """Whether styles reach `stream`: --color always or never, else a terminal without
    $NO_COLOR (set and not empty)."""
    if _colour_mode != "auto":
        return _colour_mode == "always"
    return not os.environ.get("NO_COLOR") and _isatty(stream)


def write(printout: Printout) -> None:
    """Print each piece on its stream; what a stream's encoding cannot carry is degraded
    (`_encoded`), never refused."""
    pieces = [(sys.stdout if fd == 1 else sys.stderr, text) for fd, text in printout]
    prepared = [(stream, _encoded(stream, text)) for stream, text in pieces if stream is not None]
    for stream, data in prepared:
        if isinstance(data, bytes):
            stream.flush()
            stream.buffer.write(data)
            stream.buffer.flush()
        else:
            stream.write(data)
            stream.flush()


def _encoded(stream: object, text: str) -> str | bytes:
    """`text` as it goes to `stream`: safe for a terminal, without colour codes off one, as
    UTF-8 bytes on a stream that claims ASCII (click's choice), and in any other encoding
    with what it cannot carry degraded (`_degraded`)."""
    text = terminal_text(text)
    if not colour_on(stream):
        text = strip(text)
    encoding = getattr(stream, "encoding", None) or "ascii"
    try:
        if codecs.lookup(encoding).name == "ascii":
            return text.encode("utf-8", "replace")
        text.encode(encoding, getattr(stream, "errors", None) or "strict")
    except LookupError:  # an encoding Python does not know: plain ASCII is safe anywhere
        encoding = "ascii"
    except UnicodeEncodeError:
        pass
    else:
        return text
    return _degraded(text, encoding)


def _degraded(text: str, encoding: str) -> str:
    """`text` in what `encoding` can carry: a JSON document's characters as \\u escapes (the
    same data), anything else in plain words (`_PLAIN`) or "?"."""
    handler = "contextd-json" if _is_json(text) else "contextd-plain"
    return text.encode(encoding, handler).decode(encoding)


def _is_json(text: str) -> bool:
    shape = text.lstrip()[:1]
    if shape not in ("{", "["):
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _plain_words(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    bad = error.object[error.start : error.end]
    return "".join(_PLAIN.get(c, "?") for c in bad), error.end


def _json_escapes(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    bad = error.object[error.start : error.end]
    units = bad.encode("utf-16-be", "surrogatepass")  # a pair of escapes beyond the BMP
    escaped = "".join(
        f"\\u{int.from_bytes(units[i : i + 2], 'big'):04x}" for i in range(0, len(units), 2)
    )
    return escaped, error.end


codecs.register_error("contextd-plain", _plain_words)
codecs.register_error("contextd-json", _json_escapes)


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except Exception:
        return False
