"""Line helpers shared by the merge rules: pure functions on bytes, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field

from git_gasp.protocol.appendonly import common_prefix_len


@dataclass
class MergeResult:
    """Bytes for the %A file; `clean` False means conflict markers are in `data`."""

    data: bytes
    clean: bool
    conflicts: list[str] = field(default_factory=list)  # why it is not clean
    notes: list[str] = field(default_factory=list)  # worth saying even when clean


def split(data: bytes) -> list[bytes]:
    """Physical lines of `data` without their b"\\n" (an unterminated last line counts)."""
    if not data:
        return []
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


def join(lines: list[bytes]) -> bytes:
    """Lines back to bytes, every one terminated by b"\\n"."""
    return b"".join(line + b"\n" for line in lines)


def terminated(data: bytes) -> bytes:
    """`data` with a final b"\\n" added when its last line lacks one."""
    return data if not data or data.endswith(b"\n") else data + b"\n"


def appended(base: bytes, side: bytes) -> bytes | None:
    """The bytes `side` added after `base`, line-wise; None if `side` does not extend it.

    Lines compare without terminators: an unterminated last line of `base` that
    `side` terminated is still the same line; one that `side` extended is not.
    """
    if not base:
        return side
    body = base[:-1] if base.endswith(b"\n") else base
    n = len(body)
    if side.startswith(body) and (len(side) == n or side[n] == 0x0A):
        return side[n + 1 :]
    return None


def first_difference(base: bytes, side: bytes) -> str:
    """Say which base line `side` first lost or changed (1-based), for a conflict message."""
    body = base[:-1] if base.endswith(b"\n") else base
    i = common_prefix_len(body, side)
    line = body.count(b"\n", 0, i) + 1
    if i == len(side):  # side is a prefix of base: lines are missing at its end
        if i < len(body) and body[i] == 0x0A:
            line += 1  # side kept line `line` whole, only without its terminator
        return f"base line {line} and every line after it are missing"
    return f"base line {line} was changed or deleted"


def common_line_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest prefix of whole (terminated) lines shared by `a` and `b`."""
    return a.rfind(b"\n", 0, common_prefix_len(a, b)) + 1


def conflict_block(prefix: bytes, ours: bytes, theirs: bytes, marker_size: int) -> bytes:
    """`prefix`, then ours and theirs between conflict markers; every line terminated."""
    return b"".join(
        (
            terminated(prefix),
            b"<" * marker_size + b" ours\n",
            terminated(ours),
            b"=" * marker_size + b"\n",
            terminated(theirs),
            b">" * marker_size + b" theirs\n",
        )
    )


def conflict_of_sides(ours: bytes, theirs: bytes, marker_size: int) -> bytes:
    """Both whole sides in conflict form: their shared leading lines once, the rest marked."""
    n = common_line_prefix(ours, theirs)
    return conflict_block(ours[:n], ours[n:], theirs[n:], marker_size)
