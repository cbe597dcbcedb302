"""memory/facts.jsonl (append-only distilled facts) and memory/active_memory.md.

Fact line: {"id": "fact_<uuid>", "ts_ms", "text", "derived_from": [...], "supersedes": id|null}.
`derived_from` is required and must name events or nodes of the log; superseding
appends a new line pointing at the old one; active_memory.md is regenerated from
the live facts (the latest of each chain).
"""

from __future__ import annotations

import json
from pathlib import Path

from git_gasp.base.errors import GaspError
from git_gasp.base.files import atomic_write, read_file, refuse_links
from git_gasp.base.ids import new_id, now_ms
from git_gasp.redact.redactor import redact_text
from git_gasp.store.append import append_line_file

FACT_KEYS = ("id", "ts_ms", "text", "derived_from", "supersedes")


class FactError(GaspError):
    """A fact cannot be read or added."""


def fact_line(fact: dict) -> bytes:
    ordered = {k: fact[k] for k in FACT_KEYS}
    return (json.dumps(ordered, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


class Facts:
    """The fact store of one agent, appended to under the state's lease."""

    def __init__(self, state) -> None:
        self.state = state
        self.root: Path = state.root
        self.dir_rel = state.memory_rel  # the manifest's locations.memory
        self.rel = f"{self.dir_rel}/facts.jsonl"
        self.path = self.root / self.rel
        self.active_path = self.root / self.dir_rel / "active_memory.md"

    def load(self) -> list[dict]:
        """Every fact in line order (raises FactError on a bad or torn line; UnsafePath
        when the file, or a directory on the way to it, is a link)."""
        refuse_links(self.path, self.root)
        try:
            data = read_file(self.path, root=self.root)
        except FileNotFoundError:
            return []
        if data and not data.endswith(b"\n"):
            line, cut = data.count(b"\n") + 1, data.rfind(b"\n") + 1
            raise FactError(f"{self.rel}:{line}: torn final line; if it is complete append a "
                            f"newline, else `truncate -s {cut} {self.rel}`")
        out = []
        for n, raw in enumerate(data.splitlines(), 1):
            try:
                obj = json.loads(raw)
            except ValueError as exc:
                raise FactError(f"{self.rel}:{n}: not JSON: {exc}") from None
            if type(obj) is not dict or not set(FACT_KEYS) <= obj.keys():
                raise FactError(f"{self.rel}:{n}: a fact needs {', '.join(FACT_KEYS)}")
            out.append(obj)
        return out

    def live(self) -> list[dict]:
        """The latest fact of each supersede chain, in line order."""
        facts = self.load()
        superseded = {f["supersedes"] for f in facts if f["supersedes"]}
        return [f for f in facts if f["id"] not in superseded]

    def _check_sources(self, derived_from: list[str]) -> list[str]:
        if isinstance(derived_from, str) or not derived_from:
            raise FactError("a fact needs derived_from: the events or runs that taught it")
        for source in derived_from:
            if not isinstance(source, str) or not source:
                raise FactError("derived_from entries are event or node ids")
            if source not in self.state.graph.nodes and not self.state.has_event(source):
                raise FactError(f"derived_from names {source}, which is neither an event nor a "
                                "node of the log")
        return list(derived_from)

    def add(self, text: str, derived_from: list[str], *, supersedes: str | None = None) -> str:
        """Append a fact (its text redacted, as every stored string is); return its id."""
        if not isinstance(text, str) or not text.strip():
            raise FactError("a fact needs text")
        sources = self._check_sources(derived_from)
        facts = self.load()
        if supersedes is not None:
            ids = {f["id"] for f in facts}
            if supersedes not in ids:
                raise FactError(f"no fact {supersedes} to supersede")
            later = next((f["id"] for f in facts if f["supersedes"] == supersedes), None)
            if later:
                raise FactError(f"fact {supersedes} was already superseded by {later}; "
                                f"supersede {later} instead")
        fact = {"id": new_id("fact"), "ts_ms": now_ms(), "text": redact_text(text.strip()),
                "derived_from": sources, "supersedes": supersedes}
        self.state.store.lease.ensure()
        append_line_file(self.path, fact_line(fact), fsync=self.state.store.fsync,
                         root=self.root)
        return fact["id"]

    def supersede(self, old: str, text: str, derived_from: list[str]) -> str:
        return self.add(text, derived_from, supersedes=old)

    def synthesize(self) -> Path:
        """Regenerate active_memory.md from the live facts; return its path."""
        live = self.live()
        lines = ["# Active memory", "",
                 "Regenerated from memory/facts.jsonl (the latest fact of each chain); "
                 "do not edit by hand.", ""]
        if not live:
            lines.append("No facts yet.")
        for f in live:
            lines.append(f"- {f['text']}  <!-- {f['id']}; from {', '.join(f['derived_from'])} -->")
        data = ("\n".join(lines) + "\n").encode()
        atomic_write(self.active_path, data, root=self.root, make_parents=True)
        return self.active_path
