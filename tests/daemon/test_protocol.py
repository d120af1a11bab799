"""The pieces of the daemon's protocol that need no daemon: the fast client's reading of an
argv against click's, frames and the typed requests."""

import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from click.testing import CliRunner

from contextd.cli import hot
from contextd.cli._context import state
from contextd.cli.main import cli
from contextd.client import commands, quick
from contextd.models import Kind
from contextd.service.requests import Ping, SearchAsk, WriteAsk, decode_request
from contextd.wire import frames

ACCEPTED = [
    ["search", "q"],
    ["search", "q", "--color", "never"],
    ["--json", "--project", "p", "recall", "q"],
    ["--home", "/h", "search", "q"],
    ["--home=/h", "--project=p", "search", "q"],
    ["--home", "/a", "search", "q", "--home", "/b"],  # the command's own --home wins
    ["--home", "/a", "search", "q", "--home", ""],  # an empty one is ignored
    ["search", "q", "--home=/b", "--kind", "decision", "--kind=pipeline"],
    ["search", "--", "--home"],  # after --, only arguments
    ["search", "-", "--limit", " 7"],
    ["search", "q", "--tag", "--json", "--category", ""],  # a value may start with a dash
    ["recall", "q", "--budget", "120", "--explain", "--mmr", "--include-archived"],
    ["search", "q", "--since", "30d", "--before", "2026-11-01", "--include-superseded"],
]
REFUSED = [
    ["--help", "search"],
    ["search", "--help"],
    ["--version"],
    ["--home"],
    [],
    ["add", "text"],
    ["search", "a", "b"],
    ["search", "q", "--limit", "0"],
    ["search", "q", "--limit", "201"],
    ["search", "q", "--limit", "ten"],
    ["search", "q", "--kind", "Decision"],
    ["search", "q", "--explain=yes"],
    ["search", "q", "--budget", "100"],  # recall's, not search's
    ["recall", "q", "--limit", "3"],
    ["search", "q", "--tag"],
    ["search", "-x"],
]


def _click_reading(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any] | None:
    """What click passes the command (with the root's state, its one argument as "argument"),
    or None when it refuses."""
    seen: dict[str, Any] = {}

    def capture(**params: Any) -> None:
        current = state()
        seen.update(params, json=current.json, home=current.home)
        seen["project"] = current.project

    for command in hot.COMMANDS:
        monkeypatch.setattr(command, "callback", capture)
    result = CliRunner().invoke(cli, argv)
    return seen if result.exit_code == 0 and seen else None


def _normal(values: dict[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, list | tuple) else v for k, v in values.items()}


@pytest.mark.parametrize("argv", ACCEPTED)
def test_the_fast_reader_reads_an_argv_as_click_does(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed = commands.parse(argv)
    assert parsed is not None
    clicked = _click_reading(argv, monkeypatch)
    assert clicked is not None
    # --color goes to the printer (use_colour) on both paths, not to the command.
    colour = parsed.values.pop("color")
    assert colour == (argv[argv.index("--color") + 1] if "--color" in argv else None)
    assert _normal({**parsed.values, "argument": parsed.argument}) == _normal(clicked)


@pytest.mark.parametrize("argv", REFUSED)
def test_what_the_fast_reader_leaves_to_click(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert commands.parse(argv) is None
    if argv[:1] in (["search"], ["recall"]) and "--help" not in argv:
        assert _click_reading(argv, monkeypatch) is None  # click refuses it too


def test_a_bare_search_is_one_sentence_on_either_path(repo: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "contextd", "search"],
        capture_output=True, text=True, encoding="utf-8", cwd=repo, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert (
        done.stderr.startswith("Error: Give a query, or a filter")
        and "Traceback" not in done.stderr
    )


def test_the_fast_clients_request_is_the_daemons_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CONTEXTD_PROJECT", "orbit")
    parsed = commands.parse(["search", "q", "--kind", "decision", "--since", "2026-11-01"])
    assert parsed is not None
    where = quick.place(None, None)
    assert where is not None
    request = commands.request(commands.COMMANDS["search"], parsed.argument, parsed.values, where)
    assert request["project"] == "orbit"
    decoded = decode_request(msgspec.json.encode(request))
    assert isinstance(decoded, SearchAsk)
    assert decoded.folder == str(tmp_path) and decoded.query.kinds == (Kind.DECISION,)
    assert decoded.query.since == "2026-11-01T00:00:00.000Z"


@pytest.mark.parametrize(
    "head",
    [
        b"",
        b"{}",
        b'{"kind": "ping", "extra": 1}',
        b'{"kind": "search", "home": "/h", "stamp": "s", "project": null, "folder": ""}',
        b'{"kind": "hook", "home": "/h", "stamp": "s", "event": "prompt", "project": null, '
        b'"folder": "/' + b"a" * 5000 + b'"}',
    ],
)
def test_a_head_that_is_not_a_request_is_refused(head: bytes) -> None:
    with pytest.raises(msgspec.DecodeError):
        decode_request(head)
    assert isinstance(decode_request(b'{"kind": "ping"}'), Ping)


def test_frames_cross_a_socket_and_bounds_hold() -> None:
    left, right = socket.socketpair()
    with left, right:
        right.settimeout(5)
        left.sendall(frames.encode(b'{"a": 1}', b"\x00body"))
        assert frames.read(right) == (b'{"a": 1}', b"\x00body")
        left.sendall(frames.encode(b"x" * 100))
        with pytest.raises(frames.BadFrame, match="over the limit"):
            frames.read(right, max_head=10)
    left, right = socket.socketpair()
    with left, right:
        right.settimeout(5)
        left.sendall(b"ctxd\x02" + bytes(8))
        with pytest.raises(frames.BadFrame, match="not a contextd frame"):
            frames.read(right)
        left.sendall(frames.encode(b"head")[:-2])
        left.close()
        with pytest.raises(frames.BadFrame, match="closed"):
            frames.read(right)


RECORD_ACCEPTED = [
    ["add", "Node 20 is required", "--category", "gotcha"],
    [
        "--json",
        "add",
        "Node 20 is required",
        "--category=gotcha",
        "--tag",
        "build",
        "--tag=node",
        "--priority",
        "5",
        "--origin",
        "agent",
        "--global",
        "--private",
        "--force",
    ],
    [
        "decide",
        "Use NATS",
        "--problem",
        "p",
        "--why",
        "w",
        "--alternatives",
        "Redis",
        "--tried=t",
        "--tradeoffs",
        "o",
        "--related",
        "abc",
        "--supersedes",
        "def",
    ],
    [
        "constrain",
        "Never edit applied migrations",
        "--reason",
        "r",
        "--hardness",
        "absolute",
        "--scope",
        "migrations/**",
        "--scope",
        "db/**",
        "--incident",
        "i",
    ],
    ["pipeline", "Release", "--purpose", "p", "--step", "a", "--step", "b", "--hint", "ship"],
    ["--project", "orbit", "checkpoint", "wip", "--next", "n1", "--next", "n2", "--done", "d"],
    ["add", "--category", "gotcha", "--", "--a text that starts with dashes"],
]
RECORD_REFUSED = [
    ["add", "Node 20 is required"],  # --category is required
    ["add", "Node 20 is required", "--category", "gotcha", "--priority", "9"],
    ["add", "Node 20 is required", "--category", "gotcha", "--origin", "system"],
    ["add", "one", "two", "--category", "gotcha"],
    ["add", "--help"],
    ["constrain", "r", "--reason", "x", "--hardness", "sometimes"],
    ["pipeline", "Release", "--purpose", "p"],  # no step
    ["decide", "s", "--problem", "p"],  # no --why
    ["checkpoint", "wip", "--limit", "3"],
]


@pytest.mark.parametrize("argv", RECORD_ACCEPTED)
def test_the_fast_reader_reads_a_record_command_as_click_does(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed = commands.parse(argv)
    assert parsed is not None
    clicked = _click_reading(argv, monkeypatch)
    assert clicked is not None
    # --color goes to the printer (use_colour) on both paths, not to the command.
    colour = parsed.values.pop("color")
    assert colour == (argv[argv.index("--color") + 1] if "--color" in argv else None)
    assert _normal({**parsed.values, "argument": parsed.argument}) == _normal(clicked)


@pytest.mark.parametrize("argv", RECORD_REFUSED)
def test_what_the_fast_reader_leaves_to_click_of_a_record_command(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert commands.parse(argv) is None
    if "--help" not in argv:
        assert _click_reading(argv, monkeypatch) is None  # click refuses it too


@pytest.mark.parametrize("argv", RECORD_ACCEPTED)
def test_a_fast_write_request_is_the_daemons_type(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    parsed = commands.parse(argv)
    assert parsed is not None
    where = quick.place(None, None)
    assert where is not None
    command = commands.COMMANDS[parsed.command]
    request = commands.request(command, parsed.argument, parsed.values, where)
    decoded = decode_request(msgspec.json.encode(request))
    assert isinstance(decoded, WriteAsk)
    assert decoded.draft.title == parsed.argument
    assert decoded.draft.kind is Kind(command.kind)
    assert decoded.folder == str(tmp_path)
