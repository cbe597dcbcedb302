"""Lifting: infer the semantic spine (goal, eval, failure, patch, decision) from raw records.

A closed agent's transcript holds messages and tool calls, not goals or decisions
(spec, "the lifting ceiling"). These rules infer what they can, as pure functions over
the neutral records of ``records.py``; every lifted item carries the name of the rule
that produced it (``metadata.lifted_by``), so a reader can tell inferred from recorded.

Rules (``RULES``):

``first-prompt-goal``
    The session's first user prompt becomes a goal (title: its first line).
``later-prompt-task``
    Every later prompt becomes a task serving that goal; a prompt repeating the goal's
    own text (the same prompt delivered again: a resumed or replayed session) lifts
    nothing, so one prompt gives one goal.
``test-command-eval``
    A shell command that runs tests or a build (pytest, unittest, tox, npm/yarn/pnpm
    test|build, cargo test|build|check, go test|build|vet, make, mvn, gradle, jest,
    vitest, rspec, ctest, dotnet test|build, tsc, mypy, …; never a ``git`` command)
    becomes an eval when its result arrives: Passed (score 1.0) when the tool reported
    no error and the output shows no failing-test summary, else Failed (score 0.0).
``failed-eval-failure``
    A Failed eval also records a failure (summary: the output's last lines).
``edit-commit-patch``
    File edits (Write/Edit/MultiEdit/NotebookEdit/apply_patch, or shell commands that
    write files: redirection, ``sed -i``, ``tee``, ``git apply``…) followed by a
    successful ``git commit`` become one patch referencing that commit
    (``references_commit``: the id git printed; title: the commit message). The
    patch advances the goal and addresses the failures observed since the previous
    patch.
``eval-validates-patch``
    The last eval run after the patch's final edit validates it (``validated_by``):
    one run before the commit is attached when the patch is recorded, one run after
    the commit (and before the next edit) when the eval is recorded.
``passing-eval-decision``
    When the eval that validates a patch Passed, a decision (Approved) promotes the
    patch, recorded right after whichever of the two came later.
``passing-eval-resolves-failure``
    A Passed eval run after an edit resolves every open failure observed before that
    edit (the change it tested addressed them): each becomes a ``status`` item, recorded
    as ``failure.status_changed`` Open → Resolved with its UpdateNode pair.
``promoted-patch-achieves-goal``
    The goal ends as the session did: when a decision promotes a patch that advances
    the goal (the session's outcome is then ``promoted``), the goal becomes Achieved
    (``goal.status_changed`` Open → Achieved, paired), recorded right after the
    decision. A session that ends patched, completed or abandoned leaves its goal Open:
    nothing it did was shown to work.

A ``status`` item's data: ``of`` (the key of the lifted item whose node changes),
``status`` (the new status) and ``reason``; it is recorded once (a node already in that
status is left alone), as the spec pairs ``*.status_changed`` events.

``lift(records)`` returns :class:`Lifted` items, each to be recorded right after the
record named by ``after``; ``ref`` fields name other lifted items by ``key``.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from git_gasp.adapters.records import TOOL_RESULT, TOOL_USE, USER_PROMPT, Record
from git_gasp.base.record import Record as Value

RULES = (
    "first-prompt-goal",
    "later-prompt-task",
    "test-command-eval",
    "failed-eval-failure",
    "edit-commit-patch",
    "eval-validates-patch",
    "passing-eval-decision",
    "passing-eval-resolves-failure",
    "promoted-patch-achieves-goal",
)

SHELL_TOOLS = frozenset({"bash", "shell", "exec_command", "local_shell", "shell_command",
                         "container.exec", "run_shell_command", "execute"})  # Droid's Execute
EDIT_TOOLS = frozenset({"write", "edit", "multiedit", "notebookedit", "apply_patch",
                        "str_replace_based_edit_tool", "create_file", "write_file",
                        "replace", "create"})  # Gemini CLI's replace, Copilot CLI's create

_TEST = re.compile(
    r"""(?x)^(?:
        (?:python[0-9.]*\s+-m\s+)?(?:pytest|py\.test|unittest|nose2|tox|nox|hatch\s+(?:test|run)) |
        (?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:test|build|check|typecheck|ci)\b |
        (?:npx\s+)?(?:jest|vitest|mocha|ava|tsc|playwright\s+test)\b |
        cargo\s+(?:test|build|check|clippy|nextest)\b |
        go\s+(?:test|build|vet)\b |
        make(?:\s+-\S+)*(?:\s+(?:test|tests|check|build|all|ci)\b|\s*(?:$|[;&|])) |
        (?:mvn|\./mvnw|gradle|\./gradlew)\b[^;&|]*\b(?:test|verify|build|check|package)\b |
        ctest\b | (?:bundle\s+exec\s+)?rspec\b | rake\s+test\b | phpunit\b |
        dotnet\s+(?:test|build)\b | mypy\b | pyright\b | swift\s+(?:test|build)\b |
        bazel\s+(?:test|build)\b | meson\s+test\b | ninja\b
    )""")
_FAIL_SUMMARY = re.compile(
    r"(?im)^(?:=+\s*)?(?:.*\b\d+\s+(?:failed|errors?)\b|FAILED\b|FAIL\b|error(?:\[E\d+\])?:|"
    r"test result: FAILED|Tests?:\s+\d+\s+failed)")
_GIT_COMMIT = re.compile(r"(?:^|[\s;&|(])git(?:\s+-[cC]\s+\S+|\s+--\S+)*\s+commit\b")
_SHA_BRACKET = re.compile(r"\[[^\]\n]*?\s([0-9a-f]{7,40})\]\s*(.*)")
_SHA_LINE = re.compile(r"(?m)^([0-9a-f]{7,40})\s+(.*)$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PATCH_FILE = re.compile(r"(?m)^\*\*\* (?:Add|Update|Delete) File: (.+)$")
_MESSAGE = re.compile(r"""(?:^|\s)(?:-[a-zA-Z]*m|--message(?:=|\s))\s*"""
                       r"""(?:'([^']*)'|"([^"]*)"|(\S+))""")
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", "\n"})


def shell_writes(cmd: str) -> list[str]:
    """Files a shell command writes: redirections, `sed -i`, `tee`, `git apply`/`patch`."""
    files: list[str] = []
    for seg in _segments(cmd):
        for i, tok in enumerate(seg[:-1]):
            if tok in (">", ">>", ">|") and not seg[i + 1].startswith(("/dev/", "&")):
                files.append(seg[i + 1])
        if not seg:
            continue
        prog = seg[0].rsplit("/", 1)[-1]
        args = [a for a in seg[1:] if a not in (">", ">>", "<", "<<")]
        if prog == "sed" and any(a.startswith("-i") or a == "--in-place" for a in args):
            operands = [a for a in args if not a.startswith("-")]
            files.extend(operands[1:])  # the first operand is the script
        elif prog == "tee":
            files.extend(a for a in args if not a.startswith("-"))
        elif prog == "patch" or (prog == "git" and args[:1] == ["apply"]):
            files.append("(patch)")
        elif prog in ("perl", "ruby") and any(a.startswith("-pi") or a == "-i" for a in args):
            files.extend(a for a in args[2:] if not a.startswith("-"))
    return files


class Lifted(Value):
    """One inferred semantic item, to be recorded right after record `after`."""

    FIELDS = ("rule", "kind", "key", "after", "data")

    def __init__(self, rule: str, kind: str, key: str, after: str,
                 data: dict[str, Any] | None = None) -> None:
        self.rule = rule
        self.kind = kind  # goal | task | eval | failure | patch | decision | status
        self.key = key  # unique among the items of one session
        self.after = after  # record key
        self.data = {} if data is None else data

    @property
    def metadata(self) -> dict[str, Any]:
        return {"lifted_by": self.rule}


def command_of(tool_input: Any) -> str | None:
    """The shell command text of a tool call's input, if it is one."""
    if not isinstance(tool_input, dict):
        return None
    for key in ("command", "cmd", "script"):
        value = tool_input.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            if len(value) >= 3 and value[-2] in ("-c", "-lc", "-ic"):
                return value[-1]
            return shlex.join(value)
    return None


def is_shell(name: str) -> bool:
    return name.lower() in SHELL_TOOLS


_WRAPPERS = frozenset({"uv", "poetry", "pipenv", "hatch", "pdm", "rye", "npx", "bunx", "time",
                       "nice", "sudo", "env", "timeout", "xvfb-run", "coverage", "dotenv"})


def _segments(cmd: str) -> list[list[str]]:
    try:
        lex = shlex.shlex(cmd, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        tokens = list(lex)
    except ValueError:
        tokens = cmd.split()
    segments: list[list[str]] = [[]]
    for tok in tokens:
        if tok in _SEPARATORS:
            segments.append([])
        else:
            segments[-1].append(tok)
    return [seg for seg in segments if seg]


def is_test_command(cmd: str) -> bool:
    """True when a segment of `cmd` starts a test or build run (git commands never do)."""
    if _GIT_COMMIT.search(cmd):
        return False
    for seg in _segments(cmd):
        words = list(seg)
        while words and (_ASSIGNMENT.match(words[0])
                         or words[0].rsplit("/", 1)[-1] in _WRAPPERS
                         or words[0] in ("run", "exec") or words[0].isdigit()
                         or (words[0].startswith("-") and len(words) > 1)):
            words.pop(0)
        if words:
            words[0] = words[0].rsplit("/", 1)[-1] if not words[0].startswith("./") else words[0]
            if _TEST.search(" ".join(words)):
                return True
    return False


def is_commit_command(cmd: str) -> bool:
    return _GIT_COMMIT.search(cmd) is not None


def edited_files(name: str, tool_input: Any) -> list[str] | None:
    """Files a tool call edits (None when it is not an edit)."""
    low = name.lower()
    if low in EDIT_TOOLS:
        if isinstance(tool_input, dict):
            for key in ("file_path", "notebook_path", "path", "filename", "filePath"):
                if isinstance(tool_input.get(key), str):
                    return [tool_input[key]]
            patch = tool_input.get("input") or tool_input.get("patch")
            if isinstance(patch, str):
                found = _PATCH_FILE.findall(patch)
                if found:
                    return found
        return []
    if is_shell(name):
        cmd = command_of(tool_input)
        if cmd and not is_commit_command(cmd):
            return shell_writes(cmd) or None
    return None


def commit_of(output: str) -> tuple[str | None, str | None]:
    """(commit id, subject) printed by `git commit` / `git log --oneline`, if any."""
    m = _SHA_BRACKET.search(output)
    if m:
        return m.group(1), m.group(2).strip() or None
    m = _SHA_LINE.search(output)
    if m:
        return m.group(1), m.group(2).strip() or None
    return None, None


def commit_message(cmd: str) -> str | None:
    m = _MESSAGE.search(cmd)
    if not m:
        return None
    msg = next(g for g in m.groups() if g is not None)
    return msg.strip().splitlines()[0] if msg.strip() else None


def eval_status(result: Record) -> str:
    """Passed or Failed for a finished test/build command."""
    if result.get("is_error") or result.get("exit_code") not in (None, 0):
        return "Failed"
    tail = "\n".join(str(result.get("output") or "").splitlines()[-20:])
    return "Failed" if _FAIL_SUMMARY.search(tail) else "Passed"


def tail_lines(text: str, n: int = 5, limit: int = 400) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    out = "\n".join(lines[-n:])
    return out[-limit:]


def first_line(text: str, limit: int = 120) -> str:
    for ln in text.strip().splitlines():
        if ln.strip():
            ln = ln.strip()
            return ln if len(ln) <= limit else ln[: limit - 1] + "…"
    return "(empty prompt)"


def lift(records: list[Record]) -> list[Lifted]:
    """Apply every rule to one session's records, in order."""
    lifter = Lifter()
    out: list[Lifted] = []
    for rec in records:
        out.extend(lifter.feed(rec))
    return out


def _item(d: dict | None) -> Lifted | None:
    return None if d is None else Lifted(d["rule"], d["kind"], d["key"], d["after"],
                                         dict(d.get("data") or {}))


def _dict(item: Lifted | None) -> dict | None:
    return None if item is None else {"rule": item.rule, "kind": item.kind, "key": item.key,
                                      "after": item.after, "data": item.data}


class Lifter:
    """The rules as a state machine fed one record at a time (`feed`), so a live session
    lifts each new record once instead of the whole session again on every hook.

    Its state (`to_json` / ``Lifter(state)``) holds only what later records can still
    need: the tool calls whose results have not arrived, the files edited and failures
    seen since the last patch, the last eval and the patch later evals validate. `fed`
    counts the records fed to this instance (tests count work with it).
    """

    def __init__(self, state: dict | None = None) -> None:
        s = state or {}
        self.uses: dict[str, dict] = dict(s.get("uses") or {})  # key -> {name, input}
        self.goal: str | None = s.get("goal")
        self.edits: list[str] = list(s.get("edits") or [])  # files edited since the commit
        self.edit_keys: list[str] = list(s.get("edit_keys") or [])
        self.failures: list[str] = list(s.get("failures") or [])  # since the last patch
        self.open_failures: list[str] = list(s.get("open_failures") or [])  # not resolved
        self.edited_after: list[str] = list(s.get("edited_after") or [])  # edit since them
        self.goal_text: str | None = s.get("goal_text")  # the goal's prompt, stripped
        self.last_eval = _item(s.get("last_eval"))  # after the latest edit, before a commit
        self.last_patch = _item(s.get("last_patch"))  # the patch later evals validate
        self.decided: bool = bool(s.get("decided"))  # last_patch has its decision
        self.prompts: int = int(s.get("prompts") or 0)
        self.fed = 0

    def to_json(self) -> dict:
        """The state, as JSON-ready data (`Lifter(state)` resumes from it)."""
        return {"uses": self.uses, "goal": self.goal, "edits": self.edits,
                "edit_keys": self.edit_keys, "failures": self.failures,
                "last_eval": _dict(self.last_eval), "last_patch": _dict(self.last_patch),
                "decided": self.decided, "prompts": self.prompts,
                "open_failures": self.open_failures, "edited_after": self.edited_after,
                "goal_text": self.goal_text}

    def _decide(self, patch: Lifted, ev: Lifted, after: str, out: list[Lifted]) -> None:
        if ev.data["status"] != "Passed" or (patch is self.last_patch and self.decided):
            return
        self.decided = True
        out.append(Lifted("passing-eval-decision", "decision", f"decision:{patch.key}", after, {
            "status": "Approved", "patch": patch.key, "eval": ev.key,
            "reason": f"{ev.data['command'][:200]} passed after the change",
        }))
        goal = patch.data.get("goal")
        if goal:
            out.append(Lifted("promoted-patch-achieves-goal", "status", f"status:{goal}",
                              after, {"of": goal, "status": "Achieved",
                                      "reason": f"patch {patch.data['title'][:200]!r} promoted"}))

    def _resolve(self, ev: Lifted, after: str, out: list[Lifted]) -> None:
        """A Passed eval resolves the open failures an edit came after."""
        for fkey in self.edited_after:
            out.append(Lifted("passing-eval-resolves-failure", "status", f"status:{fkey}",
                              after, {"of": fkey, "status": "Resolved",
                                      "reason": f"{ev.data['command'][:200]} passed "
                                                "after the change"}))
        self.open_failures = [f for f in self.open_failures if f not in self.edited_after]
        self.edited_after = []

    def feed(self, rec: Record) -> list[Lifted]:
        """The items `rec` lifts, given every record fed before it."""
        self.fed += 1
        out: list[Lifted] = []
        if rec.kind == USER_PROMPT:
            text = str(rec.get("text") or "")
            if self.prompts and text.strip() == self.goal_text:
                return out  # the goal's prompt again: one prompt, one goal
            if self.prompts == 0:
                self.goal_text = text.strip()
                self.goal = f"goal:{rec.key}"
                out.append(Lifted("first-prompt-goal", "goal", self.goal, rec.key, {
                    "title": first_line(text), "summary": text[:2000]}))
            else:
                out.append(Lifted("later-prompt-task", "task", f"task:{rec.key}", rec.key, {
                    "title": first_line(text), "summary": text[:2000], "goal": self.goal}))
            self.prompts += 1
        elif rec.kind == TOOL_USE:
            self.uses[rec.key] = {"name": rec.get("name"), "input": rec.get("input")}
        elif rec.kind == TOOL_RESULT:
            use = self.uses.pop(str(rec.get("tool_use_id")), None)
            if use is not None:
                self._result(rec, str(rec.get("tool_use_id")), use, out)
        return out

    def _result(self, rec: Record, use_key: str, use: dict, out: list[Lifted]) -> None:
        name = str(use.get("name") or "")
        ok = not rec.get("is_error") and rec.get("exit_code") in (None, 0)
        cmd = command_of(use.get("input")) if is_shell(name) else None
        files = edited_files(name, use.get("input"))
        if files is not None and ok:
            self.edits.extend(f for f in files if f not in self.edits)
            self.edit_keys.append(use_key)
            self.last_eval = None
            self.last_patch = None  # a new edit: older patches are no longer what runs
            self.edited_after = list(self.open_failures)  # the edit came after these
        if cmd and is_test_command(cmd):
            status = eval_status(rec)
            ev = Lifted("test-command-eval", "eval", f"eval:{use_key}", rec.key, {
                "command": cmd, "status": status, "score": 1.0 if status == "Passed" else 0.0,
                "tool_use_id": use_key, "output_tail": tail_lines(str(rec.get("output") or "")),
            })
            if self.last_patch is not None:
                ev.data["validates"] = self.last_patch.key
                ev.data["validated_by_rule"] = "eval-validates-patch"
            out.append(ev)
            if status == "Failed":
                fkey = f"failure:{use_key}"
                summary = f"`{first_line(cmd, 80)}` failed"
                tail = ev.data["output_tail"]
                out.append(Lifted("failed-eval-failure", "failure", fkey, rec.key, {
                    "summary": summary + (f": {tail_lines(tail, 2, 200)}" if tail else ""),
                    "eval": ev.key}))
                self.failures.append(fkey)
                self.open_failures.append(fkey)
            elif self.edited_after:
                self._resolve(ev, rec.key, out)
            if self.last_patch is not None:
                self._decide(self.last_patch, ev, rec.key, out)
            else:
                self.last_eval = ev
        elif cmd and ok and is_commit_command(cmd) and self.edits:
            sha, subject = commit_of(str(rec.get("output") or ""))
            title = commit_message(cmd) or subject or (f"commit {sha}" if sha else "commit")
            validator = self.last_eval
            patch = Lifted("edit-commit-patch", "patch", f"patch:{use_key}", rec.key, {
                "title": title, "commit": sha, "files": list(self.edits),
                "edits": list(self.edit_keys), "goal": self.goal,
                "addresses": list(self.failures),
                "validated_by": validator.key if validator else None,
            })
            out.append(patch)
            self.last_patch, self.decided = patch, False
            if validator is not None:
                self._decide(patch, validator, rec.key, out)
            self.edits, self.edit_keys, self.failures, self.last_eval = [], [], [], None
