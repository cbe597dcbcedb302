"""How `git gasp log` prints an event: one line (`oneline`), a block (`medium`) or a
`format:` template of %-codes, as `git log --format` does (git's codes where git has
one: %H %h %s %an %ad %ar %at; an unknown code is printed as it stands, as git prints
it). Text from the log is shown escaped (no control character reaches the terminal
raw) and, on one line, with its line breaks folded. Short ids are `abbreviations` among
every id of the log, so each one printed names its event (or node) alone."""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone

from git_gasp.base.errors import UsageError
from git_gasp.cli.colour import STYLES
from git_gasp.cli.shortids import ShortIds
from git_gasp.protocol.summary import one_line, printable
from git_gasp.runtime.queries import label

ONELINE = "%C(id)%h%C(reset)  %C(dim)%d%C(reset)  %C(kind)%K%C(reset) %S  %m"
MEDIUM = ("%C(id)event %H%C(reset)  (line %l)%nKind:    %k%nDate:    %d%nActor:   %a"
          "%nNode:    %N%nRun:     %r%nCause:   %c%n%n%M%n")
# %-codes: git's two-letter ones first, then one letter, then colours
_CODE = re.compile(r"%(a[ndrt]|C\((\w+)\)|.)", re.S)


def template_of(fmt: str) -> str:
    """The template for `--format` (oneline, medium, format:… or tformat:…)."""
    if fmt == "oneline":
        return ONELINE
    if fmt == "medium":
        return MEDIUM
    if fmt.startswith(("format:", "tformat:")):
        return fmt.split(":", 1)[1]
    if "%" in fmt:  # git takes a bare template as tformat:
        return fmt
    raise UsageError(f"--format {fmt!r}: use oneline, medium or format:TEMPLATE")


def relative(ms: int, now: float | None = None) -> str:
    """``3 minutes ago``, with git's thresholds for %ar (`date.c`, show_date_relative)."""
    diff = max(0, round((time.time() if now is None else now) - ms / 1000))
    if diff < 90:
        return _ago(diff, "second")
    diff = (diff + 30) // 60
    if diff < 90:
        return _ago(diff, "minute")
    diff = (diff + 30) // 60
    if diff < 36:
        return _ago(diff, "hour")
    diff = (diff + 12) // 24
    if diff < 14:
        return _ago(diff, "day")
    if diff < 70:
        return _ago((diff + 3) // 7, "week")
    if diff < 365:
        return _ago((diff + 15) // 30, "month")
    return _ago((diff + 183) // 365, "year")


def _ago(n: int, unit: str) -> str:
    return f"{n} {unit}{'' if n == 1 else 's'} ago"


def _date(ms: int) -> str:
    """``2026-12-03 10:39:31`` (UTC); a timestamp no calendar date holds (a conformant
    log may carry any 64-bit value) is shown as its milliseconds."""
    try:
        return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    except (OverflowError, ValueError, OSError):
        return f"@{ms} ms"


class Formatter:
    """Renders events over `graph`; short ids abbreviate among `event_ids` (every
    event of the log) and the graph's nodes, with tails of at least `abbrev`."""

    def __init__(self, graph, event_ids: list[str], paint, abbrev: int | None = None) -> None:
        self.graph, self.paint = graph, paint
        self.ids = ShortIds(graph.nodes, event_ids, abbrev)

    def short_node(self, node_id: str) -> str:
        return self.ids.node(node_id)

    def render(self, e, template: str) -> str:
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
            if c not in fields:
                return m.group(0)  # as git does: an unknown code stands as typed
            return printable(fields[c])

        return _CODE.sub(code, template).rstrip(" ")

    def _fields(self, e) -> dict[str, str]:
        p = e.payload if isinstance(e.payload, dict) else {}
        node_id = p.get("id") or p.get("run_id") or ""
        node_id = node_id if isinstance(node_id, str) else str(node_id)
        node = self.graph.nodes.get(node_id) if node_id else None
        text = (p.get("outcome") or (label(node) if node else "") or p.get("title")
                or p.get("summary") or p.get("to") or "")
        if e.kind.endswith(".status_changed") and isinstance(p.get("to"), str):
            text = f"{text}  ({p.get('from') or '?'} → {p['to']})"
        if e.kind == "state.ops_applied":
            text = f"{len(e.payload) if isinstance(e.payload, list) else '?'} op(s)"
        text = text if isinstance(text, str) else str(text)
        date = _date(e.ts_ms)
        actor = f"{e.actor_kind} {e.actor_id}"
        who = self._person(e.correlation_id)
        if e.kind == "run.started" and who:
            text = f"{text}  (by {who})"
        return {
            "H": e.id, "i": e.id, "h": self.ids.event(e.id),
            "k": e.kind, "K": f"{e.kind:<26}",
            "d": date, "ad": date, "t": str(e.ts_ms), "at": str(e.ts_ms // 1000),
            "ar": relative(e.ts_ms),
            "l": str(e.line), "L": f"{e.line:>6}",
            "s": (text.strip().splitlines() or [""])[0].strip(),
            "N": node_id, "S": self.short_node(node_id) if node_id else "",
            "m": one_line(text), "M": text, "a": actor, "an": actor,
            "r": e.correlation_id or "", "c": e.causation_id or "", "p": who,
        }

    def _person(self, run_id: str | None) -> str:
        """The person who ran the run `run_id` (its node's ``metadata.person``), or ""."""
        node = self.graph.nodes.get(run_id) if run_id else None
        meta = node["props"].get("metadata") if node is not None else None
        who = meta.get("person") if isinstance(meta, dict) else None
        return who if isinstance(who, str) else ""
