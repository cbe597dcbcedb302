"""The one line an observation of a tool call shows (`redact.capture.summary_line`)."""

from __future__ import annotations

from git_gasp.redact.capture import meaningful_line, size, summary_line


def test_the_line_says_tool_outcome_size_and_what_was_printed():
    text = "Exit code 1\n===== short test summary =====\nFAILED t.py::x - assert 0\n"
    assert meaningful_line(text) == "FAILED t.py::x - assert 0"  # not the heading
    assert meaningful_line("===== only a heading =====\n") == "only a heading"
    assert meaningful_line(".....   [100%]\n1 passed in 0.4s") == "1 passed in 0.4s"
    assert meaningful_line("\n....\n") == ""
    assert size(999) == "999 B" and size(3400) == "3.4 KB" and size(2_500_000) == "2.5 MB"
    assert summary_line("Bash", False, 1, text, 60) == (
        "Bash failed (exit 1), 60 B: FAILED t.py::x - assert 0")
    assert summary_line("Read", True, None, "", 0) == "Read ok, no output"
    assert summary_line("Bash", True, 0, "secret", 6, show_text=False) == "Bash ok, 6 B"
    assert len(summary_line("Bash", True, 0, "y" * 5000, 5000)) < 160
