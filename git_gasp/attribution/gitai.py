"""Git AI Standard v3 authorship logs (`refs/notes/ai`, schema ``authorship/3.0.0``).

A note on a commit holds an attestation section, then a line ``---``, then a JSON
metadata object::

    src/main.rs
      abcd1234abcd1234 1-10,15-20
    ---
    {"schema_version": "authorship/3.0.0", "base_commit_sha": "…",
     "prompts": {"abcd1234abcd1234": {"agent_id": {"tool": "cursor", "id": "…",
                                                     "model": "claude-4.5-opus"}, …}}}

A path line starts at the first column (double-quoted when it holds spaces); each entry
under it is indented two spaces: a prompt hash (a key of ``prompts``), a space, and
1-indexed line numbers and ranges, comma-separated, as they are in *that* commit.

An entry's id is looked up as git-ai routes it (its v1.4 notes: "Sessions & Trace IDs",
docs/migrations/sessions-v2-note-format.md of git-ai-project/git-ai, the same schema
version): ``s_<session>::t_<trace>`` in ``sessions`` by the part before ``::``,
``h_…`` in ``humans`` (a known human, not an AI line; ``h_…::t_…`` too), anything else
in ``prompts``. An entry the metadata does not name is still an AI line (the
attestation section lists AI-authored lines), with nothing more known of it. Anything
this reader does not recognise is left out, never an error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from git_gasp.attribution.porcelain import unquote_path
from git_gasp.base import git
from git_gasp.odb.gitdirs import locate

NOTES_REF = "refs/notes/ai"
SCHEMA = "authorship/3.0.0"


@dataclass
class Note:
    """One commit's authorship log: path -> [(start, end, id)] and the prompt records."""

    files: dict[bytes, list[tuple[int, int, str]]] = field(default_factory=dict)
    prompts: dict = field(default_factory=dict)
    humans: dict = field(default_factory=dict)
    sessions: dict = field(default_factory=dict)
    schema: str | None = None

    def who(self, path: bytes, line: int) -> dict | None:
        """What the note says of `line` of `path` (in its commit), or None."""
        for start, end, ident in self.files.get(path, ()):
            if start <= line <= end:
                return self._describe(ident)
        return None

    def _describe(self, ident: str) -> dict:
        out: dict = {"source": "git-ai", "id": ident, "schema": self.schema}
        key = ident.split("::", 1)[0]
        if key.startswith("h_"):
            out["type"] = "human"
            human = self.humans.get(key)
            if isinstance(human, dict) and isinstance(human.get("author"), str):
                out["author"] = human["author"]
            return out
        out["type"] = "ai"
        prompt = (self.sessions if key.startswith("s_") else self.prompts).get(key)
        agent = prompt.get("agent_id") if isinstance(prompt, dict) else None
        if isinstance(agent, dict):
            for key in ("tool", "model", "id"):
                if isinstance(agent.get(key), str):
                    out["session" if key == "id" else key] = agent[key]
        if isinstance(prompt, dict) and isinstance(prompt.get("human_author"), str):
            out["author"] = prompt["human_author"]
        return out


def _ranges(spec: bytes) -> list[tuple[int, int]]:
    out = []
    for part in spec.split(b","):
        lo, dash, hi = part.partition(b"-")
        if not lo.isdigit() or (dash and not hi.isdigit()):
            return []  # not a line specification: the entry is left out
        start, end = int(lo), int(hi) if dash else int(lo)
        if start >= 1 and end >= start:
            out.append((start, end))
    return out


def parse_note(data: bytes) -> Note | None:
    """`data` read as an authorship log, or None when it is not one (no ``---``)."""
    lines = data.split(b"\n")
    try:
        cut = next(i for i, line in enumerate(lines) if line.rstrip(b"\r") == b"---")
    except StopIteration:
        return None
    note = Note()
    try:
        meta = json.loads(b"\n".join(lines[cut + 1:]) or b"{}")
    except (ValueError, RecursionError):
        meta = None
    if isinstance(meta, dict):
        note.schema = meta.get("schema_version") if isinstance(
            meta.get("schema_version"), str) else None
        note.prompts = meta.get("prompts") if isinstance(meta.get("prompts"), dict) else {}
        note.humans = meta.get("humans") if isinstance(meta.get("humans"), dict) else {}
        note.sessions = meta.get("sessions") if isinstance(meta.get("sessions"), dict) else {}
    path: bytes | None = None
    for line in lines[:cut]:
        line = line.rstrip(b"\r")
        if not line:
            continue
        if not line.startswith(b" "):
            path = unquote_path(line)
            continue
        ident, _, spec = line.strip().partition(b" ")
        if path is None or not ident or not spec:
            continue
        name = ident.decode("utf-8", "replace")
        note.files.setdefault(path, []).extend(
            (s, e, name) for s, e in _ranges(spec.strip()))
    return note


def may_have_notes(cwd: str) -> bool:
    """False when the repository at `cwd` surely has no ``refs/notes/ai`` (no loose ref,
    none in packed-refs): then no git process is started for the notes."""
    try:
        dirs = locate(cwd)
    except (OSError, ValueError):
        return True
    if dirs is None:
        return True
    return dirs.ref(NOTES_REF.encode()) is not None  # False: cannot tell, ask git


def read_notes(cwd: str, commits: list[str]) -> dict[str, Note]:
    """The authorship logs attached to `commits` (one git process; none without notes)."""
    wanted = [c for c in commits if set(c) != {"0"}]
    if not wanted or not may_have_notes(cwd):
        return {}
    proc = git.run(cwd, "log", "--no-walk=unsorted", f"--notes={NOTES_REF}",
                   "--format=%H%x00%N%x01", "--stdin",
                   input=("\n".join(wanted) + "\n").encode(), check=False)
    if proc.returncode != 0:
        return {}
    out: dict[str, Note] = {}
    for chunk in proc.stdout.split(b"\x01"):
        sha, sep, body = chunk.lstrip(b"\n").partition(b"\x00")
        if not sep or not body.strip():
            continue
        note = parse_note(body)
        if note is not None:
            out[sha.decode("ascii", "replace")] = note
    return out


def noted_commits(cwd: str) -> set[str]:
    """Every commit ``refs/notes/ai`` holds a note on (one `git notes list`; none, and
    no process, without the ref)."""
    if not may_have_notes(cwd):
        return set()
    proc = git.run(cwd, "notes", f"--ref={NOTES_REF}", "list", check=False)
    if proc.returncode != 0:
        return set()
    out = set()
    for line in proc.stdout.decode("ascii", "replace").splitlines():
        parts = line.split()
        if len(parts) == 2:
            out.add(parts[1])
    return out
