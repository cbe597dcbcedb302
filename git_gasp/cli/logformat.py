"""How `git gasp log` prints an event: one line (`oneline`), a block (`medium`) or a
`format:` template of %-codes, as `git log --format` does. Text from the log is shown
escaped (no control character reaches the terminal raw) and, on one line, with its
line breaks folded."""

from __future__ import annotations

import re
from datetime import datetime, timezone

from git_gasp.base.errors import UsageError
from git_gasp.cli.colour import STYLES

ONELINE = "%C(dim)%L%C(reset)  %d  %C(kind)%K%C(reset) %C(id)%s%C(reset)  %m"
MEDIUM = ("%C(id)event %i%C(reset)  (line %l)%nKind:    %k%nDate:    %d%nActor:   %a"
          "%nSubject: %s%nRun:     %r%nCause:   %c%n%n%M%n")
CODES = set("ihkKdtlLsmMarcn%")  # K, L: kind and line padded to columns
_CODE = re.compile(r"%(C\((\w+)\)|.)", re.S)
_BREAKS = re.compile(r"\s*[\r\n]+\s*")


def template_of(fmt: str) -> str:
    """The template for `--format` (oneline, medium or format:…), or a UsageError."""
    if fmt == "oneline":
        return ONELINE
    if fmt == "medium":
        return MEDIUM
    if fmt.startswith(("format:", "tformat:")):
        template = fmt.split(":", 1)[1]
        for m in _CODE.finditer(template):
            code, style = m.group(1), m.group(2)
            if style is None and code not in CODES:
                raise UsageError(f"--format: unknown code %{code} (use %i %h %k %d %l %s %m "
                                 "%M %a %r %c %n, or %% for %)")
        return template
    raise UsageError(f"--format {fmt!r}: use oneline, medium or format:TEMPLATE")


class Formatter:
    """Renders events of one listing (`events`, for the short ids) over `graph`."""

    def __init__(self, graph, events: list, paint) -> None:
        self.graph, self.paint = graph, paint
        self._short = short_ids([e.id for e in events])

    def render(self, e, template: str) -> str:
        from git_gasp.protocol.summary import printable

        fields = self._fields(e)
        on = self.paint.on

        def code(m: re.Match) -> str:
            c, style = m.group(1), m.group(2)
            if style is not None:  # %C(name) starts a colour, %C(reset) ends it
                if not on:
                    return ""
                return "\x1b[m" if style == "reset" else f"\x1b[{STYLES.get(style, '0')}m"
            if c == "n":
                return "\n"
            if c == "%":
                return "%"
            if c == "M":  # the full text, each line escaped and indented
                return "\n".join("    " + printable(line) for line in fields[c].splitlines())
            return printable(fields[c])

        return _CODE.sub(code, template).rstrip(" ")

    def _fields(self, e) -> dict[str, str]:
        from git_gasp.runtime.queries import label

        p = e.payload if isinstance(e.payload, dict) else {}
        subject = p.get("id") or p.get("run_id") or ""
        subject = subject if isinstance(subject, str) else str(subject)
        node = self.graph.nodes.get(subject) if subject else None
        text = (p.get("outcome") or (label(node) if node else "") or p.get("title")
                or p.get("summary") or p.get("to") or "")
        if e.kind == "state.ops_applied":
            text = f"{len(e.payload) if isinstance(e.payload, list) else '?'} op(s)"
        text = text if isinstance(text, str) else str(text)
        when = datetime.fromtimestamp(e.ts_ms / 1000, timezone.utc)
        return {
            "i": e.id, "h": self._short.get(e.id, e.id), "k": e.kind, "K": f"{e.kind:<26}",
            "d": when.strftime("%Y-%m-%d %H:%M:%S"), "t": str(e.ts_ms),
            "l": str(e.line), "L": f"{e.line:>6}", "s": subject,
            "m": _BREAKS.sub(" ⏎ ", text).strip(),
            "M": text, "a": f"{e.actor_kind} {e.actor_id}",
            "r": e.correlation_id or "", "c": e.causation_id or "",
        }


def short_ids(ids: list[str], minimum: int = 4) -> dict[str, str]:
    """Each id's shortest unique prefix (at least `minimum` characters past the kind)."""
    ordered = sorted(set(ids))
    out = {}
    for n, full in enumerate(ordered):
        kind = full.find("_") + 1
        need = kind + minimum
        for other in (ordered[n - 1] if n else "", ordered[n + 1] if n + 1 < len(ordered)
                      else ""):
            common = 0
            for a, b in zip(full, other, strict=False):
                if a != b:
                    break
                common += 1
            need = max(need, common + 1)
        out[full] = full[:need]
    return out
