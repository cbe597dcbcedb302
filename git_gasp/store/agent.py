"""Everything the checks read from one agent repo, loaded once and shared."""

from __future__ import annotations

import os
from functools import cached_property

from git_gasp.base.record import Record
from git_gasp.protocol.envelope import ParsedLog, parse_log
from git_gasp.protocol.fold import FoldResult, fold
from git_gasp.protocol.manifest import DEFAULT_LOCATIONS, Manifest, ManifestError, parse_manifest
from git_gasp.store.agentfs import AgentFileError, read_regular, regular_file

MANIFEST = "AGENT.md"


class AgentRepo(Record):
    """An agent repo's root plus its manifest and log, each with its load error.

    The log's bytes are read on first use (`log_bytes`): a cached re-check reads only
    the lines after its saved state (`log_stat` says the file is there and regular).
    `root` is kept as the caller gave it (a str, or a Path); the checks join it as a str.
    """

    FIELDS = ("root", "manifest", "manifest_error", "log_rel", "log_error", "log_stat",
              "extra")

    def __init__(self, root: str | os.PathLike, manifest: Manifest | None = None,
                 manifest_error: str | None = None, log_rel: str = DEFAULT_LOCATIONS["log"],
                 log_error: str | None = None, log_stat: os.stat_result | None = None,
                 extra: dict | None = None) -> None:
        self.root, self.manifest, self.manifest_error = root, manifest, manifest_error
        self.log_rel, self.log_error, self.log_stat = log_rel, log_error, log_stat
        self.extra = {} if extra is None else extra

    @cached_property
    def log_bytes(self) -> bytes | None:
        """The whole log (None when it cannot be read; `log_error` says why)."""
        if self.log_error is not None:
            return None
        try:
            return read_regular(self.root, self.log_rel)
        except AgentFileError as exc:
            self.log_error = str(exc)
            return None

    @property
    def log_loaded(self) -> bool:
        """Whether `log_bytes` is in memory (read, or set by a caller)."""
        return "log_bytes" in self.__dict__

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


def load_agent(root: str | os.PathLike) -> AgentRepo:
    """Read AGENT.md and look at the log (read when first used); load errors are
    recorded, never raised."""
    repo = AgentRepo(root=root)
    try:
        repo.manifest = parse_manifest(read_regular(root, MANIFEST))
    except (AgentFileError, ManifestError) as exc:
        repo.manifest_error = str(exc)
    repo.log_rel = repo.location("log")
    try:
        repo.log_stat = regular_file(root, repo.log_rel)
    except AgentFileError as exc:
        repo.log_error = str(exc)
    return repo
