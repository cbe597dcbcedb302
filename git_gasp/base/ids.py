"""Identifiers and clocks: time-ordered `<prefix>_<uuid>` ids, epoch milliseconds."""

from __future__ import annotations

import os
import re
import time

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$")


def now_ms() -> int:
    """Unix epoch milliseconds (advisory: the log's line order is the real order)."""
    return time.time_ns() // 1_000_000


def new_uuid() -> str:
    """A UUIDv7-shaped id: 48-bit ms timestamp then random bits, so ids sort by time."""
    value = (now_ms() & ((1 << 48) - 1)) << 80 | int.from_bytes(os.urandom(10), "big")
    value = (value & ~(0xF << 76)) | (0x7 << 76)  # version 7
    value = (value & ~(0x3 << 62)) | (0x2 << 62)  # RFC 4122 variant
    h = f"{value:032x}"  # uuid.UUID's text form (importing uuid costs a hook ~4 %)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def new_id(prefix: str) -> str:
    """`<prefix>_<uuid>`, e.g. event_0190…, goal_0190…"""
    return f"{prefix}_{new_uuid()}"


def valid_id(value: object) -> bool:
    """True for an id safe in the log, a path component and a commit trailer."""
    return isinstance(value, str) and bool(_ID.match(value)) and value not in (".", "..")
