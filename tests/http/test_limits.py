"""What keeps one client from taking the server: a token's request rate, counted in the
store so that two serve processes on it count together (429 with Retry-After); a body over
[serve] max_body_kb (413, before MCP reads it); and the token commands' bad input."""

from pathlib import Path

import httpx

from tests.conftest import Cli
from tests.http.conftest import set_serve
from tests.http.served import new_token, serve
from tests.http.test_access import ACCEPT, INIT


def test_a_tokens_rate_is_counted_across_serve_processes(home: Path, repo: Path) -> None:
    set_serve(home, requests_per_minute=4)
    token = new_token(home, "alice")
    other = new_token(home, "bob")
    headers = {**ACCEPT, "authorization": f"Bearer {token}"}
    with serve(repo) as first, serve(repo) as second:
        answers = []
        for i in range(9):  # alternately to each process
            url = (first.url, second.url)[i % 2]
            answers.append(httpx.post(url, json=INIT, headers=headers, timeout=30))
        codes = [a.status_code for a in answers]
        # Refused from the fifth request on (the two processes count into one number); from
        # the ninth at the latest, should a minute begin while these are sent.
        assert codes[:4] == [200] * 4 and 429 in codes and codes.index(429) <= 8, codes
        over = answers[codes.index(429)]
        assert 1 <= int(over.headers["retry-after"]) <= 60
        assert "alice" in over.json()["error"]
        others = {**ACCEPT, "authorization": f"Bearer {other}"}
        assert httpx.post(second.url, json=INIT, headers=others, timeout=30).status_code == 200


def test_a_body_over_the_limit_is_refused_unread(home: Path, repo: Path) -> None:
    set_serve(home, max_body_kb=4)
    token = new_token(home, "alice")
    headers = {**ACCEPT, "authorization": f"Bearer {token}"}
    big = {**INIT, "params": {**INIT["params"], "padding": "x" * 8000}}  # type: ignore[dict-item]
    with serve(repo) as served:
        assert httpx.post(served.url, json=INIT, headers=headers, timeout=30).status_code == 200
        assert httpx.post(served.url, json=big, headers=headers, timeout=30).status_code == 413


def test_token_commands_refuse_bad_input_in_a_sentence(home: Path, repo: Path, run: Cli) -> None:
    made = run.json("token", "create", "alice", "--read-only", "--expires", "never")
    assert made["token"].startswith("ctd_") and made["expires_at"] is None
    listed = run.json("token", "list")["tokens"]
    assert [(t["name"], t["developer"], t["state"], t["read_only"]) for t in listed] == [
        ("alice", "alice", "active", True)
    ]
    assert made["token"] not in str(listed)  # only ever shown when made
    for args, words in (
        (["token", "create", "alice"], "revoke"),
        (["token", "create", "no spaces"], "cannot name a token"),
        (["token", "create", "bob", "--expires", "soon"], "length of time"),
        (["token", "create", "bob", "--project", "nowhere"], "nowhere"),
        (["token", "create", "bob", "--developer", "b o b"], "cannot name a developer"),
        (["token", "create", "ghp_" + "a1B2c3D4e5" * 4], "looks like a credential"),
        (["token", "create", "ci/ghp_" + "a1B2c3D4e5" * 4], "looks like a credential"),
        (["token", "create", "bob", "--developer", "ghp_" + "a1B2c3D4e5" * 4], "credential"),
        (["token", "revoke", "carol"], "No token"),
    ):
        result = run(*args)
        assert result.exit_code != 0, args
        assert words in result.output, result.output
        assert "Traceback" not in result.output
        assert "a1B2c3D4e5" not in result.output  # a secret given as a name is never echoed
    assert run.json("token", "revoke", "alice")["token"]["state"] == "revoked"
    again = run.json("token", "create", "alice")  # a revoked name may be given a new token
    assert again["token"] != made["token"]


def test_headers_too_large_get_a_431_in_one_sentence_not_a_reset(home: Path, repo: Path) -> None:
    """Sent whole before any answer is read, as a client does: the answer arrives (the rest of
    what it sent is read and dropped, so closing does not reset the connection)."""
    import socket
    from urllib.parse import urlsplit

    with serve(repo) as served:
        where = urlsplit(served.url)
        big = b"a" * 1_000_000
        request = b"POST /mcp HTTP/1.1\r\nHost: x\r\nX-Big: " + big + b"\r\n\r\n"
        with socket.create_connection((where.hostname, where.port), timeout=30) as conn:
            conn.sendall(request)
            answer = b""
            while b"\r\n\r\n" not in answer or not _whole(answer):
                chunk = conn.recv(65536)
                assert chunk, f"closed before the answer was whole: {answer!r}"
                answer += chunk
        head, _, text = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 431 "), head
        assert text.decode().count("\n") == 1 and "headers are too large" in text.decode()
        assert httpx.get(served.url, timeout=30).status_code in (401, 405, 406)  # still serving


def _whole(answer: bytes) -> bool:
    head, _, body = answer.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    return len(body) >= length


def test_one_token_at_its_share_is_refused_while_another_is_served(
    backend: str, home: Path, repo: Path
) -> None:
    """A read-only token opens 64 GET streams (each answered 405 at once: a stateless server
    holds none open) and then holds as many POSTs as it may, their bodies half sent; its next
    request gets a 429, while another developer's token is answered throughout."""
    import socket
    from urllib.parse import urlsplit

    set_serve(home, max_in_flight_per_token=4, max_in_flight_per_developer=6)
    greedy = new_token(home, "mallory", "--read-only")
    second = new_token(home, "mallory-laptop", "--developer", "mallory")
    other = new_token(home, "alice")
    mine = {**ACCEPT, "authorization": f"Bearer {greedy}"}
    theirs = {**ACCEPT, "authorization": f"Bearer {other}"}
    with serve(repo) as served:
        where = urlsplit(served.url)
        streams = [httpx.get(served.url, headers=mine, timeout=30) for _ in range(64)]
        assert {s.status_code for s in streams} == {405}
        assert "opens no stream" in streams[0].json()["error"]
        assert httpx.post(served.url, json=INIT, headers=theirs, timeout=30).status_code == 200

        def held_open(token: str) -> socket.socket:
            conn = socket.create_connection((where.hostname, where.port), timeout=30)
            conn.sendall(
                f"POST /mcp HTTP/1.1\r\nHost: {where.netloc}\r\nAuthorization: Bearer {token}\r\n"
                "Content-Type: application/json\r\nAccept: application/json, text/event-stream"
                "\r\nContent-Length: 1000\r\n\r\n{".encode()
            )
            return conn

        held = [held_open(greedy) for _ in range(4)]
        try:
            over = _refused_soon(served.url, mine)
            assert over.status_code == 429 and "'mallory'" in over.json()["error"]
            assert over.headers["retry-after"] == "1"
            # The developer's second token may take the developer's remaining two...
            held += [held_open(second) for _ in range(2)]
            mine_too = {**ACCEPT, "authorization": f"Bearer {second}"}
            over = _refused_soon(served.url, mine_too)
            assert over.status_code == 429 and "Developer 'mallory'" in over.json()["error"]
            # ...and everyone else is answered meanwhile.
            assert httpx.post(served.url, json=INIT, headers=theirs, timeout=30).status_code == 200
        finally:
            for conn in held:
                conn.close()
        # Once they end, the token is answered again.
        assert _refused_soon(served.url, mine, until=200).status_code == 200


def _refused_soon(url: str, headers: dict[str, str], until: int = 429) -> httpx.Response:
    """The answer to INIT once it is `until` (the held requests reach the server a moment
    after their sockets are written), or the last answer after ten seconds."""
    import time

    ends = time.monotonic() + 10
    while True:
        answer = httpx.post(url, json=INIT, headers=headers, timeout=30)
        if answer.status_code == until or time.monotonic() > ends:
            return answer
        time.sleep(0.05)
