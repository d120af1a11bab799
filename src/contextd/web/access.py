"""Who may talk to the web view: the per-launch token, the CSRF token derived from it, and the
only Host and Origin values the server answers to (its loopback address and port)."""

import hashlib
import hmac
import secrets

__all__ = ["Access"]


class Access:
    """The secrets and addresses of one launch of `contextd ui`."""

    def __init__(self, port: int, *, write: bool = False, token: str | None = None) -> None:
        self.port = port
        self.write = write
        self.token = token or secrets.token_urlsafe(32)
        # Forms carry a value derived from the token rather than the token itself, so a form
        # field that ends up somewhere (a saved page) does not open the server.
        self.csrf = hmac.new(self.token.encode(), b"contextd-ui-csrf", hashlib.sha256).hexdigest()
        # Cookies are shared by every port of a host: one name per launch's port keeps two
        # running views from overwriting each other's cookie.
        self.cookie_name = f"contextd_ui_{port}"
        self.hosts = frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})
        self.origins = frozenset(f"http://{host}" for host in self.hosts)

    @property
    def url(self) -> str:
        """The address to open, token included."""
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    def host_ok(self, host: str | None) -> bool:
        """A Host header naming this server; anything else is a DNS-rebinding attempt or a
        request meant for another server."""
        return host is not None and host.lower() in self.hosts

    def token_ok(self, candidate: str | None) -> bool:
        return candidate is not None and hmac.compare_digest(
            candidate.encode(), self.token.encode()
        )

    def csrf_ok(self, candidate: str | None) -> bool:
        return candidate is not None and hmac.compare_digest(candidate.encode(), self.csrf.encode())

    def origin_ok(self, origin: str | None, host: str | None) -> bool:
        """The Origin of a state-changing request: this server, as the Host it was sent to."""
        if origin is None or host is None:
            return False
        return origin.lower() in self.origins and origin.lower() == f"http://{host.lower()}"
