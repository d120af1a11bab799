"""OAuth 2.0 Protected Resource Metadata (RFC 9728), as the MCP authorization spec asks a
server to publish: which resource this is and that it takes bearer tokens in the
Authorization header. There is no authorization server: tokens are made by
`contextd token create`, and agents send them as a configured header."""

import re

from starlette.responses import JSONResponse
from starlette.types import Scope

__all__ = ["metadata_reply", "metadata_url"]

_PATH = "/.well-known/oauth-protected-resource"
_NOT_HOST = re.compile(r"[^A-Za-z0-9.:\[\]-]")  # what a Host header cannot hold


def base_url(scope: Scope) -> str:
    """The address the client used (the Host it sent, the scheme it came by)."""
    host = next((bytes(v).decode("latin-1") for k, v in scope["headers"] if k == b"host"), "")
    if not host:
        server = scope.get("server") or ("127.0.0.1", 0)
        host = f"{server[0]}:{server[1]}"
    return f"{scope.get('scheme', 'http')}://{_NOT_HOST.sub('', host)[:255]}"


def metadata_url(scope: Scope) -> str:
    return f"{base_url(scope)}{_PATH}/mcp"


def metadata_reply(scope: Scope) -> JSONResponse:
    return JSONResponse(
        {
            "resource": f"{base_url(scope)}/mcp",
            "resource_name": "contextd",
            "bearer_methods_supported": ["header"],
        },
        headers={"cache-control": "no-store"},
    )
