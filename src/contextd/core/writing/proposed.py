"""A record a chat model proposes, read as untrusted input: how the kinds are described to
the model, and each field taken only when it has the type it must have. Used by refresh's
summarizer and by capture's extractor; what they read then passes the checks every write
passes (contextd.core.writing.validation)."""

from typing import Any

from contextd.errors import ValidationError
from contextd.fields import KINDS, body_fields

__all__ = ["describe_kinds", "typed_value"]


def describe_kinds(kinds: tuple[str, ...]) -> str:
    """One line per kind: what its title says and its body fields, for a model's instructions."""
    return "\n".join(
        f'- "{kind}": title = {KINDS[kind].title_help} Body fields: '
        + (
            ", ".join(
                f'"{f.name}" ({"a list of texts" if f.many else "text"}'
                + (f", one of {', '.join(f.choices)}" if f.choices else "")
                + f"): {f.help}"
                for f in body_fields(kind)
            )
            or "none"
        )
        + ('; and a one-word "category".' if kind == "memory" else ".")
        for kind in kinds
    )


def typed_value(name: str, value: object, *, many: bool) -> Any:
    """`value` as text (or a tuple of texts); another type is refused, naming the field."""
    if value is None:
        return () if many else ""
    if many and isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    if not many and isinstance(value, str):
        return value
    shape = "a list of texts" if many else "text"
    raise ValidationError(name, f"The proposed record's {name} must be {shape}.")
