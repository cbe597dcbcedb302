"""A located failure: what is wrong and where (file, line, commit). Shared by every layer."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Failure:
    """One reason a check failed, with where it was found."""

    message: str
    line: int | None = None
    commit: str | None = None
    path: str | None = None

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
