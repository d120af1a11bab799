"""One frame format both ways: a magic with the protocol version, the lengths of a JSON head
and of a raw body, then both. The head says what is asked or answered; the body carries bytes
that need no decoding on the way (an agent's hook payload in, the hook's reply out).

JSON, not msgpack: the prompt hook encodes its request with the standard library's json
(about 5 ms to import), where msgspec would cost it 15-20 ms on every prompt; the daemon
decodes heads strictly with msgspec.
"""

__all__ = [
    "MAX_BODY",
    "MAX_HEAD",
    "PREFIX_SIZE",
    "BadFrame",
    "encode",
    "read",
    "sizes",
]

MAGIC = b"ctxd\x01"  # the last byte is the protocol version
PREFIX_SIZE = len(MAGIC) + 8  # the magic, then the head's and the body's lengths
MAX_HEAD = 16 * 1024 * 1024  # an answer of 200 hits with --explain is well under 1 MB
MAX_BODY = 8 * 1024 * 1024  # a hook payload is at most 4 MB


class BadFrame(Exception):
    """The bytes on the socket are not a frame of this protocol, or too large."""


def encode(head: bytes, body: bytes = b"") -> bytes:
    return MAGIC + len(head).to_bytes(4, "big") + len(body).to_bytes(4, "big") + head + body


def read(conn: object, max_head: int = MAX_HEAD, max_body: int = MAX_BODY) -> tuple[bytes, bytes]:
    """The head and body of the next frame on `conn` (a connected socket with a timeout).

    Raises:
        BadFrame: the peer sent something else, too much, or closed mid-frame.
        OSError: the socket failed or timed out.
    """
    head_size, body_size = sizes(_exactly(conn, PREFIX_SIZE), max_head, max_body)
    return _exactly(conn, head_size), _exactly(conn, body_size)


def sizes(prefix: bytes, max_head: int = MAX_HEAD, max_body: int = MAX_BODY) -> tuple[int, int]:
    """The head's and the body's sizes a frame's first PREFIX_SIZE bytes announce.

    Raises:
        BadFrame: they are not a frame's prefix of this version, or announce too much.
    """
    if prefix[: len(MAGIC)] != MAGIC:
        raise BadFrame("not a contextd frame of this version")
    head_size = int.from_bytes(prefix[len(MAGIC) : len(MAGIC) + 4], "big")
    body_size = int.from_bytes(prefix[len(MAGIC) + 4 : PREFIX_SIZE], "big")
    if head_size > max_head or body_size > max_body:
        raise BadFrame(f"a frame of {head_size} + {body_size} bytes is over the limit")
    return head_size, body_size


def _exactly(conn: object, size: int) -> bytes:
    recv = conn.recv  # type: ignore[attr-defined]
    chunks: list[bytes] = []
    left = size
    while left:
        chunk = recv(min(left, 1 << 20))
        if not chunk:
            raise BadFrame("the peer closed the connection mid-frame")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
