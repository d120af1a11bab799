"""Who gets in: the token, its cookie, the Host check, and the refusals of changes that did not
come from the view's own pages. Each refusal is one sentence, never a traceback."""

from collections.abc import Callable

from starlette.testclient import TestClient

from tests.web.conftest import BASE, PORT, Store


def _sentence(html: str) -> str:
    start = html.index('<p class="error" role="alert">') + len('<p class="error" role="alert">')
    return html[start : html.index("</p>", start)]


def test_a_request_without_the_token_is_refused(make_client: Callable[..., TestClient]) -> None:
    anonymous = make_client(authed=False)
    for path in ("/", "/p/orbit/records", "/static/htmx.min.js", "/no/such/page"):
        response = anonymous.get(path)
        assert response.status_code == 403
        assert "needs the address `contextd ui` printed" in _sentence(response.text)
        assert "Traceback" not in response.text


def test_a_wrong_token_or_cookie_is_refused(make_client: Callable[..., TestClient]) -> None:
    anonymous = make_client(authed=False)
    assert anonymous.get("/?token=guessed").status_code == 403
    anonymous.cookies.set(anonymous.access.cookie_name, "guessed")  # type: ignore[attr-defined]
    assert anonymous.get("/").status_code == 403


def test_the_token_becomes_a_strict_http_only_cookie_and_leaves_the_url(
    make_client: Callable[..., TestClient], store: Store
) -> None:
    browser = make_client(authed=False)
    token = browser.access.token  # type: ignore[attr-defined]
    response = browser.get(f"/p/orbit/records?kind=decision&token={token}")
    assert response.status_code == 303
    assert response.headers["location"] == "/p/orbit/records?kind=decision"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"contextd_ui_{PORT}={token};")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    assert browser.get("/p/orbit/records?kind=decision").status_code == 200


def test_a_post_cannot_carry_the_token_instead_of_the_cookie(
    make_client: Callable[..., TestClient], store: Store
) -> None:
    writer = make_client(write=True, authed=False)
    token = writer.access.token  # type: ignore[attr-defined]
    response = writer.post(
        f"/r/{store.nats}/verify?token={token}",
        data={"csrf": writer.access.csrf},  # type: ignore[attr-defined]
        headers={"origin": BASE},
    )
    assert response.status_code == 403


def test_another_host_name_is_refused_against_dns_rebinding(client: TestClient) -> None:
    for host in ("evil.example:8765", f"127.0.0.1:{PORT + 1}", "127.0.0.1", "192.168.1.5:8765"):
        response = client.get("/", headers={"host": host})
        assert response.status_code == 400
        assert "answers only at 127.0.0.1:8765" in _sentence(response.text)
    assert client.get("/", headers={"host": f"localhost:{PORT}"}).status_code == 200


def test_every_response_carries_the_security_headers(client: TestClient) -> None:
    for response in (client.get("/"), client.get("/no/such/page"), client.get("/static/style.css")):
        headers = response.headers
        assert "script-src 'self'" in headers["content-security-policy"]
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "same-origin"
        assert headers["cache-control"] == "no-store"
        assert headers["server-timing"].startswith("app;dur=")


def test_a_read_only_view_refuses_every_change(client: TestClient, store: Store) -> None:
    response = client.post(
        f"/r/{store.nats}/verify",
        data={"csrf": client.access.csrf},  # type: ignore[attr-defined]
        headers={"origin": BASE},
    )
    assert response.status_code == 403
    assert "read-only" in _sentence(response.text)
    assert client.get(f"/r/{store.nats}/edit").status_code == 404  # no edit page either


def test_a_cross_site_post_is_refused(writer: TestClient, store: Store) -> None:
    csrf = writer.access.csrf  # type: ignore[attr-defined]
    refused = [
        {"origin": "http://evil.example"},
        {"origin": f"http://127.0.0.1:{PORT + 1}"},  # same site, another origin
        {"origin": "null"},
        {},  # no Origin at all
        {"origin": BASE, "sec-fetch-site": "cross-site"},
        {"origin": BASE, "sec-fetch-site": "same-site"},
    ]
    for headers in refused:
        response = writer.post(f"/r/{store.nats}/verify", data={"csrf": csrf}, headers=headers)
        assert response.status_code == 403, headers
        assert "did not come from this view" in _sentence(response.text)


def test_a_post_without_the_form_token_is_refused(writer: TestClient, store: Store) -> None:
    for data in ({}, {"csrf": "forged"}, {"csrf": writer.access.token}):  # type: ignore[attr-defined]
        response = writer.post(f"/r/{store.nats}/verify", data=data, headers={"origin": BASE})
        assert response.status_code == 403
        assert "form token" in _sentence(response.text)


def test_an_oversized_or_unsized_change_is_refused(writer: TestClient, store: Store) -> None:
    csrf = writer.access.csrf  # type: ignore[attr-defined]
    big = writer.post(
        f"/r/{store.nats}/archive",
        data={"csrf": csrf, "reason": "x" * 600_000},
        headers={"origin": BASE},
    )
    assert big.status_code == 413

    def chunks():  # type: ignore[no-untyped-def]
        yield f"csrf={csrf}".encode()

    unsized = writer.post(
        f"/r/{store.nats}/verify",
        content=chunks(),
        headers={"origin": BASE, "content-type": "application/x-www-form-urlencoded"},
    )
    assert unsized.status_code == 411


def test_other_methods_are_refused(writer: TestClient, store: Store) -> None:
    assert writer.delete(f"/r/{store.nats}").status_code == 405
    assert writer.put(f"/r/{store.nats}/verify").status_code == 405
