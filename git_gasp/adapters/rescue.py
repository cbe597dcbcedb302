"""Transcript rescue: archive the transcript of a session already in the log.

Claude Code deletes transcripts after 30 days (``cleanupPeriodDays``) and Codex
compresses rollouts after 7, so a run whose transcript was never archived (recorded by
hooks before archiving existed, or closed while its transcript was unreadable) should
get it while it is still on disk: ``git gasp import AGENT --all`` calls `rescue` for
every session it finds already imported. The archive is the one the hooks and the
importer write (``transcripts/<run id>.jsonl.gz``, redacted, gzip with mtime 0),
attached to the run with its SHA-256; a run that has one already is left alone, so a
second rescue adds nothing.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from git_gasp.adapters.records import Transcript
from git_gasp.adapters.session_close import archived
from git_gasp.adapters.session_writer import redacted_archive, run_id_for
from git_gasp.base.files import atomic_write
from git_gasp.redact.redactor import Redactor
from git_gasp.runtime import AgentState


def session_runs(graph, base: str) -> list[str]:
    """The runs of one session: `base`, then its continuations ``base.2``, ``base.3``…"""
    runs, n = [], 2
    if graph.has_node(base):
        runs.append(base)
        while graph.has_node(f"{base}.{n}"):
            runs.append(f"{base}.{n}")
            n += 1
    return runs


def rescue(root: Path, transcript: Transcript, raw: bytes) -> list[str]:
    """Archive `raw` for every run of its session lacking a transcript; return the
    archive paths written (relative to `root`)."""
    s = transcript.session
    sid = s.session_id or hashlib.sha256(raw).hexdigest()[:32]
    written: list[str] = []
    with AgentState.open(root, "git-gasp-import") as state:
        todo = [r for r in session_runs(state.graph, run_id_for(s.agent, sid))
                if not archived(state, r)]
        if not todo:
            return written
        archive = redacted_archive(raw, Redactor())
        digest = "sha256:" + hashlib.sha256(archive).hexdigest()
        for run_id in todo:
            rel = f"transcripts/{run_id}.jsonl.gz"
            atomic_write(Path(root) / rel, archive, root=root, make_parents=True)
            state.attach_artifact(run_id, kind="transcript", uri=rel, hash=digest,
                                  summary=f"{s.agent} session transcript (redacted, rescued)")
            written.append(rel)
    return written


def rescue_message(paths: list[str]) -> bytes:
    """The commit message of the rescued archives."""
    lines = [f"transcripts: archive {len(paths)} session transcript(s)", ""]
    lines += [f"- {p}" for p in paths]
    return ("\n".join(lines) + "\n").encode()
