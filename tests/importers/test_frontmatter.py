"""The front matter reader: the flat key/value block note tools write, and nothing else."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contextd.importers.frontmatter import FrontMatterError, split_front_matter


def test_scalars_quotes_lists_and_comments_are_read() -> None:
    fields, body = split_front_matter(
        "---\n"
        "name: queue-nats\n"
        'description: "Runs on \\"NATS\\": see the docs"\n'
        "title: 'It''s fine'\n"
        "superseded_by: [[queue-v3]]\n"
        "tags: [queue, 'nats']\n"
        "# a comment\n"
        "aliases:\n"
        "  - broker\n"
        "  - messaging\n"
        "type: project # trailing comment\n"
        "empty:\n"
        "---\n"
        "\n"
        "The body.\n"
    )
    assert fields == {
        "name": "queue-nats",
        "description": 'Runs on "NATS": see the docs',
        "title": "It's fine",
        "superseded_by": "[[queue-v3]]",
        "tags": ["queue", "nats"],
        "aliases": ["broker", "messaging"],
        "type": "project",
        "empty": "",
    }
    assert body == "The body."


def test_windows_line_endings_and_a_closing_dots_line_are_read() -> None:
    fields, body = split_front_matter("---\r\nname: a\r\n...\r\nText\r\n")
    assert fields == {"name": "a"} and body == "Text"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: a\n", "does not start with a front matter block"),
        ("---\nname: a\n", "never closed"),
        ("---\n  - stray\n---\n", "line 2 is a list item outside a list"),
        ('---\nname: "a\\q"\n---\n', "line 2 has a broken escape"),
    ],
)
def test_what_is_not_front_matter_is_named_with_its_line(text: str, message: str) -> None:
    with pytest.raises(FrontMatterError, match=message):
        split_front_matter(text)


@given(st.text())
def test_any_text_is_read_or_refused_with_front_matter_error(text: str) -> None:
    try:
        fields, body = split_front_matter(text)
    except FrontMatterError:
        return
    assert isinstance(body, str)
    assert all(isinstance(v, str | list) for v in fields.values())


@given(st.dictionaries(st.from_regex(r"[a-z][a-z_]{0,10}", fullmatch=True), st.text()))
def test_quoted_values_come_back_as_written(values: dict[str, str]) -> None:
    def quoted(value: str) -> str:
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        return '"' + escaped.replace("\n", "\\n").replace("\t", "\\t") + '"'

    lines = [f"{key}: {quoted(value)}" for key, value in values.items()]
    fields, _ = split_front_matter("---\n" + "\n".join(lines) + "\n---\n")
    assert fields == values
