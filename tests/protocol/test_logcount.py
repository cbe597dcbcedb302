"""`protocol.logcount`: events by layer, nodes and the last event, in one set of words."""

from __future__ import annotations

from git_gasp.protocol.envelope import OPS_KIND
from git_gasp.protocol.logcount import LogCount, events_phrase, layer_of


class _E:
    def __init__(self, eid: str, kind: str, line: int) -> None:
        self.id, self.kind, self.line = eid, kind, line


def test_layers_are_named_and_counted():
    evs = [_E("event_a", "goal.created", 1), _E("event_b", OPS_KIND, 2),
           _E("event_c", "tool.called", 4)]
    c = LogCount(evs, 3)
    assert (c.all, c.domain, c.ops, c.nodes) == (3, 2, 1, 3)
    assert layer_of(OPS_KIND) == "ops" and layer_of("tool.called") == "domain"
    assert c.phrase() == "3 events (2 domain, 1 ops), 3 nodes, last event_c (line 4, domain)"
    assert c.phrase(str.upper).endswith("last EVENT_C (line 4, domain)")
    assert c.to_json()["last_event"] == {"id": "event_c", "line": 4, "kind": "tool.called",
                                         "layer": "domain"}


def test_an_empty_log_and_one_of_each():
    c = LogCount([], 0)
    assert c.phrase() == "0 events (0 domain, 0 ops), 0 nodes, no event"
    assert c.to_json() == {"events": {"all": 0, "domain": 0, "ops": 0}, "nodes": 0,
                           "last_event": None}
    assert events_phrase(1, 0) == "1 event (1 domain, 0 ops)"
    assert LogCount([_E("e", OPS_KIND, 1)], 1).phrase() == \
        "1 event (0 domain, 1 ops), 1 node, last e (line 1, ops)"
