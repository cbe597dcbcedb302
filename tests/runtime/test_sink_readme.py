"""The README's sink example runs as written, in a fresh agent repo, and records a
conformant run."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from git_gasp.protocol.envelope import parse_log
from git_gasp.protocol.fold import fold
from tests.runtime.helpers import assert_conformant
from tests.testing.readme import marked_blocks
from tests.testing.run import gasp, git, out

README = Path(__file__).resolve().parents[2] / "README.md"


def sink_example() -> str:
    text = README.read_text()
    section = text.split("\n## Agents you build\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    assert blocks, "the README's `Agents you build` section has a Python example"
    return blocks[0]


def test_the_sink_example_is_short():
    code = [ln for ln in sink_example().splitlines() if ln.strip()]
    assert len(code) <= 10, len(code)


@pytest.mark.slow  # over half a second: out of the fast loop
def test_the_readme_sink_example_runs(agent, tmp_path):
    """As pasted, beside `my-agent` (`git gasp init my-agent`), then the commit its
    comment names: `git gasp commit-run`."""
    (block,) = marked_blocks()
    assert block.text == sink_example()
    work = tmp_path / "work"
    work.mkdir()
    repo = work / "my-agent"
    shutil.move(agent, repo)
    script = work / "example.py"
    script.write_text(block.text)
    proc = subprocess.run([sys.executable, str(script)], cwd=work,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "0"
    assert not (repo / ".agent" / "lease").exists()
    graph = fold(parse_log((repo / "state/events.jsonl").read_bytes()).events).graph
    kinds = sorted(n["kind"] for n in graph.nodes.values())
    assert kinds == ["eval", "goal", "model_call", "patch", "run", "tool_call"], kinds
    tool = next(n for n in graph.nodes.values() if n["kind"] == "tool_call")["props"]
    assert tool["status"] == "failed" and tool["error"] == "exit status 1"
    run = next(n for n in graph.nodes.values() if n["kind"] == "run")["props"]
    assert run["outcome"] == "succeeded"
    assert "now commit the run: git gasp commit-run" in block.text
    assert git(repo, "status", "--porcelain", "state/") != ""  # the events are not committed
    proc = gasp(repo, "commit-run")
    assert proc.returncode == 0, out(proc)
    assert "Run-Id: run_" in git(repo, "log", "-1", "--format=%B")
    assert git(repo, "status", "--porcelain", "state/") == ""
    assert_conformant(repo)
