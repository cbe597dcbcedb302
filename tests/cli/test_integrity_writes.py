"""Issue 10: the CLI never writes a line it then refuses to read.

Every input below used to be appended (or crash with exit 3), after which every append
and check 1 failed. Now each is a usage error (exit 2) naming the option and the field,
the log is untouched, the repo stays conformant and the next valid record works."""

from __future__ import annotations

import pytest

from tests.testing.run import gasp, out

pytestmark = pytest.mark.slow

DEEP = '{"x":' * 123 + "1" + "}" * 123  # 123 levels: the ops line would hold 128
FITS = '{"x":' * 122 + "1" + "}" * 122
LONE = "\udced\udca0\udc80"  # the argv bytes ED A0 80: a UTF-8-encoded lone surrogate

CASES = {
    "metadata-too-deep": (["goal", "--title", "t", "--metadata", DEEP],
                          "--metadata: payload[0].CreateNode.props.metadata.x",
                          "nested too deeply"),
    "metadata-big-int": (["goal", "--title", "t", "--metadata", f'{{"x":{10**30}}}'],
                         "--metadata: payload.metadata.x: integer", "does not fit in 64 bits"),
    "metadata-1e400": (["goal", "--title", "t", "--metadata", '{"x":1e400}'],
                       "--metadata: payload.metadata.x:", "not a JSON number"),
    "metadata-nan": (["goal", "--title", "t", "--metadata", '{"x":NaN}'],
                     "--metadata: payload.metadata.x:", "not a JSON number"),
    "metadata-lone-surrogate": (["goal", "--title", "t", "--metadata", '{"x":"\\ud800"}'],
                                "--metadata: payload.metadata.x:", "lone UTF-16 surrogate"),
    "metadata-duplicate-key": (["goal", "--title", "t", "--metadata", '{"x":1,"x":2}'],
                               "--metadata:", "duplicate key 'x'"),
    "score-nan": (["eval", "--command", "c", "--status", "Passed", "--score", "nan"],
                  "--score:", "finite number"),
    "score-inf": (["eval", "--command", "c", "--status", "Passed", "--score", "inf"],
                  "--score:", "finite number"),
    "json-title-not-text": (["goal", "--json", '{"title":1}'], "--json: title:", "a string"),
    "json-metadata-not-object": (["goal", "--json", '{"title":"t","metadata":[1]}'],
                                 "--json: metadata:", "a JSON object"),
    "json-summary-object": (["goal", "--json", '{"title":"t","summary":{}}'],
                            "--json: summary:", "a string"),
    "json-lone-surrogate": (["goal", "--json", '{"title":"\\ud800"}'],
                            "--json: payload.title:", "lone UTF-16 surrogate"),
    "json-1e400-in-metadata": (["goal", "--json", '{"title":"t","metadata":{"a":1e400}}'],
                               "--json: payload.metadata.a:", "not a JSON number"),
    "decision-metadata-list": (["decision", "--status", "Rejected", "--reason", "r",
                                "--json", '{"metadata":[1]}'], "--json: metadata:", "JSON object"),
    "title-lone-surrogate-argv": (["goal", "--title", LONE], "--title: payload.title:",
                                  "lone UTF-16 surrogate"),
    "tool-output-lone-surrogate": (["tool-call", "--tool", "x", "--output", LONE],
                                   "--output: payload.output_summary:", "lone UTF-16 surrogate"),
}


def usage_error_line(proc) -> str:
    err = proc.stderr.decode(errors="replace")
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert proc.returncode == 2, out(proc)
    assert len(lines) == 1 and lines[0].startswith("git gasp: error: "), err
    assert "Traceback" not in err and "internal error" not in err
    return lines[0]


@pytest.fixture
def running(agent):
    """The agent with an open run (so eval / tool-call have their cause)."""
    proc = gasp(agent, "run", "start", "--task", "integrity")
    assert proc.returncode == 0, out(proc)
    return agent


@pytest.mark.parametrize("name", sorted(CASES))
def test_unwritable_input_is_a_usage_error_and_writes_nothing(running, name):
    args, where, why = CASES[name]
    log = running / "state/events.jsonl"
    before = log.read_bytes()
    line = usage_error_line(gasp(running, "record", *args))
    assert line.startswith(f"git gasp: error: {where}") and why in line, line
    assert len(line) < 400, line  # a deep path is shortened, still one readable line
    assert log.read_bytes() == before
    check = gasp(running, "check")
    assert check.returncode == 0, out(check)
    proc = gasp(running, "record", "goal", "--title", "after")
    assert proc.returncode == 0, out(proc)
    assert gasp(running, "check").returncode == 0


def test_run_options_are_checked_too(running):
    log = running / "state/events.jsonl"
    before = log.read_bytes()
    line = usage_error_line(gasp(running, "run", "finish", "--outcome", "o",
                                 "--metadata", '{"x":1e400}'))
    assert "--metadata: payload.metadata.x:" in line
    line = usage_error_line(gasp(running, "run", "finish", "--outcome", LONE))
    assert "--outcome: payload.outcome:" in line
    assert log.read_bytes() == before
    assert gasp(running, "run", "finish", "--outcome", "done").returncode == 0
    assert gasp(running, "check").returncode == 0


def test_the_deepest_metadata_that_fits_is_written(agent):
    proc = gasp(agent, "record", "goal", "--title", "t", "--metadata", FITS)
    assert proc.returncode == 0, out(proc)
    assert gasp(agent, "check").returncode == 0, out(gasp(agent, "check"))
