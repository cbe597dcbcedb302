"""Secrets planted in every string field of an input, mechanically, and looked for in a repo.

A field is a path to a string leaf of a JSON document, list positions left out
(``.message.content[].text``): every leaf at that path is one field. An item of a
list that names itself with a string ``key`` (an OTLP attribute, ``{"key", "value"}``)
is a field of its own, ``.attributes[gen_ai.agent.name].value.stringValue``. `plant` appends a
GitHub token and an AWS access key the redactor knows, distinct per field, to each of
its leaves. `copies` groups the fields so that as few inputs as possible cover them all:
a field whose planting alone changes what the input means (the `signature` a caller
computes: the records a transcript gives, the runs a trace makes; an enum such as a line
type, a hook's event name) gets an input of its own, the others are planted together
(split in halves while planting them together changes the meaning). So a field added
to a sample, or to the format, is covered without naming it. `leaks` finds a planted
secret anywhere a repo keeps it: every commit's patch and message, every object (gzip
archives opened) and every file of the work tree.
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


def _chars(seed: str, alphabet: str, n: int) -> str:
    digest = hashlib.sha256(seed.encode()).digest() * 2
    return "".join(alphabet[b % len(alphabet)] for b in digest[:n])


def secrets_for(tag: str, field: str) -> tuple[str, str]:
    """(a ``ghp_`` GitHub token, an ``AKIA`` AWS access key id), distinct per field."""
    seed = f"{tag}:{field}"
    return "ghp_" + _chars(seed, _ALNUM, 36), "AKIA" + _chars(seed + "/aws", _UPPER, 16)


def bodies(secret: str) -> str:
    """What must never be found of a planted secret: its random part (found even when a
    writer rewrote the prefix, as ``run_id_for`` turns ``ghp_`` into ``ghp-``)."""
    return secret[4:]


def _item(path: str, item: Any) -> str:
    """The path of a list item: ``[<key>]`` for a ``{"key": …}`` item, else ``[]``."""
    if isinstance(item, dict) and isinstance(item.get("key"), str):
        return f"{path}[{item['key']}]"
    return path + "[]"


def _walk(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    stack = [(value, path)]
    while stack:
        v, p = stack.pop()
        if isinstance(v, str):
            yield p, v
        elif isinstance(v, dict):
            stack.extend((x, f"{p}.{k}") for k, x in reversed(list(v.items())))
        elif isinstance(v, list):
            stack.extend((x, _item(p, x)) for x in reversed(v))


def fields(rows: list) -> list[str]:
    """Every field (path to a string leaf) of the documents `rows`, in order of first use."""
    seen: dict[str, None] = {}
    for row in rows:
        for path, _ in _walk(row, ""):
            seen.setdefault(path, None)
    return list(seen)


def plant(rows: list, chosen: set[str], tag: str) -> list:
    """A copy of `rows` with both secrets of each chosen field appended to its leaves."""
    out = copy.deepcopy(rows)

    def visit(v: Any, path: str) -> Any:
        if isinstance(v, str):
            if path in chosen:
                gh, aws = secrets_for(tag, path)
                return f"{v} {gh} {aws}"
            return v
        if isinstance(v, dict):
            return {k: visit(x, f"{path}.{k}") for k, x in v.items()}
        if isinstance(v, list):
            return [visit(x, _item(path, x)) for x in v]
        return v

    return [visit(row, "") for row in out]


def copies(rows: list, signature: Callable[[list], Any]) -> list[set[str]]:
    """The fields of `rows` in groups, each to be planted in one input (see module doc)."""
    base = signature(rows)
    every = fields(rows)
    alone = [f for f in every if signature(plant(rows, {f}, "probe")) != base]
    groups: list[set[str]] = []
    todo = [[f for f in every if f not in alone]]
    while todo:
        group = todo.pop()
        if not group:
            continue
        if len(group) == 1 or signature(plant(rows, set(group), "probe")) == base:
            groups.append(set(group))
        else:
            half = len(group) // 2
            todo += [group[:half], group[half:]]
    return groups + [{f} for f in alone]


def jsonl(rows: list) -> bytes:
    return b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in rows)


def read_jsonl(path: Path) -> list:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _open(data: bytes) -> bytes:
    if data[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(data)
        except (OSError, EOFError):
            return data
    return data


def repo_texts(repo: Path) -> Iterator[tuple[str, bytes]]:
    """(where, bytes) of everything `repo` keeps: `git log -p --all` (patches and
    messages), every object of every ref (gzip opened), every work-tree file."""
    log = subprocess.run(["git", "log", "-p", "--all", "--format=%H%n%B"], cwd=repo,
                         capture_output=True, check=True).stdout
    yield "git log -p --all", log
    listing = subprocess.run(["git", "rev-list", "--objects", "--all"], cwd=repo,
                             capture_output=True, check=True).stdout.decode()
    shas = [line.split(" ", 1)[0] for line in listing.splitlines() if line]
    batch = subprocess.run(["git", "cat-file", "--batch"], cwd=repo, capture_output=True,
                           check=True, input="\n".join(shas).encode() + b"\n").stdout
    pos = 0
    while pos < len(batch):
        header_end = batch.index(b"\n", pos)
        sha, kind, size = batch[pos:header_end].decode().split()
        start = header_end + 1
        yield f"object {sha} ({kind})", _open(batch[start:start + int(size)])
        pos = start + int(size) + 1
    for path in sorted(repo.rglob("*")):
        if path.is_file() and ".git" not in path.relative_to(repo).parts:
            yield f"work tree {path.relative_to(repo)}", _open(path.read_bytes())


def leaks(repo: Path, secrets: dict[str, tuple[str, str]]) -> list[str]:
    """Each planted secret found in `repo`: ``field: secret in where``."""
    texts = list(repo_texts(repo))
    found = []
    for field, pair in secrets.items():
        for secret in pair:
            needle = bodies(secret).encode()
            where = next((w for w, data in texts if needle in data), None)
            if where is not None:
                found.append(f"{field}: {secret} in {where}")
    return found


def family_tokens(tag: str) -> dict[str, str]:
    """One generated secret of each common token family (cloud keys, VCS tokens, the
    model vendors' API keys, chat tokens, a private key block, a JWT, a URL with a
    password), distinct per `tag`: what a write path or a commit must never keep."""
    def c(alphabet: str, n: int, salt: str) -> str:
        return _chars(f"{tag}:{salt}", alphabet, n)
    urlsafe = _ALNUM + "_-"
    return {
        "aws_access_key": "AKIA" + _chars(f"{tag}:aws", _UPPER, 16),
        "github_token": "ghp_" + c(_ALNUM, 36, "gh"),
        "gitlab_token": "glpat-" + c(_ALNUM, 20, "gl"),
        "anthropic_key": "sk-ant-api03-" + c(urlsafe, 40, "ant"),
        "openai_key": "sk-proj-" + c(_ALNUM, 40, "oai"),
        "slack_token": "xoxb-" + c("0123456789", 12, "sl") + "-" + c(_ALNUM, 24, "sl2"),
        "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJ" + c(_ALNUM, 24, "jwt") + "." + c(urlsafe, 32, "sig"),
        "private_key": "-----BEGIN RSA PRIVATE KEY-----\n" + c(_ALNUM, 64, "pem")
                       + "\n-----END RSA PRIVATE KEY-----",
        "url_password": "postgres://app:" + c(_ALNUM, 18, "pw") + "@db.internal:5432/app",
    }


def secret_part(family: str, token: str) -> str:
    """What must never be found of `token`: its random part (the body of a key block,
    the password of a URL, else the whole token)."""
    if family == "private_key":
        return token.split("\n")[1]
    if family == "url_password":
        return token.split(":")[2].split("@")[0]
    return token


def family_leaks(repo: Path, tokens: dict[str, str]) -> list[str]:
    """Each token of `family_tokens` found anywhere `repo` keeps it (`repo_texts`)."""
    texts = list(repo_texts(repo))
    found = []
    for family, token in tokens.items():
        needle = secret_part(family, token).encode()
        where = next((w for w, data in texts if needle in data), None)
        if where is not None:
            found.append(f"{family} in {where}")
    return found
