"""`git blame --porcelain` output parsed: one `BlameLine` per line of the result, and
each commit's header fields once. Bytes in, bytes kept (content, names, paths)."""

from __future__ import annotations

from dataclasses import dataclass, field

ZERO = "0" * 40  # the commit git blames uncommitted lines on (SHA-1 repositories)


@dataclass
class CommitInfo:
    """The header git prints the first time a commit appears (raw values, bytes)."""

    sha: str
    fields: dict[bytes, bytes] = field(default_factory=dict)
    boundary: bool = False

    def get(self, key: bytes, default: bytes = b"") -> bytes:
        return self.fields.get(key, default)

    @property
    def uncommitted(self) -> bool:
        return set(self.sha) == {"0"}

    def int_field(self, key: bytes) -> int:
        try:
            return int(self.fields.get(key, b"0"))
        except ValueError:
            return 0


@dataclass(slots=True)
class BlameLine:
    """One line of the blamed file: its number now, the commit, its number and path in
    that commit, and its bytes (without the newline)."""

    line: int
    commit: str
    orig_line: int
    orig_path: bytes
    content: bytes


class PorcelainError(ValueError):
    """Output that is not `git blame --porcelain`'s."""


def parse_porcelain(data: bytes) -> tuple[list[BlameLine], dict[str, CommitInfo]]:
    """The lines and commits of `git blame --porcelain` output `data`."""
    lines: list[BlameLine] = []
    commits: dict[str, CommitInfo] = {}
    paths: dict[str, bytes] = {}  # commit -> the filename of its latest group
    info: CommitInfo | None = None  # the commit of the line being read, between header
    sha, orig, final = "", 0, 0     # and content
    for raw in data.split(b"\n"):
        if info is None:
            if not raw:
                continue
            parts = raw.split(b" ", 3)
            try:
                if len(parts) < 3 or len(parts[0]) not in (40, 64):
                    raise ValueError
                sha, orig, final = parts[0].decode("ascii"), int(parts[1]), int(parts[2])
            except ValueError:
                raise PorcelainError(f"unexpected blame output: {raw[:80]!r}") from None
            info = commits.get(sha)
            if info is None:
                info = commits[sha] = CommitInfo(sha)
            continue
        if raw[:1] == b"\t":
            lines.append(BlameLine(final, sha, orig, paths.get(sha, b""), raw[1:]))
            info = None
            continue
        key, _, value = raw.partition(b" ")
        if key == b"filename":
            paths[sha] = unquote_path(value)
        elif key == b"boundary":
            info.boundary = True
        else:
            info.fields[key] = value
    if info is not None:
        raise PorcelainError("blame output ends inside a line's header")
    return lines, commits


_ESCAPES = {ord("a"): 7, ord("b"): 8, ord("t"): 9, ord("n"): 10, ord("v"): 11, ord("f"): 12,
            ord("r"): 13, ord('"'): 34, ord("\\"): 92}


def unquote_path(raw: bytes) -> bytes:
    """A path as git prints it (C-quoted when it holds a quote, backslash or control
    character) back to its bytes."""
    if len(raw) < 2 or raw[:1] != b'"' or raw[-1:] != b'"':
        return raw
    body, out, i = raw[1:-1], bytearray(), 0
    while i < len(body):
        c = body[i]
        if c != 92 or i + 1 >= len(body):
            out.append(c)
            i += 1
            continue
        nxt = body[i + 1]
        octal = body[i + 1:i + 4]
        if len(octal) == 3 and all(48 <= b <= 55 for b in octal):
            out.append(int(octal, 8) & 0xFF)
            i += 4
            continue
        out.append(_ESCAPES.get(nxt, nxt))
        i += 2
    return bytes(out)
