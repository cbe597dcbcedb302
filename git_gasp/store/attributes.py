"""The merge driver's registration (per clone) and the `.gitattributes` lines (shared).

`.gitattributes` is written in the agent root, next to the `.gitignore` that `init`
writes: git reads patterns relative to the directory of the file that holds them, so
the lines need no prefix when the agent root is a subdirectory, need no escaping of
odd directory names, and keep working when the directory is moved. A pattern with a
slash (``state/events.jsonl``) is anchored to that directory; ``**/facts.jsonl``
matches at every depth below it, including the directory itself.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import sys
from pathlib import Path

from git_gasp.base.errors import GaspError
from git_gasp.base.files import open_file
from git_gasp.base.git import (
    check_attr,
    config_get,
    config_set_local,
    config_unset_local,
    run,
)
from git_gasp.protocol.lineendings import crlf_converted, lf_fix
from git_gasp.protocol.manifest import DEFAULT_LOCATIONS, ManifestError, parse_manifest

DRIVER = "gasp"
DRIVER_NAME = "GASP union merge for append-only agent state"
DRIVER_ARGS = "merge-driver --ancestor %O --current %A --other %B --marker-size %L --path %P"
ATTR_COMMENT = ("# GASP files: union merge driver for the append-only ones, exact bytes (-text) "
                "for all (git gasp install-hooks)")
DEFAULT_LOG = "state/events.jsonl"
OTHER_PATTERNS = ("**/facts.jsonl", "**/JOURNAL.md")
SAMPLE_PATHS = ("memory/facts.jsonl", "journal/JOURNAL.md")


def gasp_command() -> list[str]:
    """How to run this installation of git-gasp: its console script, else `python -m`."""
    beside = Path(sys.executable).with_name("git-gasp")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("git-gasp")
    if found:
        return [found]
    return [sys.executable, "-m", "git_gasp.cli.main"]


def driver_command() -> str:
    """The `merge.gasp.driver` value: shell words git runs, with git's placeholders."""
    return " ".join(shlex.quote(w) for w in gasp_command()) + " " + DRIVER_ARGS


def locations(root: str | os.PathLike) -> dict[str, str]:
    """The manifest's locations (log, identity, memory), or the defaults."""
    try:
        with open_file(str(Path(root, "AGENT.md"))) as f:
            data = f.read()
    except OSError:
        return dict(DEFAULT_LOCATIONS)
    if b"ocations" not in data:
        return dict(DEFAULT_LOCATIONS)
    try:  # a checkout converted to CRLF still names its locations
        return parse_manifest(data.replace(b"\r\n", b"\n")).locations
    except (ManifestError, UnicodeError):
        return dict(DEFAULT_LOCATIONS)


def log_location(root: str | os.PathLike) -> str:
    """The log path relative to the agent root (the manifest may move it)."""
    return locations(root)["log"]


def _pattern(path: str) -> str:
    """A gitattributes pattern matching exactly `path` (relative, ``/``-separated)."""
    escaped = "".join("\\" + c if c in "*?[\\" else c for c in path)
    if "/" not in path.strip("/"):
        escaped = "/" + escaped  # anchor a bare name to this directory
    if any(c in escaped for c in ' \t"') or not escaped.isprintable():
        return '"' + escaped.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return escaped


def _tree_pattern(path: str) -> str:
    """A gitattributes pattern matching every file below directory `path`."""
    pattern = _pattern(path.strip("/"))
    return pattern[:-1] + '/**"' if pattern.startswith('"') else pattern + "/**"


def eol_patterns(root: str | os.PathLike) -> list[str]:
    """Patterns of every GASP file whose bytes are hashed or parsed line by line."""
    locs = locations(root)
    return [_pattern(locs["log"]), *OTHER_PATTERNS, _tree_pattern(locs["identity"]),
            "/AGENT.md", "/snapshots/**", "/.agent/config.toml"]


def attribute_lines(root: str | os.PathLike) -> list[str]:
    """The `.gitattributes` lines for the GASP files of the agent at `root`.

    The append-only files get the union merge driver. Every GASP file gets `-text`: git
    never converts its line endings, whatever core.autocrlf or a broader `* text=auto`
    says. `-text` rather than `text eol=lf` because it keeps the bytes exact both ways:
    the log's sha256 (snapshot integrity), the identity hash and append-only history
    are over raw bytes, and `text` would also rewrite on commit (normalizing a CRLF
    that some tool wrote), changing bytes already hashed.
    """
    return [f"{_pattern(log_location(root))} merge={DRIVER}",
            *(f"{p} merge={DRIVER}" for p in OTHER_PATTERNS),
            *(f"{p} -text" for p in eol_patterns(root))]


_PROBE = 1 << 16


def _converted(path: str) -> bool:
    """True when the regular file at `path` reads as LF text converted to CRLF."""
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode):
            return False
        with open_file(path) as fh:
            head = fh.read(_PROBE)
            if st.st_size > _PROBE:  # a one-line graph.json ends in its only newline
                fh.seek(st.st_size - 2)
                if b"\r\n" not in head and fh.read(2) != b"\r\n":
                    return False
                fh.seek(len(head))
            elif b"\r\n" not in head:
                return False
            data = head + fh.read()
    except OSError:
        return False
    return crlf_converted(data)


def crlf_paths(root: str | os.PathLike) -> list[str]:
    """The GASP files of this checkout whose line endings git converted to CRLF."""
    locs = locations(root)
    rels = [locs["log"], "AGENT.md", ".agent/config.toml", f"{locs['memory']}/facts.jsonl",
            "journal/JOURNAL.md"]
    for top in (locs["identity"], "snapshots"):
        base = str(Path(root, top))
        if Path(base).is_dir() and not Path(base).is_symlink():
            for dirpath, _dirs, files in os.walk(base):
                rel_dir = Path(dirpath).relative_to(root).as_posix()
                rels += [f"{rel_dir}/{name}" for name in sorted(files)]
    found = [rel for rel in rels if _converted(str(Path(root, rel)))]
    return _git_converted(root, found) if found else []


def _git_converted(root: str | os.PathLike, rels: list[str]) -> list[str]:
    """Those of `rels` that git converted: committed with LF, CRLF in the work tree. A
    file committed with CRLF (or not committed) is the log's own content, for check 1."""
    proc = run(root, "ls-files", "--eol", "-z", "--", *rels, check=False)
    if proc.returncode != 0:
        return []
    converted = set()
    for entry in proc.stdout.split(b"\0"):
        info, _tab, name = entry.partition(b"\t")
        if info.split()[:2] == [b"i/lf", b"w/crlf"]:
            converted.add(name.decode("utf-8", "surrogateescape"))
    return [rel for rel in rels if rel in converted]  # ls-files names them relative to root


def lineendings_error(root: str | os.PathLike) -> str | None:
    """The one line (with its fix) when git converted GASP files of `root` to CRLF."""
    paths = crlf_paths(root)
    return lf_fix(paths) if paths else None


def updated_gitattributes(old: bytes | None, lines: list[str]) -> bytes | None:
    """`old` plus the missing `lines` (None when nothing is missing)."""
    text = (old or b"").decode("utf-8", "replace")
    have = {tuple(line.split()) for line in text.splitlines()}
    missing = [line for line in lines if tuple(line.split()) not in have]
    if not missing:
        return None
    add = ([ATTR_COMMENT] if ATTR_COMMENT not in text else []) + missing
    sep = b"" if not old or old.endswith(b"\n") else b"\n"
    return (old or b"") + sep + ("\n".join(add) + "\n").encode()


def register_driver(cwd: str | os.PathLike) -> list[tuple[str, str | None]]:
    """Set merge.gasp.{name,driver} in this clone's config; return the previous values."""
    before = []
    for key, value in (("merge.gasp.name", DRIVER_NAME), ("merge.gasp.driver", driver_command())):
        previous = _local_get(cwd, key)
        before.append((key, previous))
        if previous != value:
            config_set_local(cwd, key, value)
    return before


def restore_config(cwd: str | os.PathLike, before: list[tuple[str, str | None]]) -> None:
    """Put config keys back as `register_driver` found them (best effort)."""
    for key, value in before:
        if value is None:
            config_unset_local(cwd, key)
        else:
            run(cwd, "config", "--local", key, value, check=False)


def _local_get(cwd: str | os.PathLike, key: str) -> str | None:
    proc = run(cwd, "config", "--local", "--get", key, check=False)
    return proc.stdout.decode(errors="replace").rstrip("\n") if proc.returncode == 0 else None


def unregister_driver(cwd: str | os.PathLike) -> bool:
    """Remove merge.gasp.* from this clone's config; True if it was there."""
    proc = run(cwd, "config", "--local", "--remove-section", f"merge.{DRIVER}", check=False)
    return proc.returncode == 0


def uses_gasp_merge(root: str | os.PathLike) -> list[str]:
    """Append-only paths of the agent at `root` whose attributes say merge=gasp."""
    paths = [log_location(root), *SAMPLE_PATHS]
    try:
        attrs = check_attr(root, "merge", paths)
    except GaspError:
        return []
    return [p for p in paths if attrs.get(p) == DRIVER]


def missing_driver_note(root: str | os.PathLike) -> str | None:
    """A note when `.gitattributes` says merge=gasp but this clone lacks the driver.

    The driver's config is asked of git first (every clone with the hooks installed
    sets it); only when it is unset anywhere are the attributes read."""
    try:
        if config_get(root, f"merge.{DRIVER}.driver") is not None:
            return None
        using = uses_gasp_merge(root)
        if not using:
            return None
    except GaspError:
        return None
    return ("note: .gitattributes says merge=gasp for "
            f"{', '.join(using)}, but no merge.gasp.driver is defined, so git silently "
            "falls back to a text merge of the append-only files; fix: git gasp install "
            "(once per machine)")
