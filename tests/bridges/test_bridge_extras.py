"""Both framework bridges: an optional extra CI installs (through `test`), and without it
the import fails in one line naming it, while importing git_gasp loads no framework."""

from __future__ import annotations

import subprocess
import sys

import pytest
import tomllib

from tests.testing.paths import REPO_ROOT

BRIDGES = [  # (module, the framework's top package, extra, requirement)
    ("langchain", "langchain_core", "langchain", "langchain-core>=0.3"),
    ("openai_agents", "agents", "openai-agents", "openai-agents>=0.2"),
]


@pytest.mark.parametrize("module, package, extra, requirement", BRIDGES)
def test_the_extra_is_declared_and_in_the_test_extra(module, package, extra, requirement):
    extras = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert extras[extra] == [requirement]
    assert requirement in extras["test"]


@pytest.mark.parametrize("module, package, extra, requirement", BRIDGES)
def test_without_the_extra_the_import_fails_in_one_line(module, package, extra, requirement):
    code = (f"import sys; sys.modules[{package!r}] = None\n"
            f"try:\n    import git_gasp.bridges.{module}\n"
            "except ImportError as e:\n    print(e)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    assert f"pip install 'git-gasp[{extra}]'" in line
    probe = subprocess.run([sys.executable, "-c", "import sys, git_gasp, git_gasp.bridges; "
                            f"print({package!r} in sys.modules)"],
                           capture_output=True, text=True, cwd=REPO_ROOT)
    assert probe.stdout.strip() == "False", probe.stderr  # git_gasp loads no framework
