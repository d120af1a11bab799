"""The pieces of `search`/`recall` forwarding that need no daemon: which argv is forwarded,
the request and answer forms on the socket, and the code stamp."""

import os
from pathlib import Path

import pytest

from contextd.daemon.forward import Command, code_stamp, command_of, parse_answer

STREAMS = (("utf-8", "strict"), ("latin-1", "backslashreplace"))


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["search", "q"], ("search", None)),
        (["--json", "--project", "p", "recall", "q"], ("recall", None)),
        (["--home", "/h", "search", "q"], ("search", "/h")),
        (["--home=/h", "--project=p", "search", "q"], ("search", "/h")),
        (["--home", "/a", "search", "q", "--home", "/b"], ("search", "/b")),
        (["search", "q", "--home=/b", "--kind", "decision"], ("search", "/b")),
        (["search", "--", "--home", "/b"], ("search", None)),  # after --, only arguments
        (["add", "text"], ("add", None)),  # named, for the daemon to refuse
        (["--help", "search"], (None, None)),
        (["--version"], (None, None)),
        (["--home"], (None, None)),
        ([], (None, None)),
    ],
)
def test_the_command_and_home_an_argv_names(
    argv: list[str], expected: tuple[str | None, str | None]
) -> None:
    assert command_of(argv) == expected


def test_a_command_survives_the_socket_byte_for_byte() -> None:
    undecodable = os.fsdecode(b"caf\xe9")  # a Latin-1 name on a UTF-8 system
    sent = Command(
        "/src/contextd:120:1700000000:99",
        ["search", "", "a=b", "über", undecodable, "two\nlines"],
        "/work/" + undecodable,
        {"CONTEXTD_PROJECT": "x=y", "EMPTY": "", "MULTI": "a\nb", "NAME": undecodable},
        True,
        STREAMS,
    )
    got = Command.decode(sent.encode())
    assert got is not None
    assert (got.stamp, got.argv, got.cwd, got.env, got.color, got.streams) == (
        sent.stamp,
        sent.argv,
        sent.cwd,
        sent.env,
        True,
        STREAMS,
    )
    empty = Command.decode(Command("s", [], "/", {}, False, STREAMS).encode())
    assert empty is not None and (empty.argv, empty.env, empty.color) == ([], {}, False)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"HOOK prompt\n\n{}",
        b'{"op": "ping"}\n',
        b"CLI\nstamp\0/cwd\x001",  # too few fields
        b"CLI\ns\0/\x001\0utf-8\0strict\0utf-8\0strict\0three\0search",  # no count
        b"CLI\ns\0/\x001\0utf-8\0strict\0utf-8\0strict\x003\0search\0q",  # fewer than counted
    ],
)
def test_what_is_not_a_command_decodes_to_none(data: bytes) -> None:
    assert Command.decode(data) is None


def test_an_answer_keeps_each_write_on_its_stream_in_order() -> None:
    answer = b"2\n2 6\nNote.\n1 3\nab\n2 0\n"
    assert parse_answer(answer) == (2, [(2, b"Note.\n"), (1, b"ab\n"), (2, b"")])
    assert parse_answer(b"0\n") == (0, [])


@pytest.mark.parametrize(
    "answer",
    [b"", b"0", b"x\n", b"-1\n", b"0\n1 10\nshort", b"0\n3 1\nx", b"0\n1 x\nab", b"0\n1 2"],
)
def test_a_garbled_answer_is_no_answer(answer: bytes) -> None:
    assert parse_answer(answer) is None


def test_the_code_stamp_changes_with_any_source_edit(tmp_path: Path) -> None:
    package = tmp_path / "contextd"
    (package / "cli").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    module = package / "cli" / "main.py"
    module.write_text("A = 1\n", encoding="utf-8")
    (package / "cli" / "__pycache__").mkdir()
    first = code_stamp(str(package))
    assert code_stamp(str(package)) == first
    (package / "cli" / "__pycache__" / "main.pyc").write_bytes(b"compiled")
    assert code_stamp(str(package)) == first  # caches are not code

    stat = module.stat()
    module.write_text("A = 22\n", encoding="utf-8")
    os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # even with the old time
    edited = code_stamp(str(package))
    assert edited != first
    os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert code_stamp(str(package)) not in {first, edited}
    (package / "cli" / "extra.py").write_text("", encoding="utf-8")
    assert code_stamp(str(package)).split(":")[1] == "3"
