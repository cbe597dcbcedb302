"""Property tests of the conformance checks: they never raise on any parsed log."""

from __future__ import annotations

import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_gasp.protocol.envelope import OPS_KIND, Event, serialize

pytestmark = pytest.mark.slow  # hypothesis

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# --------------------------------------------------------------------------- checks

op_tags = st.sampled_from(["CreateNode", "UpdateNode", "TombstoneNode", "MarkStale",
                           "AttachArtifact", "CreateRelation", "DeleteRelation", "Bogus"])
field_names = st.sampled_from(["id", "kind", "props", "status", "from", "rel", "to", "reason",
                               "artifact", "uri", "hash", "summary", "metadata", "title"])
loose_scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(
    ["", "goal", "patch", "goal_retry", "patch_9", "e1", "event_01", "Open", "Promoted"])
loose_values = st.recursive(
    loose_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(field_names, inner, max_size=4),
    max_leaves=10,
)
loose_payloads = (
    st.lists(st.dictionaries(op_tags, st.dictionaries(field_names, loose_values, max_size=5)
                             | loose_values, min_size=1, max_size=2), max_size=3)
    | st.dictionaries(field_names, loose_values, max_size=5)
    | loose_values
)
loose_events = st.builds(
    lambda i, k, p, c: Event(i, 1, 1, "agent", "x", k, p, c, None),
    st.sampled_from(["event_01", "e1", "e2", "e3"]),
    st.sampled_from([OPS_KIND, "goal.created", "patch.proposed", "eval.finished",
                     "decision.created", "run.started", "tool.called"]),
    loose_payloads,
    st.none() | st.sampled_from(["event_01", "e1", "e2", "e3", "nowhere"]),
)


@pytest.fixture(scope="module")
def agent_root(tmp_path_factory):
    from tests.testing.paths import FIXTURE

    root = tmp_path_factory.mktemp("agent")
    shutil.copytree(FIXTURE, root, dirs_exist_ok=True)
    return root


@SETTINGS
@given(logs=st.lists(loose_events, max_size=6))
def test_checks_never_raise_on_any_parsed_log(agent_root, logs):
    from git_gasp.conformance import checks
    from git_gasp.store.agent import load_agent

    repo = load_agent(agent_root)
    repo.log_bytes = b"".join(serialize(e) for e in logs)
    results = [checks.check_envelope(repo), checks.check_replay(repo),
               checks.check_vocabulary(repo), checks.check_causation(repo),
               checks.check_restore(repo), checks.check_pairing(repo)]
    for res in results:
        for failure in res.failures:
            assert failure.message and "\n" not in failure.message
            if failure.line is not None:
                assert failure.path == "state/events.jsonl"
                assert 1 <= failure.line <= len(logs)
    assert results[0].passed  # serialize() only writes valid envelopes
