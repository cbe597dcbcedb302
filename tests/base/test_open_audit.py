"""Every open of a file in git_gasp/ goes through `base.files` (`open_regular`,
`open_file`, `read_file`, `read_text`, `read_regular_file`, `map_regular_file`,
`open_output`, `atomic_write`): no link followed, no FIFO waited on, only regular files,
reads bounded. An AST scan lists each ``open(…)``, ``os.open``/``io.open``/``gzip.open``…,
``Path.open("rb")`` and ``.read_bytes()``/``.read_text()``/``.write_bytes()``/
``.write_text()`` call in the package; one outside `EXCEPTIONS` fails, and so does an
exception that no longer matches a call (the list stays exact). Calls of our own
modules' functions (``files.read_text``, ``model.read_text``) are not file opens."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import git_gasp

PACKAGE = Path(git_gasp.__file__).parent
_MODE = re.compile(r"^[rwaxbt+]+$")
_MODULES = {"os", "io", "gzip", "bz2", "lzma", "tarfile", "zipfile", "codecs"}
_PATH_METHODS = {"read_bytes", "read_text", "write_bytes", "write_text"}

_HELPER = "the helper itself, in base/fileops.py"
_CREATED = "a file this process creates itself: O_CREAT | O_EXCL | O_NOFOLLOW, then renamed"
_DIRECTORY = "a directory opened read-only to fsync it; nothing is read"
_PROC = "the kernel's /proc, not a file of any repository"
_TRANSCRIPT = ("an agent's transcript in the agent's own home directory (~/.claude, ~/.codex), "
               "read as the agent wrote it; not a repository file")
_ARGUMENT = ("a file the user names on the command line, followed as any command follows its "
             "arguments")
_PACKAGE = "the installed package's own files (manual pages, templates, sources)"
_LOG_OBJECT = ("AppendLog.read_bytes (store/append.py), which reads through "
               "store.agentfs.read_regular: not Path.read_bytes")

# (module under git_gasp/, enclosing function) -> why it may open a file itself
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("base/fileops.py", "open_regular"): _HELPER + ": O_NOFOLLOW | O_NONBLOCK, fstat",
    ("base/fileops.py", "open_output"): _HELPER + ": O_NOFOLLOW | O_NONBLOCK, fstat",
    ("base/fileops.py", "AtomicFile.__init__"): _HELPER + "; " + _CREATED,
    ("base/fileops.py", "_Flock.acquire"): _HELPER + ": a lock file (O_NOFOLLOW), flocked, never "
    "read",
    ("base/fileops.py", "sync_dir"): _DIRECTORY,
    ("adapters/agent_hook/drain.py", "main"): "os.devnull, put on stdout while a SessionStart's "
    "drainer works (the agent reads that stdout: only the held queue's message goes there)",
    ("base/files.py", "write_output"): _ARGUMENT + ": a character device or FIFO the "
    "user named as output, written to as a shell's > would (never replaced by a file)",
    ("store/append.py", "_open_append"): "the log's append: O_APPEND | O_NOFOLLOW | "
                                         "O_NONBLOCK, refused unless a regular file (fstat)",
    ("store/lease.py", "Lease._create"): _CREATED,
    ("store/layout.py", "_write_new"): "init creating a file: mode 'x' (O_EXCL) never "
                                       "follows a link, refuse_links checked the way there",
    ("store/holder.py", "proc_stat"): _PROC,
    ("adapters/session_close.py", "_boot_id"): _PROC,
    ("adapters/records.py", "_zstd_stream"): _TRANSCRIPT,
    ("adapters/records.py", "read_raw"): _TRANSCRIPT,
    ("adapters/sessions.py", "_lines"): _TRANSCRIPT,
    ("cli/commands/identity.py", "identity_amend"): _ARGUMENT + " (--set FILE=SRC)",
    ("cli/commands/import_.py", "_import_otel"): _ARGUMENT,
    ("cli/commands/import_.py", "_import_agent_trace"): _ARGUMENT,
    ("view/page.py", "asset"): _PACKAGE,
    ("cli/commands/kg.py", "save_cmd"): _ARGUMENT,
    ("cli/handler.py", "exit_for_error"): "os.devnull, to silence a closed stdout",
    ("cli/help.py", "show_manual"): _PACKAGE,
    ("githooks/templates.py", "read_template"): _PACKAGE,
    ("kg/skills.py", "skill_text"): _PACKAGE,
    ("conformance/saved/logstate_cache.py", "_code_digest"): _PACKAGE,
    ("kg/config.py", "load"): "the user's own kg config in its state home, which may be a "
                              "dotfiles link (its writer refuses to write through one)",
    ("runtime/opening.py", "open_state"): _LOG_OBJECT,
    ("runtime/state.py", "AgentState._ensure_full_index"): _LOG_OBJECT,
    ("runtime/state.py", "AgentState.events"): _LOG_OBJECT,
    ("runtime/state.py", "AgentState.write_snapshot"): _LOG_OBJECT,
}


def _own_modules(tree: ast.Module) -> set[str]:
    """Names this module binds to git_gasp modules (``from git_gasp.base import files``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("git_gasp"):
            for alias in node.names:
                if alias.name[:1].islower():
                    names.add(alias.asname or alias.name)
    return names


def _kind(call: ast.Call, own: set[str]) -> str | None:
    func = call.func
    if isinstance(func, ast.Name) and func.id == "open":
        return "open()"
    if not isinstance(func, ast.Attribute):
        return None
    receiver = func.value.id if isinstance(func.value, ast.Name) else None
    if receiver in own:
        return None  # a function of ours (files.read_text), not a file method
    if func.attr == "open":
        if receiver in _MODULES:
            return f"{receiver}.open()"
        first = call.args[0] if call.args else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str) \
                and _MODE.match(first.value):
            return "Path.open()"
    if func.attr in _PATH_METHODS:
        return f".{func.attr}()"
    return None


def _scan(node: ast.AST, scope: list[str], rel: str, own: set[str],
          found: list[tuple[str, str, int, str]]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            _scan(child, [*scope, child.name], rel, own, found)
            continue
        if isinstance(child, ast.Call):
            kind = _kind(child, own)
            if kind is not None:
                found.append((rel, ".".join(scope) or "<module>", child.lineno, kind))
        _scan(child, scope, rel, own, found)


def file_opens() -> list[tuple[str, str, int, str]]:
    """(module, enclosing function, line, what) for every file open in the package."""
    found: list[tuple[str, str, int, str]] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_bytes(), rel)
        _scan(tree, [], rel, _own_modules(tree), found)
    return found


def test_every_file_open_goes_through_base_files_or_is_an_explained_exception():
    opens = file_opens()
    unexplained = [f"git_gasp/{rel}:{line} in {func}: {kind}" for rel, func, line, kind in opens
                   if (rel, func) not in EXCEPTIONS]
    assert not unexplained, (
        "open repository and git-dir files through git_gasp.base.files (read_file, read_text, "
        "open_file, open_regular, open_output, atomic_write), or add the call to EXCEPTIONS "
        "with why it is safe:\n  " + "\n  ".join(unexplained))
    stale = sorted(set(EXCEPTIONS) - {(rel, func) for rel, func, _line, _kind in opens})
    assert not stale, f"EXCEPTIONS lists functions that open nothing now: {stale}"


def test_the_scan_sees_each_kind_of_open(tmp_path):
    """The scanner's own check: every spelling it must catch is caught, ours are not."""
    source = ("from git_gasp.base import files\n"
              "def f(p):\n"
              "    open(p)\n    os.open(p, 0)\n    io.open(p)\n    p.open('rb')\n"
              "    p.read_bytes()\n    p.read_text()\n    p.write_bytes(b'')\n"
              "    files.read_text(p)\n    AgentState.open(p)\n")
    tree = ast.parse(source)
    own = _own_modules(tree)
    kinds = [_kind(node, own) for node in ast.walk(tree) if isinstance(node, ast.Call)]
    assert sorted(k for k in kinds if k) == sorted(
        ["open()", "os.open()", "io.open()", "Path.open()", ".read_bytes()", ".read_text()",
         ".write_bytes()"])
