"""A doctor finding and the report: one line each, plus one fix line, or JSON."""

from __future__ import annotations

from dataclasses import dataclass

OK, WARN, ERROR = "ok", "warn", "error"


def _one_line(text: str | None) -> str | None:
    return " ".join(text.split()) if text is not None else None


@dataclass
class Finding:
    """What doctor found (`level`: ok | warn | error), and how to fix it (one line each).

    `topic` groups findings (hooks, hooks-path, driver, lease, log, queue, ignores);
    `path` and `line` locate it when a file is at fault."""

    level: str
    what: str
    fix: str | None = None
    topic: str = "hooks"
    path: str | None = None
    line: int | None = None

    def __post_init__(self) -> None:
        self.what = _one_line(self.what) or ""
        self.fix = _one_line(self.fix)

    def to_json(self) -> dict:
        obj = {"level": self.level, "what": self.what, "fix": self.fix, "topic": self.topic}
        obj.update((k, v) for k, v in (("path", self.path), ("line", self.line)) if v is not None)
        return obj


def report(findings: list[Finding], label: str) -> tuple[str, int]:
    """The printed report and the exit status (1 if any finding is an error). A fix
    that an earlier finding already printed is not printed again."""
    errors = sum(f.level == ERROR for f in findings)
    warns = sum(f.level == WARN for f in findings)
    lines = [f"git gasp doctor: {label}"]
    printed: set[str] = set()
    for f in findings:
        lines.append(f"{f.level:<5} {f.what}")
        if f.fix and f.level != OK:
            lines.append("      fix: " + ("as above" if f.fix in printed else f.fix))
            printed.add(f.fix)
    if errors:
        lines.append(f"{errors} problem{'s' * (errors != 1)} to fix"
                     + (f", {warns} warning{'s' * (warns != 1)}" if warns else ""))
    else:
        lines.append("healthy" + (f" ({warns} warning{'s' * (warns != 1)})" if warns else ""))
    return "\n".join(lines), exit_status(findings)


def exit_status(findings: list[Finding]) -> int:
    """0: nothing broken (warnings allowed); 1: at least one error."""
    return 1 if any(f.level == ERROR for f in findings) else 0
