"""`git gasp mcp` on a conformant repository whose identity files have names that are
URI or template syntax (`notes{x}.md`, `100%.md`, `q?x#y.md`, a space, bytes that are
not UTF-8): it starts, lists each file once under its percent-encoded name, and reads
each back exactly."""

from __future__ import annotations

import os
from urllib.parse import quote

import pytest

from tests.mcp.client import drive
from tests.testing.run import gasp, out

NAMES = [b"notes{x}.md", b"{a}{b}", b"100%.md", b"q?x#y.md", b"a b.md", b"sub/{c}.md",
         "\u00fc.md".encode(), b"\xff\xfe.md", b"%7Bx%7D.md"]


@pytest.mark.slow
def test_identity_files_with_odd_names_are_served(agent, tmp_path):
    identity = os.path.join(os.fsencode(agent), b"identity")
    for n, name in enumerate(NAMES):
        path = os.path.join(identity, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(b"file %d\n" % n)
    proc = gasp(agent, "identity", "amend", "--approved-by", "me", "--reason", "odd names")
    assert proc.returncode == 0, out(proc)
    assert gasp(agent, "check").returncode == 0  # conformant: check 6 hashes them all

    async def body(s):
        listed = {str(r.uri) for r in (await s.list_resources()).resources}
        read = {}
        for name in NAMES:
            uri = "gasp://identity/" + quote(name, safe="/")
            contents = (await s.read_resource(uri)).contents
            read[name] = contents[0].text if hasattr(contents[0], "text") else None
        return listed, read

    listed, read = drive(agent, body, tmp_path / "err.log")
    assert {"gasp://identity/" + quote(n, safe="/") for n in NAMES} <= listed
    assert read == {name: f"file {n}\n" for n, name in enumerate(NAMES)}
