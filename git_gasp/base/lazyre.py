"""Regular expressions compiled cheaply: `LazyPattern` (a module-level pattern compiled
on first use) and `compile` (``re.compile`` through a per-user cache of re's output).

Compiling a pattern runs ``re``'s Python compiler (about half a million instructions for
a typical one, twenty times that for the redactor's vendor-key pattern), and a module
compiling its patterns when it loads makes every command that imports it pay for all
of them, used or not; importing ``re`` itself costs more. A `LazyPattern` imports
``re`` and compiles when one of its methods is first asked for, then keeps the compiled
pattern's methods on itself, so later calls cost what a compiled pattern's do.

The agent hook runs in a new process on every tool call and would compile the same
forty patterns each time (a quarter of its instructions), so `compile` keeps what
re's compiler produced (the final flags, the matcher's code and the group tables) in
``$XDG_CACHE_HOME/git-gasp/re-<python>-<sre magic>.bin`` and rebuilds the pattern from
it with ``_sre.compile``, which is what ``re.compile`` ends with. An entry is stored
only once the pattern rebuilt from it compares equal to ``re.compile``'s (same code,
flags and groups), the file carries a CRC of its contents, the name carries the
interpreter's bytecode tag and the matcher's version, and anything unexpected (no
home, an unreadable or foreign file, another Python implementation) falls back to
``re.compile``. Like ``__pycache__``, the cache is trusted as the user's own files are.
`save` writes new entries, at exit or when a fast path calls it before ``os._exit``.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any

_KEPT = ("match", "fullmatch", "search", "findall", "finditer", "sub", "subn", "split",
         "pattern", "flags", "groups", "groupindex")
_MAGIC = b"gasp-re 1\n"
_MAX_ENTRIES = 1024  # a file past this starts again (patterns built from input, say)

_table: dict | None = None  # (pattern, flags) -> (flags, code, groups, groupindex, indexgroup)
_new: dict = {}


def cache_path() -> str | None:
    """The cache file for this interpreter, or None where there is none to keep."""
    if sys.implementation.name != "cpython" or os.environ.get("GASP_RE_CACHE") == "0":
        return None
    import _sre

    base = os.environ.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):
        home = os.environ.get("HOME") or ""
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    version = ".".join(map(str, sys.version_info[:3]))  # a patch release may change re
    return os.path.join(base, "git-gasp", f"re-{sys.implementation.cache_tag}-{version}-"
                                          f"{_sre.MAGIC}-{_sre.CODESIZE}.bin")


def _load() -> dict:
    global _table
    if _table is None:
        _table = {}
        path = cache_path()
        if path is not None:
            from git_gasp.base.files import SMALL_FILE, read_regular_file

            try:  # a link, a FIFO or a huge file there is no cache (never a hang)
                data = read_regular_file(path, limit=SMALL_FILE) or b""
                if data.startswith(_MAGIC):
                    import marshal
                    import zlib

                    body = data[len(_MAGIC) + 4:]
                    crc = int.from_bytes(data[len(_MAGIC):len(_MAGIC) + 4], "big")
                    if zlib.crc32(body) == crc:
                        loaded = marshal.loads(body)
                        if isinstance(loaded, dict):
                            _table = loaded
            except (OSError, ValueError, EOFError, TypeError):
                pass
    return _table


def _parts(pattern: str | bytes, flags: int) -> tuple:
    """What ``re.compile`` passes to ``_sre.compile`` after the pattern (re's own steps)."""
    try:
        from re import _compiler, _parser
    except ImportError:  # Python 3.10
        import sre_compile as _compiler  # type: ignore[no-redef]
        import sre_parse as _parser  # type: ignore[no-redef]
    parsed = _parser.parse(pattern, flags)
    code = [int(c) for c in _compiler._code(parsed, flags)]  # opcodes are int subclasses
    groupindex = dict(parsed.state.groupdict)
    indexgroup = [None] * parsed.state.groups
    for name, i in groupindex.items():
        indexgroup[i] = name
    return (int(flags | parsed.state.flags), code, parsed.state.groups - 1, groupindex,
            tuple(indexgroup))


def compile(pattern: str | bytes, flags: int = 0) -> re.Pattern:  # noqa: A001 - re's name
    """``re.compile(pattern, flags)``, rebuilt from the cache when it holds the pattern."""
    import re

    flags = int(flags)
    key = (pattern, flags)
    parts = _load().get(key)
    if parts is not None:
        import _sre

        try:
            return _sre.compile(pattern, *parts)
        except Exception:  # noqa: BLE001 - a foreign entry: compile it as re does
            pass
    compiled = re.compile(pattern, flags)
    if cache_path() is not None and not flags & re.DEBUG:
        import _sre

        try:
            parts = _parts(pattern, flags)
            rebuilt = _sre.compile(pattern, *parts)
        except Exception:  # noqa: BLE001 - re's internals differ here: do not cache
            return compiled
        if (rebuilt == compiled and rebuilt.groups == compiled.groups
                and rebuilt.groupindex == compiled.groupindex):
            if not _new:
                import atexit

                atexit.register(save)
            _new[key] = parts
    return compiled


def save() -> None:
    """Write the patterns compiled since the cache was read (never raises)."""
    global _new
    if not _new:
        return
    path = cache_path()
    table = dict(_load()) if len(_load()) + len(_new) <= _MAX_ENTRIES else {}
    table.update(_new)
    _new = {}
    if path is None:
        return
    import marshal
    import zlib

    from git_gasp.base.files import UnsafePath, atomic_write

    try:  # through the one write path: a tmp file renamed over it, no fsync (a cache)
        body = marshal.dumps(table)
        atomic_write(path, _MAGIC + zlib.crc32(body).to_bytes(4, "big") + body,
                     durable=False, make_parents=True, mode=0o600)
    except (OSError, ValueError, UnsafePath):  # a full disk, a read-only home; unmarshallable
        pass


class LazyPattern:
    """``re.compile(pattern, flags)``, done (through `compile`) when first used."""

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:  # only for what is not yet on the instance
        if name.startswith("__"):
            raise AttributeError(name)
        compiled = compile(*self._source)
        for kept in _KEPT:
            setattr(self, kept, getattr(compiled, kept))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self._source[0]!r}, {self._source[1]!r})"
