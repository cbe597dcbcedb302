"""Every parser of a committed file refuses hostile bytes with its own one-line error
(a `GaspError`, which the CLI prints as one line with exit 1 or 2), never anything else
(which the CLI would report as an internal error, exit 3).

The inputs are the files' own shapes with hostile atoms in their holes: integers past
Python's digit limit, non-finite and huge numbers, nesting past any stack, YAML tags,
anchors and aliases, invalid UTF-8, control characters, type confusion.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_gasp.base.errors import GaspError
from git_gasp.base.toml import load_toml
from git_gasp.kg.frontmatter import load_yaml, parse_document
from git_gasp.protocol.envelope import parse_log
from git_gasp.protocol.fold import fold
from git_gasp.protocol.jsonstrict import loads_slow
from git_gasp.protocol.manifest import parse_manifest
from git_gasp.protocol.skill import parse_skill
from git_gasp.protocol.snapshot import parse_snapshot
from git_gasp.protocol.vocab import parse_pack
from git_gasp.store.lease import parse_lease
from git_gasp.store.snapshots import load_document

pytestmark = pytest.mark.slow  # hypothesis: a few seconds a parser

ATOMS = [
    "9" * 5000, "-" + "9" * 4301, "1e99999", "-1e400", "NaN", "Infinity", "-0", "0x" + "f" * 5000,
    "[" * 3000 + "]" * 3000, "{" * 3000, '{"a":' * 2000 + "1" + "}" * 2000,
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]",
    "&a [*a, *a]", "*nope", "!!python/object/apply:os.system ['true']", "!!binary AAAA",
    "!!timestamp 2026-13-45", ".inf", "~", "null", "", '"\\ud800"', "'", '"', "\x00", "\x1b[2J",
    "\u2028", "\ufeff", "a: b: c", "- - -", "{a: 1, a: 2}", "[1, {]", "true", "2026-01-01",
    "12:30:00", "1_000", "0o777", "\\", "%YAML 9.9", "---", "...", "? x", "|\n  x", ">-",
]
atom = st.one_of(st.sampled_from(ATOMS), st.text(max_size=40),
                 st.integers(min_value=-(10**30), max_value=10**30).map(str))
holes = st.lists(atom, min_size=6, max_size=6)
junk_bytes = st.binary(max_size=300)
FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def refuses_cleanly(parse, data) -> None:
    """`parse(data)` returns, or raises a GaspError (one line in the CLI)."""
    try:
        parse(data)
    except GaspError as exc:
        assert "\n" not in str(exc).strip() or str(exc).count("\n") < 5
    except Exception as exc:  # noqa: BLE001 - the point of the test
        pytest.fail(f"{parse.__name__} raised {type(exc).__name__}: {str(exc)[:200]}")


MANIFESTS = [
    "---\nspec_version: {0}\nagent_id: {1}\nidentity_hash: {2}\nexecutor: {3}\n"
    "locations: {4}\n---\n# Agent {5}\n",
    "# Agent\n\n```yaml\nspec_version: {0}\nagent_id: {1}\nidentity_hash: {2}\n"
    "locations:\n  log: {3}\n  memory: {4}\n```\n\n## Locations\n\n| log | {5} |\n",
]
EVENT = ('{{"id":{0},"schema_version":{1},"ts_ms":{2},"actor":{{"kind":"agent","id":{3}}},'
         '"kind":"state.ops_applied","payload":[{{"CreateNode":{{"id":{4},"kind":"goal",'
         '"props":{5}}}}}],"causation_id":null,"correlation_id":null}}\n')


@FUZZ
@given(st.sampled_from(MANIFESTS), holes)
def test_agent_md(template, h):
    refuses_cleanly(parse_manifest, _bytes(template.format(*h)))


@FUZZ
@given(holes, junk_bytes)
def test_event_lines_and_their_fold(h, junk):
    def parse_and_fold(data: bytes) -> None:
        log = parse_log(data)
        fold(log.events)

    refuses_cleanly(parse_and_fold, _bytes(EVENT.format(*h)) + junk + b"\n")


@FUZZ
@given(holes)
def test_skill_md(h):
    text = "---\nname: {0}\ndescription: {1}\ntools: {2}\nallowed-tools: {3}\n---\n{4}{5}\n"
    refuses_cleanly(parse_skill, _bytes(text.format(*h)))


@FUZZ
@given(holes)
def test_config_toml(h):
    text = "[executor]\nmodel = {0}\nprovider = {1}\n[policy.nodes]\n{2} = {3}\n[{4}]\nx = {5}\n"

    def load(data: bytes) -> None:
        load_toml(data, ".agent/config.toml")

    refuses_cleanly(load, _bytes(text.format(*h)))


@FUZZ
@given(holes)
def test_packs(h):
    text = ('{{"id":{0},"name":"p","version":{1},"object_types":{{"k":{{"kind":{2},'
            '"required_props":{3},"description":""}}}},"relation_types":{4},"policies":{5},'
            '"prompts":[],"settings":{{}}}}')

    def load(data: bytes) -> None:
        parse_pack(loads_slow(data), "p")

    refuses_cleanly(load, _bytes(text.format(*h)))


@FUZZ
@given(holes)
def test_kg_front_matter(h):
    text = "---\nid: {0}\ntype: {1}\nrelations:\n  - {{to: {2}, rel: {3}}}\ntags: {4}\n---\n{5}\n"

    def load(data: str) -> None:
        front, _ = parse_document(data)
        if front.text():
            load_yaml(front.text())

    refuses_cleanly(load, text.format(*h))


@FUZZ
@given(holes)
def test_snapshots(h):
    text = ('{{"graph":{{"nodes":{{"n":{{"id":{0},"kind":"goal","props":{1},"stale":{2},'
            '"tombstoned":false,"artifacts":[]}}}},"relations":{3},"version":{4}}},'
            '"integrity":{{"event_id":"e","line_count":{5},"sha256":"00"}}}}\n')

    def load(data: bytes) -> None:
        parse_snapshot(load_document(data))

    refuses_cleanly(load, _bytes(text.format(*h)))


@FUZZ
@given(holes)
def test_lease(h):
    text = '{{"worker_id":{0},"pid":{1},"expires_at_ms":{2},"host":{3},"started":{4},"pidns":{5}}}'
    refuses_cleanly(parse_lease, _bytes(text.format(*h)))


SETTINGS = ['{{"hooks": {0}, "permissions": {1}}}', '{{"mcpServers": {{"gasp": {2}}}}}',
            "[mcp_servers.gasp]\ncommand = {3}\nargs = {4}\n", "a.{0} = {5}\n[{1}]\nb = {2}\n"]


@FUZZ
@given(st.sampled_from(SETTINGS), holes, st.sampled_from(["json", "toml"]))
def test_agent_settings(template, h, kind):
    """The one bounded loader of agent settings (`.claude/settings.json`, `.mcp.json`,
    `.codex/config.toml`): a value it returns can be written back (json.dumps recurses,
    as the writers do; past the stack that is a RecursionError, which fails the test)."""
    from git_gasp.base import bounded

    def load(data: bytes) -> None:
        value = (bounded.load_json if kind == "json" else bounded.load_toml)(data, "settings")
        json.dumps(value, default=str)

    refuses_cleanly(load, _bytes(template.format(*h)))
