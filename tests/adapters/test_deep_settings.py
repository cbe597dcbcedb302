"""Committed agent settings nested 100,000 deep (`.claude/settings.json`, `.mcp.json`,
`.codex/config.toml`, a hook manager's config): `doctor` and `adapt … install [--mcp]`
refuse with one line (exit 1 or 2) and write nothing; they were a RecursionError
(exit 3). The bound lives in one loader, `base.bounded`."""

from __future__ import annotations

import pytest

from git_gasp.base import bounded
from git_gasp.base.errors import FormatError
from tests.testing.run import commit_all, gasp, git, out

DEEP = 100_000
FILES = {
    ".claude/settings.json": '{"a":' * DEEP + "1" + "}" * DEEP,
    ".mcp.json": "[" * DEEP + "]" * DEEP,
    ".codex/config.toml": "a = " + "[" * DEEP + "]" * DEEP + "\n",
    "lefthook.yml": "x: " + "[" * DEEP + "]" * DEEP + "\n",
}
COMMANDS = [("doctor",), ("adapt", "claude-code", "install"),
            ("adapt", "claude-code", "install", "--mcp"), ("adapt", "codex", "install", "--mcp")]


@pytest.fixture
def deep(agent):
    for rel, text in FILES.items():
        (agent / rel).parent.mkdir(parents=True, exist_ok=True)
        (agent / rel).write_text(text)
    commit_all(agent, "deep settings")
    return agent


@pytest.mark.slow  # over half a second: out of the fast loop
@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_deep_settings_are_refused_in_one_line_and_nothing_is_written(deep, args):
    proc = gasp(deep, *args)
    err = proc.stderr.decode()
    assert proc.returncode in (1, 2), out(proc)
    assert "internal error" not in err and "Traceback" not in err, err
    if args[0] == "adapt":
        assert err.startswith("git gasp: error:") and err.count("\n") == 1, err
        assert "nested too deeply" in err or "nests deeper" in err, err
    assert git(deep, "status", "--porcelain", "--untracked-files=all") == ""


@pytest.mark.parametrize("load", [bounded.load_json, bounded.load_toml])
def test_the_loader_bounds_depth_after_parsing_too(load):
    """Nesting the parser manages (under the stack) but past MAX_DEPTH is refused as
    well: the code that walks, compares and writes back the value recurses."""
    n = bounded.MAX_DEPTH + 1
    text = ("a = " if load is bounded.load_toml else "") + "[" * n + "]" * n
    with pytest.raises(FormatError, match="nests deeper than 100 levels"):
        load(text, "x")
    assert load(("a = " if load is bounded.load_toml else "") + "[" * 99 + "]" * 99, "x")
    dotted = "a" + ".a" * 200 + " = 1\n"  # tables by dotted keys: no bracket at all
    with pytest.raises(FormatError, match="nests deeper"):
        bounded.load_toml(dotted, "x")
    with pytest.raises(FormatError, match="larger than"):
        load("[]" + " " * bounded.MAX_BYTES, "x")
