"""Timestamps: one ISO-8601 UTC format everywhere, user date input, and human ages."""

import re
from datetime import UTC, datetime, timedelta

from contextd.errors import InvalidInputError

__all__ = [
    "CLOCK_SKEW",
    "age",
    "duration",
    "is_stamp",
    "now",
    "parse_date",
    "parse_instant",
    "parse_span",
    "parse_when",
    "to_iso",
]

CLOCK_SKEW = timedelta(minutes=10)  # how far ahead of ours another machine's clock may run
_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")
_RELATIVE = re.compile(r"^(\d+)\s*([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_SPAN = re.compile(r"^(\d{1,9})\s*([smhdw]?)$")
_SPAN_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_OFF = ("", "0", "off", "never")


def now() -> str:
    """Return the current instant as an ISO-8601 UTC string with milliseconds."""
    return to_iso(datetime.now(UTC))


def to_iso(moment: datetime) -> str:
    """Format an aware datetime the way the store keeps instants (sortable as text)."""
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


def is_stamp(text: object) -> bool:
    """Whether `text` is an instant in the store's own form (2026-01-31T12:00:00.000Z)."""
    return isinstance(text, str) and _STAMP.fullmatch(text) is not None


def parse_instant(text: str) -> datetime:
    """Parse an ISO-8601 instant written by the store."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def parse_when(text: str, *, reference: datetime | None = None) -> datetime | None:
    """Read a date a person typed: `2026-11-01`, an ISO instant, or a span back like `30d`.

    Returns None when the text is none of those.

    Raises:
        InvalidInputError: a span reaching back before the year 1 (`99999999d`).
    """
    text = text.strip()
    relative = _RELATIVE.match(text.lower())
    if relative:
        try:  # int() refuses a number of over 4,300 digits with ValueError
            amount = int(relative.group(1))
            return (reference or datetime.now(UTC)) - timedelta(
                **{_UNITS[relative.group(2)]: amount}
            )
        except (OverflowError, ValueError):
            raise InvalidInputError(
                f"{text!r} reaches back before the year 1; give a date or a shorter span."
            ) from None
    try:
        moment = parse_instant(text)
        moment.astimezone(UTC)  # an offset that pushes it out of the calendar fails here
    except (ValueError, OverflowError):
        return None
    return moment


def parse_span(text: str) -> int | None:
    """Seconds in a length of time a person typed for a setting: `90s`, `30m`, `3h`, `1d`,
    `2w` (a bare number is seconds); 0 for `off`, `never`, `0` or nothing.

    Returns None when the text is none of those.
    """
    text = text.strip().lower()
    if text in _OFF:
        return 0
    span = _SPAN.match(text)
    if span is None:
        return None
    return int(span.group(1)) * _SPAN_SECONDS[span.group(2)]


def parse_date(text: str | None, option: str) -> str | None:
    """A --since/--before value as an ISO instant, or a clear error naming `option`.

    Raises:
        InvalidInputError: it is not a date, or reaches back before the year 1.
    """
    if text is None:
        return None
    moment = parse_when(text)
    if moment is None:
        raise InvalidInputError(
            f"{option} {text!r} is not a date; use 2026-11-01, an ISO time, or 30d / 12h / 2w."
        )
    return to_iso(moment)


def duration(seconds: int) -> str:
    """A span the way a person reads it: 42s, 27m 42s, 3h 05m, 2d 4h."""
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes:02d}m"
    return f"{minutes}m {secs:02d}s" if minutes else f"{secs}s"


def age(text: str, *, reference: datetime | None = None) -> str:
    """Say how long ago an ISO instant was, the way a person would ('3 hours ago')."""
    seconds = int(((reference or datetime.now(UTC)) - parse_instant(text)).total_seconds())
    if seconds < 60:
        return "just now"
    for size, unit in (
        (604800 * 52, "year"),
        (86400 * 30, "month"),
        (604800, "week"),
        (86400, "day"),
        (3600, "hour"),
        (60, "minute"),
    ):
        if seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''} ago"
    return "just now"
