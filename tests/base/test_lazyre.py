"""`LazyPattern` compiles on first use and then behaves as the compiled pattern."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import git_gasp
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
