"""Redaction coverage: thousands of generated secrets per family leave nothing behind,
the real sessions come out unchanged, and adversarial megabytes are redacted at all
(their time is bench/bench_redact.py's business, never asserted here)."""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path

import pytest

from git_gasp.redact.redactor import Redactor, redact_text
from tests.adapters.samples import DATA
from tests.redact.secret_corpus import FAMILIES, corpus, leaks

pytestmark = pytest.mark.slow

SECRETS_PER_FAMILY = 3000
SHARED_SAMPLES = Path("/work/shared/samples")


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_generated_secrets_never_survive_and_names_stay(family):
    leaked, lost, n = [], [], 0
    for case in corpus(family, SECRETS_PER_FAMILY):
        n += 1
        result = Redactor().text(case.text)
        if leaks(case, result):
            leaked.append((case.text, result))
        if any(name not in result for name in case.names):
            lost.append((case.names, case.text, result))
    assert n >= SECRETS_PER_FAMILY
    assert not leaked, f"{len(leaked)} of {n} leak, e.g. {leaked[:3]}"
    assert not lost, f"{len(lost)} of {n} lose a name, e.g. {lost[:3]}"


def _sample_files() -> list[Path]:
    files = sorted(DATA.glob("*/*.jsonl"))
    if SHARED_SAMPLES.is_dir():
        files += sorted(SHARED_SAMPLES.glob("*/*.jsonl"))
    return files


@pytest.mark.parametrize("path", _sample_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_real_sessions_change_nowhere(path):
    """The shipped sessions hold no secret: neither their JSON values nor their raw
    lines (how a line that is not JSON is archived) change at all."""
    r = Redactor()
    for line in path.read_text().splitlines():
        assert r.text(line) == line
        if line.strip():
            row = json.loads(line)
            assert r.value(row) == row
    assert not r.counts, r.counts


@pytest.mark.parametrize(
    ("text", "kept", "gone"),
    [
        ("bob,,AKIA" + "IOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY", ["bob,,"],
         ["IOSFODNN7EXAMPLE", "wJalrXUtnFEMI", "K7MDENG", "bPxRfiCYzEXAMPLEKEY"]),
        ("redis://:authpass123@cache:6379", ["redis://:", "@cache:6379"], ["authpass123"]),
        ("curl -u admin:Hunt3rTw0 https://x", ["curl -u admin:"], ["Hunt3rTw0"]),
        ("mysql -pHunt3rThree", ["mysql -p"], ["Hunt3rThree"]),
        ("password: correct horse battery staple", ["password: "],
         ["correct", "horse", "battery", "staple"]),
        ("https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/abcdefghijklmnopqrstuvwx",
         ["https://hooks.slack.com/services/"], ["T0ABCDEF1", "B0ABCDEF2", "abcdefghijkl"]),
        ("export STRIPE=sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", ["export STRIPE="],
         ["4eC39HqLyjWDarjtT1zdp7dc"]),
    ],
)
def test_the_shapes_that_leaked(text, kept, gone):
    result = redact_text(text)
    for part in kept:
        assert part in result, result
    for part in gone:
        assert part not in result, result
    assert redact_text(result) == result


@pytest.mark.parametrize(
    ("text", "gone"),
    [("git push https://ghp_a1B2c3D4e5…", "a1B2c3D4e5"),  # summarize() cut a token
     ("head\n…\nQx7Lm2Vb9Nc4Zr tail", "Qx7Lm2Vb9Nc4Zr")],  # the tail of a kept output
)
def test_a_secret_cut_by_an_ellipsis_goes_too(text, gone):
    result = redact_text(text)
    assert gone not in result and "[REDACTED:truncated:" in result
    assert redact_text("the implementation… of 2.1.328…") == "the implementation… of 2.1.328…"


def _adversarial(kind: str, n: int) -> str:
    rng = random.Random(7)
    unit = {"ab-": "ab-", "a.": "a.", "x=": "x=", "words": "password token secret ",
            "token:": "token: ", "flags": "mysql -p", "url": "://a:"}.get(kind)
    if unit:
        return (unit * (n // len(unit) + 1))[:n]
    if kind == "base64":
        return base64.b64encode(rng.randbytes(n * 3 // 4)).decode()[:n]
    return rng.randbytes(n // 2).hex()


@pytest.mark.parametrize("kind", ["ab-", "a.", "x=", "base64", "hex", "words", "token:",
                                  "flags", "url"])
def test_adversarial_megabyte_is_redacted(kind):
    text = _adversarial(kind, 1 << 20)
    once = Redactor().text(text)
    assert Redactor().text(once) == once
