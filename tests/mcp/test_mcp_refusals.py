"""`git gasp mcp` itself refuses in one line without the SDK or outside an agent
repository."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.testing.run import gasp, git

pytestmark = pytest.mark.slow  # a server per test


def test_mcp_without_the_sdk_says_how_to_install_it(agent, tmp_path):
    fake = tmp_path / "no-sdk" / "mcp"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'mcp'\", name='mcp')\n")
    env = dict(os.environ, PYTHONPATH=str(fake.parent))
    proc = subprocess.run(["git", "gasp", "mcp"], cwd=agent, capture_output=True, env=env,
                          stdin=subprocess.DEVNULL, timeout=60)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and err.count("\n") == 1, err
    assert "pip install 'git-gasp[mcp]'" in err and "Traceback" not in err


@pytest.mark.parametrize("where", ["plain", "git"])
def test_mcp_outside_an_agent_repository(tmp_path, where):
    place = tmp_path / "place"
    place.mkdir()
    if where == "git":
        git(place, "init", "-q")
    proc = gasp(place, "mcp")
    err = proc.stderr.decode()
    assert proc.returncode == 2 and err.count("\n") == 1, err
    assert err.startswith("git gasp: error: not an agent repository: ")
