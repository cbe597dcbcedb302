"""The guard's identity rule over in-memory sides: the staged identity_hash must be the
staged identity files' digest (missing, malformed and mismatched digests fail)."""

from __future__ import annotations

from pathlib import Path

from git_gasp.guard.identity_rule import identity_problem, touches_identity


def sides(agent: Path, root: bytes = b"") -> tuple[dict, dict]:
    """(path -> (mode, blob id), blob id -> bytes) for AGENT.md and identity/ of `agent`."""
    join = root + b"/" if root else b""
    files, blobs = {}, {}
    paths = [agent / "AGENT.md", *sorted((agent / "identity").rglob("*"))]
    for n, path in enumerate(p for p in paths if p.is_file()):
        sha = b"%040x" % n
        files[join + path.relative_to(agent).as_posix().encode()] = (0o100644, sha)
        blobs[sha] = path.read_bytes()
    return files, blobs


def test_a_correct_hash_passes_at_the_top_and_in_a_subdirectory(agent):
    for root in (b"", b"agents/a"):
        files, blobs = sides(agent, root)
        assert identity_problem(root, files, blobs.__getitem__) is None


def test_an_edited_identity_file_is_a_mismatch(agent):
    files, blobs = sides(agent)
    blobs[files[b"identity/IDENTITY.md"][1]] = b"someone else\n"
    problem = identity_problem(b"", files, blobs.__getitem__)
    assert problem is not None and "hash to" in problem


def test_a_missing_or_malformed_digest_fails(agent):
    files, blobs = sides(agent)
    manifest = blobs[files[b"AGENT.md"][1]]
    lines = manifest.splitlines(keepends=True)
    blobs[files[b"AGENT.md"][1]] = b"".join(ln for ln in lines if b"identity_hash" not in ln)
    assert "declares no identity_hash" in identity_problem(b"", files, blobs.__getitem__)
    blobs[files[b"AGENT.md"][1]] = b"".join(
        b"identity_hash: nothex\n" if b"identity_hash" in ln else ln for ln in lines)
    assert "not a SHA-256" in identity_problem(b"", files, blobs.__getitem__)


def test_a_symlinked_identity_file_and_an_empty_identity_fail(agent):
    files, blobs = sides(agent)
    files[b"identity/IDENTITY.md"] = (0o120000, files[b"identity/IDENTITY.md"][1])
    assert "not a regular file" in identity_problem(b"", files, blobs.__getitem__)
    only_manifest = {b"AGENT.md": files[b"AGENT.md"]}
    assert "holds no files" in identity_problem(b"", only_manifest, blobs.__getitem__)


def test_which_commits_the_rule_looks_at():
    assert touches_identity(b"", [b"identity/IDENTITY.md"], b"identity")
    assert touches_identity(b"a", [b"a/AGENT.md"], b"identity")
    assert not touches_identity(b"a", [b"identity/IDENTITY.md", b"a/state/events.jsonl"],
                                b"identity")
    assert not touches_identity(b"", [b"identityx/f"], b"identity")
