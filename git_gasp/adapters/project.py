"""Transcript projector (rung 2): a parsed session → GASP events through AgentState.

One session is one run, id ``run_<agent>.<session id>``; importing a session whose run
is already in the log adds nothing (idempotent re-import). Order written:

1. the first prompt's goal (``first-prompt-goal``), then ``run.started`` serving it,
   whose metadata references the archived transcript by path and SHA-256, and an
   ``artifact.attached`` of that archive on the run;
2. the raw layer, causation following the records' parents (Claude ``parentUuid``,
   Codex position): each model response → ``model.called`` + ``model.finished``
   (model, usage), each tool use → ``tool.called``, each tool result →
   ``tool.finished`` + an observation of the tool call;
3. each lifted item right after the record it follows (see ``lifting.py``), every one
   with ``metadata.lifted_by``;
4. ``run.finished`` (outcome ``promoted`` / ``patched`` / ``completed``).

Every string taken from the session is redacted first (``redact/redactor.py``), and so is the
archived copy ``transcripts/<run-id>.jsonl.gz``. The events of each step are written
by the `SessionWriter` the live hooks share (``session_writer.py``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from git_gasp.adapters.lifting import Lifted, lift
from git_gasp.adapters.records import (
    MODEL_RESPONSE,
    TOOL_RESULT,
    TOOL_USE,
    USER_PROMPT,
    Transcript,
    response_texts,
)
from git_gasp.adapters.session_writer import (
    LIVE_RECORDERS,
    SessionWriter,
    outcome_of,
    redacted_archive,
    run_id_for,
)
from git_gasp.base.errors import GaspError
from git_gasp.base.files import atomic_write
from git_gasp.runtime.state import AgentState
from git_gasp.store.lease_wait import take


@dataclass
class ImportResult:
    run_id: str
    added: int = 0  # events appended
    already: bool = False
    archive: str | None = None
    lifted: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    outcome: str | None = None
    goal: str | None = None


def _hook_run(state: AgentState, run_id: str) -> bool:
    """True when `run_id` was started by a live session (its hooks, ``live.py``, or the
    proxy)."""
    node = state.graph.node(run_id)
    meta = node["props"].get("metadata") if node else None
    return isinstance(meta, dict) and meta.get("recorded_by") in LIVE_RECORDERS


class Projector(SessionWriter):
    """Writes one transcript into an open AgentState."""

    def __init__(self, state: AgentState, transcript: Transcript, raw: bytes) -> None:
        sid = transcript.session.session_id or hashlib.sha256(raw).hexdigest()[:32]
        super().__init__(state, transcript.session.agent, transcript.session.session_id,
                         run_id_for(transcript.session.agent, sid), cwd=transcript.session.cwd)
        self.t = transcript
        self.raw = raw
        self.result = ImportResult(self.run_id, skipped=dict(transcript.skipped),
                                   warnings=list(transcript.warnings))

    def run(self) -> ImportResult:
        st = self.state
        if st.graph.has_node(self.run_id):
            self.result.already = True
            return self.result
        if st.run is not None and _hook_run(st, st.run.run_id):
            st.run = None  # a live session's run stays open; this import is a run of its own
        if st.run is not None:
            raise GaspError(f"run {st.run.run_id} is still open in this repo; finish it "
                            "(`git gasp run finish`) before importing")
        before = len(st.events())
        lifted = lift(self.t.records)
        after: dict[str, list[Lifted]] = {}
        for item in lifted:
            after.setdefault(item.after, []).append(item)
            self.result.lifted[item.kind] = self.result.lifted.get(item.kind, 0) + 1
        # 1. goal, run, archive
        goal_item = next((i for i in lifted if i.kind == "goal"), None)
        goal = None
        if goal_item is not None:
            gmeta = self._src(goal_item.after, **goal_item.metadata)
            goal = st.record_goal(self.kept(goal_item.data["title"], "title", gmeta),
                                  self.kept(goal_item.data["summary"], "summary", gmeta),
                                  node_id=self.stable_id("goal", goal_item.key),
                                  metadata=gmeta)
            self.node_of[goal_item.key] = goal
            self.event_of[goal_item.after] = st.creator_of(goal)
        rel = digest = None
        if self.capture.transcripts:  # [capture] transcripts = false: none is kept
            archive = redacted_archive(self.raw, self.r.redactor)
            rel = f"transcripts/{self.run_id}.jsonl.gz"
            atomic_write(Path(st.root) / rel, archive, root=st.root, make_parents=True)
            digest = "sha256:" + hashlib.sha256(archive).hexdigest()
        s = self.t.session
        task = goal_item.data["title"] if goal_item else f"{s.agent} session {s.session_id}"
        st.start_run(self.r.text(task), goal=goal, run_id=self.run_id, metadata=self._src(
            None, agent_version=s.agent_version, model=s.model, cwd=self.paths.path(s.cwd),
            git_branch=s.git_branch,
            transcript={"uri": rel, "hash": digest} if rel is not None else None,
            skipped_lines=dict(self.t.skipped)))
        if rel is not None:
            st.attach_artifact(self.run_id, kind="transcript", uri=rel, hash=digest,
                               summary=f"{s.agent} {s.agent_version or ''} session transcript "
                                       "(redacted)".replace("  ", " "))
        self.result.archive = rel
        run_event = st.run.event_id
        texts = response_texts(self.t.records)
        index = self.t.index()
        # 2. raw layer, 3. lifted items
        for rec in self.t.records:
            cause = self.event_of.get(rec.parent or "", None) or run_event
            if rec.kind == MODEL_RESPONSE:
                parent = index.get(rec.parent or "")
                self.model_call(rec, texts.get(rec.key, ""), cause, s.model,
                                parent.ts_ms if parent is not None else None)
            elif rec.kind == TOOL_USE:
                self.tool_called(rec, cause)
            elif rec.kind == TOOL_RESULT:
                if self.tool_finished(rec, cause) is None:
                    continue
            elif rec.kind == USER_PROMPT and rec.key not in self.event_of:
                self.event_of[rec.key] = run_event
            for item in after.get(rec.key, []):
                self.lifted(item, rec.key, goal)
        outcome = outcome_of(self.result.lifted)
        st.finish_run(outcome, metadata=self._src(None, models=self.models()))
        self.result.outcome = outcome
        self.result.goal = goal
        self.result.added = len(st.events()) - before
        return self.result


def import_session(root: Path, transcript: Transcript, raw: bytes, *,
                   worker_id: str | None = None, wait: float | None = None) -> ImportResult:
    """Open the agent repo at `root` and project one parsed session into it, holding the
    lease first (waiting up to `wait` seconds for its holder; None: refused at once)."""
    with AgentState.open(root, worker_id or "git-gasp-import") as state:
        take(state.store.lease, wait)
        state.refresh()  # whatever was appended before we held the lease
        return Projector(state, transcript, raw).run()
