"""Server-sent events read incrementally from the bytes of a relayed stream.

Only the recorder reads them: the client gets the upstream's bytes as they came. The
parser keeps one partial line at most `line_max` bytes long (a longer one is dropped and
counted in `overflowed`), so a stream of any length is read in bounded memory.
"""

from __future__ import annotations

LINE_MAX = 8 << 20


class SSEParser:
    """Feed bytes, get ``(event name or None, data text)`` for each complete event."""

    def __init__(self, line_max: int = LINE_MAX) -> None:
        self.line_max = line_max
        self.partial = b""
        self.skipping = False  # inside a line longer than line_max
        self.event: str | None = None
        self.data: list[str] = []
        self.overflowed = 0

    def feed(self, chunk: bytes) -> list[tuple[str | None, str]]:
        """The events `chunk` completes (with what came before it)."""
        out: list[tuple[str | None, str]] = []
        buf, tail = self.partial + chunk, b""
        if buf.endswith(b"\r"):  # a CR ending the chunk may be the first half of CRLF
            buf, tail = buf[:-1], b"\r"
        lines = buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        self.partial = lines.pop() + tail
        if len(self.partial) > self.line_max:
            self.partial, self.skipping = b"", True
            self.overflowed += 1
        for line in lines:
            if self.skipping:
                self.skipping = False  # the rest of the long line: dropped
                continue
            self._line(line.decode("utf-8", "replace"), out)
        return out

    def close(self) -> list[tuple[str | None, str]]:
        """The event a stream ending without its blank line leaves (if any)."""
        out: list[tuple[str | None, str]] = []
        if self.partial.strip(b"\r") and not self.skipping:
            self._line(self.partial.decode("utf-8", "replace"), out)
        self.partial = b""
        self._line("", out)
        return out

    def _line(self, line: str, out: list[tuple[str | None, str]]) -> None:
        if not line:
            if self.data:
                out.append((self.event, "\n".join(self.data)))
            self.event, self.data = None, []
            return
        if line.startswith(":"):
            return  # a comment (keep-alive)
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            self.event = value
        elif name == "data":
            self.data.append(value)
