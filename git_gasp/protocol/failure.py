"""A located failure: what is wrong and where (file, line, commit). Shared by every layer."""

from __future__ import annotations

from git_gasp.base.record import Record


class Failure(Record):
    """One reason a check failed, with where it was found."""

    FIELDS = ("message", "line", "commit", "path")

    def __init__(self, message: str, line: int | None = None, commit: str | None = None,
                 path: str | None = None) -> None:
        self.message, self.line, self.commit, self.path = message, line, commit, path

    def location(self) -> str:
        """Return 'path:line' / 'commit abc1234' style prefix, or ''."""
        parts = []
        if self.path is not None:
            parts.append(self.path if self.line is None else f"{self.path}:{self.line}")
        elif self.line is not None:
            parts.append(f"line {self.line}")
        if self.commit is not None:
            parts.append(f"commit {self.commit[:12]}")
        return " ".join(parts)

    def to_json(self) -> dict:
        out: dict = {"message": self.message}
        for key in ("line", "commit", "path"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out
