"""`LazyPattern` compiles on first use and then behaves as the compiled pattern."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import git_gasp
from git_gasp.base import lazyre
from git_gasp.base.lazyre import LazyPattern


def test_it_matches_as_the_compiled_pattern_does():
    lazy, compiled = LazyPattern(rb"(?im)^\s*(bare\s*=\s*(true|1))\b"), re.compile(
        rb"^\s*(bare\s*=\s*(true|1))\b", re.I | re.M)
    for text in (b"[core]\n\tBare = TRUE\n", b"bare=0", b"x\n bare = 1;", b""):
        for method in ("search", "match", "fullmatch", "findall"):
            got, want = getattr(lazy, method)(text), getattr(compiled, method)(text)
            assert (got.groups() if isinstance(got, re.Match) else got) == \
                (want.groups() if isinstance(want, re.Match) else want)
    assert lazy.pattern == rb"(?im)^\s*(bare\s*=\s*(true|1))\b"
    assert lazy.sub(b"-", b"bare=1") == b"-" and "LazyPattern" in repr(lazy)


def test_nothing_is_compiled_or_imported_until_used():
    code = ("import sys\nfrom git_gasp.base.lazyre import LazyPattern\n"
            "p = LazyPattern(r'a+')\nassert 're' not in sys.modules, 're loaded early'\n"
            "assert p.fullmatch('aaa')\nassert 're' in sys.modules\n")
    # -S: no site (an editable install's finder imports re at start-up)
    env = dict(os.environ, PYTHONPATH=str(Path(git_gasp.__file__).parents[1]))
    subprocess.run([sys.executable, "-S", "-c", code], check=True, env=env)


def test_a_bad_pattern_fails_when_first_used():
    lazy = LazyPattern(r"(unclosed")
    try:
        lazy.match("x")
    except re.error:
        return
    raise AssertionError("a bad pattern compiled")


# --- the cache of compiled patterns ----------------------------------------------------

def _package_patterns() -> list[tuple[str | bytes, int]]:
    """The (pattern, flags) of every module-level `LazyPattern` of the package."""
    import importlib
    import pkgutil

    found = []
    for info in pkgutil.walk_packages(git_gasp.__path__, "git_gasp."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional extra (a framework bridge) not installed
            continue
        found += [v._source for v in vars(module).values() if isinstance(v, LazyPattern)]
    return found


def _fresh(monkeypatch, cache: Path) -> None:
    """A process that has read no cache yet, keeping it under `cache`."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.delenv("GASP_RE_CACHE", raising=False)
    monkeypatch.setattr(lazyre, "_table", None)
    monkeypatch.setattr(lazyre, "_new", {})


def _same(a: re.Pattern, b: re.Pattern) -> bool:
    return (a == b and a.flags == b.flags and a.groups == b.groups
            and a.groupindex == b.groupindex and a.pattern == b.pattern)


def test_every_pattern_of_the_package_is_rebuilt_from_the_cache_exactly(tmp_path, monkeypatch):
    """Compiled once, saved, then read back by a new process: every LazyPattern of the
    package comes back equal to re.compile's (same code, flags, groups, names), and
    without re's compiler running at all."""
    patterns = _package_patterns()
    assert len(patterns) > 40, "the package's patterns were not found"
    _fresh(monkeypatch, tmp_path)
    first = [lazyre.compile(p, f) for p, f in patterns]
    lazyre.save()
    path = lazyre.cache_path()
    assert path is not None and Path(path).is_file() and path.startswith(str(tmp_path))
    _fresh(monkeypatch, tmp_path)

    def no_compiler(*args, **kwargs):
        raise AssertionError(f"re compiled {args[0]!r} again")

    monkeypatch.setattr(re, "compile", no_compiler)
    again = [lazyre.compile(p, f) for p, f in patterns]
    monkeypatch.undo()
    for (p, f), a, b in zip(patterns, first, again, strict=True):
        assert _same(a, re.compile(p, f)) and _same(b, re.compile(p, f)), p
    probe = lazyre.compile(r"(?P<key>[a-z]+)=(?P<value>\d+)")
    assert probe.fullmatch("abc=12").groupdict() == {"key": "abc", "value": "12"}


def test_a_damaged_or_foreign_cache_is_ignored_and_patterns_compile_as_re_does(
        tmp_path, monkeypatch):
    source, flags = r"(?i)\bbearer\s+(?P<s>[a-z0-9]{8,})", 0
    want = re.compile(source, flags)
    _fresh(monkeypatch, tmp_path)
    path = Path(lazyre.cache_path())
    path.parent.mkdir(parents=True)
    import marshal
    import zlib

    good = lazyre._parts(source, flags)
    wrong_code = (good[0], [999999] * 8, good[2], good[3], good[4])  # _sre refuses it
    other = lazyre._parts(r"x+", 0)  # a valid entry for another pattern: CRC torn below
    for blob in (b"not a cache", b"",
                 lazyre._MAGIC + b"\0\0\0\0" + marshal.dumps({(source, flags): other}),
                 lazyre._MAGIC + zlib.crc32(b"[]").to_bytes(4, "big") + b"[]",
                 (lambda body: lazyre._MAGIC + zlib.crc32(body).to_bytes(4, "big") + body)(
                     marshal.dumps({(source, flags): wrong_code}))):
        path.write_bytes(blob)
        _fresh(monkeypatch, tmp_path)
        got = lazyre.compile(source, flags)
        assert _same(got, want), blob[:20]
        assert got.search("Authorization: Bearer abcdef123456").group("s") == "abcdef123456"


def test_no_cache_is_kept_without_a_home_or_when_turned_off(tmp_path, monkeypatch):
    for env in ({"GASP_RE_CACHE": "0", "XDG_CACHE_HOME": str(tmp_path)},
                {"HOME": "relative", "XDG_CACHE_HOME": "also-relative"}, {}):
        _fresh(monkeypatch, tmp_path)
        monkeypatch.delenv("XDG_CACHE_HOME")
        monkeypatch.delenv("HOME", raising=False)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        assert lazyre.cache_path() is None
        assert lazyre.compile(r"a(b)c").fullmatch("abc").group(1) == "b"
        lazyre.save()
    assert not list(tmp_path.rglob("*.bin"))


def test_an_unwritable_cache_directory_costs_only_the_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache directory would go\n")
    _fresh(monkeypatch, blocker)
    assert lazyre.compile(r"q+").fullmatch("qq")
    lazyre.save()  # never raises
    assert blocker.read_text().startswith("a file")
