"""Secrets redaction: every planted secret is gone, ids and paths survive, tokens are stable."""

from __future__ import annotations

import copy
import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_gasp.redact.redactor import Redactor, is_redacted, redact, redact_text, token_for
from tests.adapters.samples import (
    CLAUDE_HOOKS,
    CLAUDE_TRANSCRIPT,
    CODEX_HOOKS,
    CODEX_ROLLOUT,
    read_jsonl,
)

# Fake secrets built at run time so no scanner mistakes this file for a leak.
ANTHROPIC = "sk-ant-api03-" + "Qx7Lm2Vb9Nc4Zr8Tp1Ws6Yd3Kf5Hg0Jj" + "-AA"
OPENAI = "sk-proj-" + "T3BlbkFJ9x8Yz7Wv6Ut5Sr4Qp3On2Ml1Kk"
AWS = "AKIA" + "IOSFODNN7EXAMPL3"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GITHUB_PAT = "github_pat_" + "11ABCDEFG0123456789_" + "abcdefghijklmnopqrstuvwxyz0123"
SLACK = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
BEARER = "eyJhbGci" + "OiJIUzI1NiJ9.payload-part-1234.sig"
RANDOM = "Zq8Xw2Lk5Vb9Nm3Rt7Yp4Hs6Jd1Gf0Ac"
PEM = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
ALL_SECRETS = [ANTHROPIC, OPENAI, AWS, GITHUB, GITHUB_PAT, SLACK, RANDOM, "hunter2-Pa55"]


def h8(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()[:8]


@pytest.mark.parametrize(
    ("text", "kind", "secret"),
    [
        (f"export ANTHROPIC_API_KEY={ANTHROPIC}", "anthropic_key", ANTHROPIC),
        (f"OPENAI_API_KEY={OPENAI} codex exec", "openai_key", OPENAI),
        (f"aws configure set aws_access_key_id {AWS}", "aws_access_key", AWS),
        (f"git push https://x:{GITHUB}@github.com/o/r", "github_token", GITHUB),
        (f"GH_TOKEN: {GITHUB_PAT}", "github_token", GITHUB_PAT),
        (f"curl -H 'x: {SLACK}'", "slack_token", SLACK),
        (f"Authorization: Bearer {BEARER}", "bearer", BEARER),
        (f"the key is {RANDOM} ok", "high_entropy", RANDOM),
        ("password=hunter2-Pa55 next", "password", "hunter2-Pa55"),
        ('{"client_secret": "s3cr3t value"}', "secret", "s3cr3t value"),
        ("token='abc123xyz'", "token", "abc123xyz"),
        ("psql postgres://app:dbpass99@db:5432/x", "url_password", "dbpass99"),
    ],
)
def test_each_secret_kind_becomes_a_stable_token(text, kind, secret):
    out = redact_text(text)
    assert secret not in out
    assert f"[REDACTED:{kind}:{h8(secret)}]" in out
    assert token_for(kind, secret) == f"[REDACTED:{kind}:{h8(secret)}]"


def test_private_key_block_and_private_spans_are_removed():
    out = redact_text(f"key:\n{PEM}\nend <private>my home address</private> done")
    assert "BEGIN OPENSSH" not in out and "b3BlbnNz" not in out
    assert f"[REDACTED:private_key:{h8(PEM)}]" in out
    assert "home address" not in out and "<private>" not in out
    assert out.endswith("end  done")
    # an unclosed span drops the rest of the string
    assert redact_text("keep <private>never closed") == "keep "


def test_same_secret_same_token_different_secrets_differ():
    a = redact_text(f"{OPENAI} and again {OPENAI}")
    tokens = [t for t in a.split() if t.startswith("[REDACTED")]
    assert len(tokens) == 2 and tokens[0] == tokens[1]
    assert redact_text(f"x {OPENAI}")[2:] != redact_text(f"x {OPENAI}Z")[2:]


@pytest.mark.parametrize(
    "text",
    [
        "commit 25b87ee4f1c0a9b8d7e6f5a4b3c2d1e0f9a8b7c6 is HEAD",
        "sha256 ae37ff17f83469337822089f1246edb5fbcb99f5ed8e4c7e4d6079fcd6de4528",
        "session 6f48f32c-63b8-44c3-9f60-37aed18fbcf2",
        "toolu_7683499eb5474caa9c40 msg_01a227f0-ba81-7f23-adbb-cdacf45249d0 call_f5990771feb9",
        "event_0f3c2a1b-4d5e-4f60-8a9b-0c1d2e3f4a5b",
        "/home/dev/app/some_long_directory_name/another_long_file_name_here.py",
        "python3 -m pytest -q tests/adapters/test_lifting_rules_on_samples.py",
        "max_tokens: 32000 and input_tokens=10",
        'api_key = os.environ["OPENAI_API_KEY"]; token = get_token(); password: str',
        "self.password = password",
        "FAILED test_calc.py::test_add - assert -1 == 5",
    ],
)
def test_ids_hashes_paths_and_code_survive(text):
    assert redact_text(text) == text


def test_redaction_is_idempotent_and_counted():
    r = Redactor()
    once = r.text(f"{ANTHROPIC} {AWS} password=hunter2-Pa55 {RANDOM}")
    assert r.counts == {"anthropic_key": 1, "aws_access_key": 1, "password": 1, "high_entropy": 1}
    assert redact_text(once) == once
    assert is_redacted(once) and not is_redacted("plain")


def test_json_values_recursively_with_secret_keys_and_id_keys():
    value = {
        "id": RANDOM,  # an id key: only explicit patterns apply
        "password": "short",  # a secret key: the whole value goes
        "nested": [{"env": {"GITHUB_TOKEN": GITHUB, "HOME": "/root"}}, 42, None, True],
        "text": f"use {OPENAI}",
        "input_tokens": 10,
    }
    orig = copy.deepcopy(value)
    out = redact(value)
    assert value == orig, "redact must not mutate its input"
    assert out["id"] == RANDOM
    assert out["password"] == token_for("password", "short")
    assert out["nested"][0]["env"]["GITHUB_TOKEN"] == token_for("token", GITHUB)
    assert out["nested"][0]["env"]["HOME"] == "/root"
    assert out["nested"][1:] == [42, None, True]
    assert out["text"] == "use " + token_for("openai_key", OPENAI)
    assert out["input_tokens"] == 10


def test_deep_json_does_not_recurse():
    deep: object = "sk-ant-api03-" + "x" * 30
    for _ in range(5000):
        deep = [deep]
    out = redact(deep)
    for _ in range(5000):
        out = out[0]
    assert out.startswith("[REDACTED:anthropic_key:")


@pytest.mark.parametrize("path", [CLAUDE_TRANSCRIPT, CLAUDE_HOOKS, CODEX_ROLLOUT, CODEX_HOOKS])
def test_real_sessions_have_no_false_positives(path):
    r = Redactor()
    for row in read_jsonl(path):
        assert r.value(row) == row
    assert not r.counts


def _plant(s: str) -> str:
    return (
        f"{s}\nexport ANTHROPIC_API_KEY={ANTHROPIC} OPENAI_API_KEY={OPENAI}\n"
        f"AWS={AWS} gh={GITHUB} {GITHUB_PAT} slack={SLACK} blob={RANDOM}\n"
        f"password=hunter2-Pa55\n{PEM}\n<private>diary entry</private>"
    )


def _assert_clean(value) -> None:
    text = json.dumps(value)
    for secret in ALL_SECRETS + ["BEGIN OPENSSH", "diary entry"]:
        assert secret not in text, secret


def test_planted_secrets_in_a_claude_transcript_are_all_redacted():
    rows = read_jsonl(CLAUDE_TRANSCRIPT)
    for row in rows:
        msg = row.get("message") or {}
        content = msg.get("content")
        if isinstance(content, str):
            msg["content"] = _plant(content)
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use" and block["name"] == "Bash":
                block["input"]["command"] = _plant(block["input"]["command"])
            if block.get("type") == "tool_result":
                block["content"] = _plant(block["content"])
    assert ANTHROPIC in json.dumps(rows)
    r = Redactor()
    out = [r.value(row) for row in rows]
    _assert_clean(out)
    assert r.counts["anthropic_key"] >= 3 and r.counts["private"] >= 3
    # structure and ids untouched
    assert [o.get("uuid") for o in out] == [row.get("uuid") for row in rows]


def test_planted_secrets_in_a_codex_rollout_and_hooks_are_all_redacted():
    rows = read_jsonl(CODEX_ROLLOUT)
    for row in rows:
        p = row["payload"]
        if p.get("type") == "function_call":
            args = json.loads(p["arguments"])
            args["cmd"] = _plant(args["cmd"])
            p["arguments"] = json.dumps(args)
        if p.get("type") == "function_call_output":
            p["output"] = _plant(p["output"])
    hooks = read_jsonl(CODEX_HOOKS)
    for hook in hooks:
        if "tool_input" in hook:
            hook["tool_input"]["command"] = _plant(hook["tool_input"]["command"])
    r = Redactor()
    out = [r.value(x) for x in rows + hooks]
    _assert_clean(out)
    assert [o["payload"].get("call_id") for o in out[: len(rows)]] == [
        row["payload"].get("call_id") for row in rows
    ]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_redact_never_raises_and_is_idempotent(text):
    once = redact_text(text)
    assert redact_text(once) == once


@pytest.mark.parametrize(
    "text",
    [
        "token = Error",
        "username, password = parsed.auth_decoded",
        'secret = tmp_path / "secret.txt"',
        "def step(self, shrink_pass: ShrinkPass, *, order: bool = False) -> bool:",
        "f(_token=_token, key_password=key_password)",
        "VERIFY_X509_PARTIAL_CHAIN = 0x80000",
        '{"cacheCreationEphemeral5mInputTokens": 0, "w": PytestRemovedIn10Warning}',
        "PEP517_BUILD_BACKEND=entry.point:spec",
        "mkdir -pv build && ssh -p2222 host && ls -a && git commit -a -m x",
        "docker run -u 1000:1000 img",
        ":param sign_password: The passphrase for the signer's key",
        "Authorization: <token>",
        "the basic functionality; Bearer authentication",
        "http://code.example.com/recipes/577452-a-memoize-decorator-for-instance-methods/",
        "password: is required",
        "token := next_token()",
    ],
)
def test_code_and_prose_that_look_like_secrets_survive(text):
    assert redact_text(text) == text


def test_agent_file_names_with_ids_and_times_are_kept():
    """Codex names its rollouts by start time and session UUID: a path, not a secret."""
    path = ("/root/.codex/sessions/2026/12/01/"
            "rollout-2026-12-01T19-23-31-019ad8f3-4c2e-7a31-9b5e-2f6d8c1a0e47.jsonl")
    assert Redactor().text(path) == path
    key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY"
    assert key not in Redactor().text(f"{path} {key}")


# --- names and ids taken from outside: Redactor.field (#24, item 1) ---------------------
def test_a_field_gets_the_rule_a_json_member_of_that_name_gets():
    r = Redactor()
    for key, value in (("session_id", f"sess {GITHUB}"), ("model", f"gpt-x {AWS}"),
                       ("token", "plain-looking"), ("tool", RANDOM), ("trace_id", RANDOM)):
        assert r.field(key, value) == r.value({key: value})[key]
    assert r.field("tool_use_id", RANDOM) == RANDOM  # an id: no entropy rule, ids are random
    assert r.field("tool", RANDOM) != RANDOM  # a name: a random string is a secret
    assert r.field("token", "plain-looking").startswith("[REDACTED:token:")
    assert r.field("model", "claude-opus-4-1-20250805") == "claude-opus-4-1-20250805"


def test_a_redacted_id_is_deterministic_so_it_still_finds_its_run():
    sid = f"01a227f0:{GITHUB}"
    once, again = Redactor().field("session_id", sid), Redactor().field("session_id", sid)
    assert once == again and GITHUB not in once
    assert once != Redactor().field("session_id", f"01a227f0:{GITHUB[:-1]}X")


def test_object_keys_are_redacted_too_and_judged_by_what_they_were():
    out = redact({GITHUB: 1, "api_key": "abc", "tool_use_id": RANDOM,
                  "cache_read_input_tokens": 2})
    assert GITHUB not in json.dumps(out)
    assert out["api_key"].startswith("[REDACTED:api_key:")
    assert out["tool_use_id"] == RANDOM and out["cache_read_input_tokens"] == 2


@pytest.mark.parametrize("glue", ["p-", "x.", "v.", "-", ".", "~", "+", ":", "'", "@", "=-"])
@pytest.mark.parametrize(("secret", "kind"), [
    (GITHUB, "github_token"), (ANTHROPIC, "anthropic_key"), (OPENAI, "openai_key"),
    (SLACK, "slack_token"), (AWS, "aws_access_key"), (GITHUB_PAT, "github_token")])
def test_a_token_glued_after_any_separator_is_still_that_token(glue, secret, kind):
    """`p-ghp_…`, `x.ghp_…`: a vendor token after a non-word character is found by its
    shape (not left to the entropy guess, which misses short or repetitive ones and
    takes the separator with it), with entropy on or off; inside a word it is not."""
    for entropy in (True, False):
        said = Redactor().text(f"run it with {glue}{secret} now", entropy=entropy)
        assert said == f"run it with {glue}{token_for(kind, secret)} now", said
    assert "mask_ghp_x" == Redactor().text("mask_ghp_x")
