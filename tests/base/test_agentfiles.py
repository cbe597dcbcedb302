"""The one reader of the agents' settings files (`base/agentfiles.read_settings`):
JSON or TOML by name, bounded in size and depth, every refusal one FormatError line;
and the commands that read those files (install, doctor) say that line."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_gasp.base.agentfiles import read_settings
from git_gasp.base.errors import FormatError
from git_gasp.base.files import SMALL_FILE
from tests.testing.run import gasp, out

DEEP_JSON = '{"hooks": ' + "[" * 100_000 + "]" * 100_000 + "}"
DEEP_TOML = "a = " + "[" * 100_000 + "]" * 100_000


def test_json_and_toml_are_read_by_name(tmp_path: Path):
    (tmp_path / "s.json").write_text('{"hooks": {"Stop": []}, "x": "\\u00e9"}')
    (tmp_path / "c.toml").write_text('[mcp_servers.docs]\ncommand = "npx"\n')
    assert read_settings(tmp_path / "s.json")[1] == {"hooks": {"Stop": []}, "x": "é"}
    assert read_settings(tmp_path / "c.toml")[1] == {"mcp_servers": {"docs": {"command": "npx"}}}
    assert read_settings(tmp_path / "missing.json") == ("", {})
    (tmp_path / "blank.json").write_text("\n")
    assert read_settings(tmp_path / "blank.json") == ("\n", {})


@pytest.mark.parametrize(("name", "data", "said"), [
    ("deep.json", DEEP_JSON.encode(), r"is not valid JSON \(nested too deeply\)$"),
    ("deep.toml", DEEP_TOML.encode(), r"is not valid TOML \(nested too deeply\)$"),
    ("list.json", b"[1, 2]", "is not a JSON object$"),
    ("bad.json", b"{broken", r"is not valid JSON \(Expecting"),
    ("bad.toml", b"[x\n", r"is not valid TOML \("),
    ("latin.json", b'{"a": "\xe9"}', "is not UTF-8 text$"),
    ("quoted.json", b'{"a": "' + b"[" * 200 + b'"}', None),
    ("huge.json", b" " * (SMALL_FILE + 1), "cannot read"),
])
def test_a_bad_settings_file_is_one_line(tmp_path: Path, name, data, said):
    (tmp_path / name).write_bytes(data)
    if said is None:  # brackets inside a string are not nesting
        assert read_settings(tmp_path / name)[1] == {"a": "[" * 200}
        return
    with pytest.raises(FormatError, match=said) as caught:
        read_settings(tmp_path / name)
    assert "\n" not in str(caught.value) and str(tmp_path / name) in str(caught.value)


@pytest.mark.slow  # over half a second: out of the fast loop
def test_install_and_doctor_say_one_line_for_a_settings_file_nested_100000_deep(agent):
    settings = agent / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(DEEP_JSON)
    (agent / ".mcp.json").write_text(DEEP_JSON)
    for args in (["adapt", "claude-code", "install"], ["adapt", "claude-code", "install",
                                                       "--mcp"]):
        proc = gasp(agent, *args)
        assert proc.returncode == 1, out(proc)
        assert "Traceback" not in out(proc) and "nested too deeply" in out(proc)
        assert out(proc).strip().count("\n") == 0, out(proc)
    assert settings.read_text() == DEEP_JSON
    proc = gasp(agent, "doctor")
    assert "Traceback" not in out(proc) and "nested too deeply" in out(proc), out(proc)
