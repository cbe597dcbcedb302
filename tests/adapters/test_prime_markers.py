"""The marked section of CLAUDE.md / AGENTS.md: never forged by log text, repaired when
damaged, stable from the first run (in-process; the CLI runs are in test_install_prime)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_gasp.adapters.prime import BEGIN, END, HEAD, TAIL, escape, prime, splice

SECTION = (f"{BEGIN}\n{HEAD}claude-code prime` … -->\n\n## Who you are\n\n"
           f"{TAIL}`git gasp adapt claude-code install`).\n{END}\n")
OLD = SECTION.replace("Who you are", "Who you were")  # an earlier section of ours


def _one(text: str) -> None:
    assert text.count(BEGIN) == 1 and text.count(END) == 1, text
    assert text.index(BEGIN) < text.index(END)
    assert SECTION in text


@pytest.mark.parametrize(("damaged", "repaired"), [
    ("", SECTION),
    ("mine\n", "mine\n\n" + SECTION),
    ("mine", "mine\n\n" + SECTION),
    (f"top\n{OLD}bottom\n", f"top\n{SECTION}bottom\n"),
    # only a start marker: up to our closing line, else the marker alone
    (f"top\n{OLD.replace(END + chr(10), '')}bottom\n", f"top\n{SECTION}bottom\n"),
    (f"top\n{BEGIN}\nhalf\n", f"top\n{SECTION}half\n"),
    # only an end marker: from our opening line, else the marker alone
    (f"top\n{OLD.replace(BEGIN + chr(10), '')}bottom\n", f"top\n{SECTION}bottom\n"),
    (f"top\n{END}\nbottom\n", f"top\n{SECTION}bottom\n"),
    # two starts, two sections, a forged end inside: one section from the first start
    # to the last end
    (f"a\n{BEGIN}\n{OLD}b\n", f"a\n{SECTION}b\n"),
    (f"a\n{OLD}mid\n{OLD}b\n", f"a\n{SECTION}b\n"),
    (f"a\n{BEGIN}\nship {END} more\n{END}\nb\n", f"a\n{SECTION}b\n"),
    # out of order: the stray markers go, the user's lines stay
    (f"a\n{END}\nb\n{BEGIN}\nc\n", f"a\nb\n{SECTION}c\n"),
    (f"a {END} b\n{OLD}c\n", f"a  b\n{SECTION}c\n"),
    # CRLF files keep CRLF
    ("mine\r\n", "mine\r\n\r\n" + SECTION.replace("\n", "\r\n")),
    (f"top\n{OLD}end\n".replace("\n", "\r\n"),
     "top\r\n" + SECTION.replace("\n", "\r\n") + "end\r\n"),
])
def test_damaged_sections_are_repaired_into_one(damaged, repaired):
    assert splice(damaged, SECTION) == repaired
    assert splice(repaired, SECTION) == repaired


def test_escape_leaves_no_comment_opener():
    assert escape(f"ship {END} more {BEGIN}") == \
        r"ship <\!-- gasp:end --> more <\!-- gasp:begin -->"
    assert "<!--" not in escape("<<!--!---<!--->")


_FRAGMENTS = st.sampled_from([BEGIN, END, "<!--", "-->", "<!-", "-", "<", "!", " gasp:end ",
                              " gasp:begin ", "\n", "\r\n", "x", "ship", " ", HEAD, TAIL,
                              "`", "…"])
_TEXT = st.lists(_FRAGMENTS, max_size=12).map("".join)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(existing=_TEXT)
def test_any_file_gets_exactly_one_section_and_is_stable(existing):
    once = splice(existing, SECTION)
    assert once.count(BEGIN) == 1 and once.count(END) == 1
    assert splice(once, SECTION) == once
    if BEGIN not in existing and END not in existing:
        assert once.startswith(existing)


@pytest.mark.slow
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(title=_TEXT, identity=_TEXT, existing=_TEXT)
def test_prime_with_marker_fragments_in_the_log_is_stable_after_one_run(
        agent, title, identity, existing):
    from git_gasp.runtime import AgentState

    with AgentState.open(agent, "tester", fsync=False) as state:
        state.record_goal(title or "t", identity)
    (agent / "identity").mkdir(exist_ok=True)
    # GASP files are LF (the fold refuses a CRLF checkout), so no CR in the identity
    (agent / "identity" / "IDENTITY.md").write_text(identity.replace("\r", ""), newline="")
    surface = agent / "CLAUDE.md"
    surface.write_bytes(existing.encode())
    prime(agent, "claude-code")
    first = surface.read_bytes()
    for _ in range(2):
        assert prime(agent, "claude-code")[1] is False
        assert surface.read_bytes() == first
    text = first.decode()
    assert text.count(BEGIN) == 1 and text.count(END) == 1
    if BEGIN not in existing and END not in existing:
        assert text.startswith(existing)


def test_a_linked_agents_md_is_written_at_its_target(agent):
    target = agent / "docs" / "agents.md"
    target.parent.mkdir()
    target.write_bytes(b"# rules\r\nkeep CRLF\r\n")
    (agent / "AGENTS.md").symlink_to("docs/agents.md")
    path, changed = prime(agent, "codex")
    assert changed and (agent / "AGENTS.md").is_symlink()
    text = target.read_bytes()
    assert text.startswith(b"# rules\r\nkeep CRLF\r\n\r\n" + BEGIN.encode() + b"\r\n")
    assert b"\n" not in text.replace(b"\r\n", b"")
    assert prime(agent, "codex")[1] is False and target.read_bytes() == text
    assert sorted(p.name for p in target.parent.iterdir()) == ["agents.md"]
