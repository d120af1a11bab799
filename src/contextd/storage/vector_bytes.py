"""How a vector is kept as bytes: float32, little-endian, one after another."""

import struct

__all__ = ["decode", "encode"]


def encode(vector: list[float]) -> bytes:
    return struct.pack(f"<{len(vector)}f", *vector)


def decode(blob: bytes) -> list[float]:
    return list(struct.unpack(f"<{len(blob) // 4}f", blob))
