"""Check results and their text / JSON rendering."""

from __future__ import annotations

from git_gasp.base.record import Record
from git_gasp.protocol.failure import Failure
from git_gasp.protocol.summary import printable

__all__ = ["CheckResult", "Failure", "Report"]


class CheckResult(Record):
    """The outcome of one numbered check. `soft`: findings the reference checker
    reports as notes (an op naming a missing node, a snapshot directory without
    graph.json): notes, or failures under `check --strict`."""

    FIELDS = ("number", "name", "failures", "notes", "soft")

    def __init__(self, number: int, name: str, failures: list[Failure] | None = None,
                 notes: list[str] | None = None, soft: list[Failure] | None = None) -> None:
        self.number, self.name = number, name
        self.failures = [] if failures is None else failures
        self.notes = [] if notes is None else notes
        self.soft = [] if soft is None else soft

    @property
    def passed(self) -> bool:
        return not self.failures

    def fail(self, message: str, **where) -> None:
        """Record a failure; `where` takes line=, commit=, path=."""
        self.failures.append(Failure(message, **where))

    def soft_fail(self, message: str, **where) -> None:
        """Record a finding that is a note, and a failure only in strict mode."""
        self.soft.append(Failure(message, **where))

    def harden(self) -> None:
        """Strict mode: the soft findings become failures."""
        self.failures.extend(self.soft)
        self.soft = []

    def all_notes(self) -> list[str]:
        """The soft findings (with their location), then the plain notes."""
        out = []
        for f in self.soft:
            loc = f.location()
            out.append(f"{loc}: {f.message}" if loc else f.message)
        return out + list(self.notes)

    def to_json(self) -> dict:
        return {
            "number": self.number,
            "name": self.name,
            "passed": self.passed,
            "failures": [f.to_json() for f in self.failures],
            "notes": self.all_notes(),
        }


class Report(Record):
    """All checks run against one agent repo."""

    FIELDS = ("path", "checks")

    def __init__(self, path: str, checks: list[CheckResult] | None = None) -> None:
        self.path = path
        self.checks = [] if checks is None else checks

    @property
    def conformant(self) -> bool:
        return all(c.passed for c in self.checks)

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "conformant": self.conformant,
            "checks": [c.to_json() for c in self.checks],
        }

    def to_text(self, max_failures: int = 50) -> str:
        """One line per check, then each failure (capped) with its location.

        Control characters taken from the log are shown escaped (\\x1b …), never sent
        to the terminal raw."""
        lines = []
        for c in self.checks:
            mark = "ok  " if c.passed else "FAIL"
            count = len(c.failures)
            extra = "" if c.passed else f" ({count} failure{'s' * (count != 1)})"
            lines.append(f"{mark} {c.number} {c.name}{extra}")
            for f in c.failures[:max_failures]:
                loc = f.location()
                if loc == f.path and f.message.startswith(f"{f.path} "):
                    loc = ""  # the message already starts with the path
                lines.append(f"       {loc + ': ' if loc else ''}{f.message}")
            if len(c.failures) > max_failures:
                lines.append(f"       … and {len(c.failures) - max_failures} more (use --json)")
            for note in c.all_notes():
                lines.append(f"       note: {note}")
        verdict = "conformant" if self.conformant else "NOT conformant"
        lines.append(f"{self.path}: {verdict}")
        return "\n".join(printable(line) for line in lines)
