"""The answers the server gives before a request reaches MCP: one sentence of JSON each, and
no CORS header ever (no browser page may read them)."""

from starlette.responses import JSONResponse

__all__ = ["refusal"]


def refusal(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(
        {"error": message},
        status_code=status,
        headers={"cache-control": "no-store", **(headers or {})},
    )
