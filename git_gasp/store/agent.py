"""Everything the checks read from one agent repo, loaded once and shared."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from git_gasp.protocol.envelope import ParsedLog, parse_log
from git_gasp.protocol.fold import FoldResult, fold
from git_gasp.protocol.manifest import DEFAULT_LOCATIONS, Manifest, ManifestError, parse_manifest
from git_gasp.store.agentfs import AgentFileError, read_regular

MANIFEST = "AGENT.md"


@dataclass
class AgentRepo:
    """An agent repo's root plus its manifest and log, each with its load error."""

    root: Path
    manifest: Manifest | None = None
    manifest_error: str | None = None
    log_rel: str = DEFAULT_LOCATIONS["log"]
    log_bytes: bytes | None = None
    log_error: str | None = None
    extra: dict = field(default_factory=dict)

    @cached_property
    def parsed(self) -> ParsedLog:
        """The parsed log (empty when it could not be read)."""
        if self.log_bytes is None:
            return ParsedLog()
        return parse_log(self.log_bytes, self.log_rel)

    @cached_property
    def folded(self) -> FoldResult:
        """The lenient fold of every event that parsed."""
        return fold(self.parsed.events)

    def location(self, key: str) -> str:
        """A manifest-declared location (identity, memory, log) or its default."""
        if self.manifest is not None:
            return self.manifest.locations[key]
        return DEFAULT_LOCATIONS[key]


def load_agent(root: Path) -> AgentRepo:
    """Read AGENT.md and the log; load errors are recorded, never raised."""
    repo = AgentRepo(root=root)
    try:
        repo.manifest = parse_manifest(read_regular(root, MANIFEST))
    except (AgentFileError, ManifestError) as exc:
        repo.manifest_error = str(exc)
    repo.log_rel = repo.location("log")
    try:
        repo.log_bytes = read_regular(root, repo.log_rel)
    except AgentFileError as exc:
        repo.log_error = str(exc)
    return repo
