"""`.agent/config.toml` read once into typed, validated sections (`base/agentconfig`):
defaults when missing, one FormatError line naming the key and why for a bad value."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from git_gasp.base.agentconfig import (
    AgentConfig,
    Capture,
    Executor,
    Mcp,
    Promotion,
    Verdict,
    parse_config,
    read_config,
)
from git_gasp.base.errors import FormatError


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".agent").mkdir()
    return tmp_path


def test_a_missing_config_reads_as_the_defaults(repo):
    assert read_config(repo) == AgentConfig()


def test_every_section_is_read_typed(repo):
    (repo / ".agent" / "config.toml").write_text(
        '[executor]\nmodel = "m"\nprovider = "p"\n'
        '[capture]\ntool_output = "full"\nfield_limit = 8192\n'
        '[mcp]\nwrite = true\nwait = 0\n'
        '[policy.nodes]\nframe = "Require-Approval"\n[policy.relations]\nsupersedes = "deny"\n'
        '[policy.promotion]\nmin_evals = 2\nmin_score = 1\n[other]\nkept = 1\n')
    config = read_config(repo)
    assert config.executor == Executor("m", "p")
    assert config.capture == Capture(tool_output="full", field_limit=8192)
    assert config.mcp == Mcp(write=True, commit=False, wait=0.0)
    assert config.policy.nodes == {"frame": Verdict.REQUIRE_APPROVAL}
    assert config.policy.relations == {"supersedes": Verdict.DENY}
    assert config.policy.promotion == Promotion(min_evals=2, min_score=1.0)
    assert config.data["other"] == {"kept": 1}


@pytest.mark.parametrize(("text", "said"), [
    ("mcp = 1", r"^\.agent/config\.toml: \[mcp\] must be a table$"),
    ("[mcp]\nwrite = 'yes'", "mcp.write = 'yes' is not true or false"),
    ("[mcp]\nwrites = true", r"\[mcp\] has unknown key 'writes' \(known: write, commit, wait\)"),
    ("[mcp]\nwait = -1", r"mcp.wait = -1 is not a number of seconds"),
    ("[mcp]\nwait = nan", r"mcp.wait = nan"),
    ("[capture]\nfield_limit = 10", "capture.field_limit = 10 is not an integer from 64"),
    ("[capture]\nfile_inputs = 'all'", "capture.file_inputs = 'all' is not one of digest, full"),
    ("[capture]\ntranscripts = 1", "capture.transcripts = 1 is not true or false"),
    ("[capture]\nsize = 1", r"\[capture\] has unknown key 'size'"),
    ("[executor]\nmodel = 3", "executor.model = 3 is not a string"),
    ("executor = []", r"\[executor\] must be a table"),
    ("[policy]\nnodes = 1", r"\[policy.nodes\] must be a table"),
    ("[policy.nodes]\nframe = 'maybe'", "policy.nodes.frame = 'maybe' is not allow, require"),
    ("[policy.promotion]\nmin_evals = 1.5", "policy.promotion.min_evals = 1.5 is not an integer"),
    ("[policy.promotion]\nmin_score = inf", "policy.promotion.min_score = inf is not a finite"),
    ("[policy.promotion]\nrequire_approval = 'no'", "require_approval = 'no' is not true or"),
    ("[executor\n", r"^\.agent/config\.toml does not parse: "),
    ("a = " + "[" * 100_000, r"does not parse: nested too deeply$"),
    ("a = 1" + "0" * 5000, r"does not parse: a number has too many digits$"),
])
def test_a_bad_config_is_one_line_naming_the_key(repo, text, said):
    (repo / ".agent" / "config.toml").write_text(text + "\n")
    with pytest.raises(FormatError, match=said) as caught:
        read_config(repo)
    assert "\n" not in str(caught.value)


def test_a_config_that_is_a_link_or_not_utf8_is_refused(repo):
    with pytest.raises(FormatError, match="does not parse: 'utf-8' codec"):
        parse_config(b"a = '\xff'\n")
    (repo / "elsewhere.toml").write_text("[executor]\n")
    (repo / ".agent" / "config.toml").symlink_to(repo / "elsewhere.toml")
    with pytest.raises(FormatError, match=r"^\.agent/config\.toml cannot be read"):
        read_config(repo)
