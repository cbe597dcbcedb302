"""A seeded corpus of generated secrets, one family at a time, each embedded in the
contexts it turns up in (shell commands, JSON, YAML, CSV, env files, URLs, logs).

Every case is (family, text, sensitive parts, names): after redaction no sensitive
part may survive (nor any 10-character piece of one), and every name (a variable,
a flag, a user) must still be there. Nothing here is a real credential: every value
is drawn from a seeded RNG at run time.
"""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"
PASSWORD_CHARS = ALNUM + "!#%*+.=@^_~-"
URL_PASSWORD_CHARS = ALNUM + "._~-"
DICEWARE = ("correct horse battery staple orbit lemon quartz violin maple tundra canyon "
            "ember falcon harbor meadow nickel pepper raven saddle tiger walnut yodel").split()


@dataclass
class Case:
    family: str
    text: str
    sensitive: list[str]
    names: list[str]


def _r(rng: random.Random, chars: str, n: int) -> str:
    return "".join(rng.choice(chars) for _ in range(n))


def _password(rng: random.Random, chars: str = PASSWORD_CHARS) -> str:
    # starts with a letter or digit (a leading '-' would read as a flag to any tool),
    # has a digit and a letter, as a password policy would ask
    return (rng.choice(ALNUM) + _r(rng, chars, rng.randint(7, 23)) + rng.choice(string.digits)
            + rng.choice("aZ"))


def _contexts(rng: random.Random, name: str, value: str) -> list[str]:
    """One secret-valued setting `name` in the file formats it is written in."""
    return [
        f"export {name}={value}",
        f"{name}={value}\n",
        f'{{"{name}": "{value}", "region": "eu-west-1"}}',
        f"{name.lower()}: {value}\n",
        f"docker run -e {name}={value} app:latest",
        f'echo "{name}={value}" >> .env',
    ]


def _pem(rng: random.Random, label: str) -> str:
    body = base64.b64encode(rng.randbytes(rng.randint(300, 900))).decode()
    lines = "\n".join(body[i:i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN {label}-----\n{lines}\n-----END {label}-----"


# -- families: each yields cases ---------------------------------------------------------
def aws_keys(rng: random.Random) -> Iterator[Case]:
    key_id = rng.choice(["AKIA", "ASIA"]) + _r(rng, UPPER_ALNUM, 16)
    secret = _r(rng, B64, 40)
    yield Case("aws", f"bob,,{key_id},{secret}\n", [key_id[4:], secret], ["bob"])
    yield Case("aws", f"[default]\naws_access_key_id = {key_id}\naws_secret_access_key = "
                      f"{secret}\n", [key_id[4:], secret], ["aws_secret_access_key"])
    yield Case("aws", f"aws configure set aws_secret_access_key {secret}", [secret],
               ["aws configure set aws_secret_access_key"])
    yield Case("aws", f'{{"AccessKeyId": "{key_id}", "SecretAccessKey": "{secret}"}}',
               [key_id[4:], secret], ["SecretAccessKey"])


def gcp(rng: random.Random) -> Iterator[Case]:
    api = "AIza" + _r(rng, URLSAFE, 35)
    yield Case("gcp", f"curl 'https://maps.googleapis.com/api/x?key={api}&q=1'", [api[4:]],
               ["maps.googleapis.com"])
    pem = _pem(rng, "PRIVATE KEY")
    body = pem.split("\n")[1]
    sa = ('{"type": "service_account", "project_id": "demo-123", "private_key": "'
          + pem.replace("\n", "\\n")
          + '\\n", "client_email": "x@demo-123.iam.gserviceaccount.com"}')
    yield Case("gcp", sa, [body], ["client_email", "service_account"])
    yield Case("gcp", f"GOOGLE_API_KEY={api}", [api[4:]], ["GOOGLE_API_KEY"])


def azure(rng: random.Random) -> Iterator[Case]:
    key = base64.b64encode(rng.randbytes(64)).decode()
    acct = "acct" + _r(rng, string.ascii_lowercase, 6)
    conn = (f"DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={key};"
            "EndpointSuffix=core.windows.net")
    yield Case("azure", f'AZURE_STORAGE_CONNECTION_STRING="{conn}"', [key], [acct])
    sb = (f"Endpoint=sb://{acct}.servicebus.windows.net/;SharedAccessKeyName=Root;"
          f"SharedAccessKey={key}")
    yield Case("azure", sb, [key], ["SharedAccessKeyName=Root"])
    pw = _password(rng)
    ado = f"Server=tcp:{acct}.database.windows.net,1433;User ID=admin;Password={pw};"
    yield Case("azure", ado, [pw], ["User ID=admin"])


def forge_tokens(rng: random.Random) -> Iterator[Case]:
    for tok in (rng.choice(["ghp_", "gho_", "ghs_", "ghu_"]) + _r(rng, ALNUM, 36),
                "github_pat_" + _r(rng, ALNUM, 22) + "_" + _r(rng, ALNUM, 59),
                "glpat-" + _r(rng, URLSAFE, 20)):
        body = tok.split("_", 1)[1] if tok.startswith("g") and "_" in tok[:12] else tok[6:]
        for ctx in (f"git clone https://oauth2:{tok}@gitlab.example.com/g/r.git",
                    f"curl -H 'Authorization: token {tok}' https://api.github.com/user",
                    f"GH_TOKEN={tok} gh pr list", f"token: {tok}\n",
                    f"2026-11-29T10:00:00Z INFO auth ok with {tok} for ci"):
            yield Case("forge", ctx, [body], [])


def chat(rng: random.Random) -> Iterator[Case]:
    slack = (f"xox{rng.choice('bpa')}-{_r(rng, string.digits, 12)}-"
             f"{_r(rng, string.digits, 13)}-{_r(rng, ALNUM, 24)}")
    yield Case("chat", f"SLACK_BOT_TOKEN={slack}", [slack[5:]], ["SLACK_BOT_TOKEN"])
    yield Case("chat", f'{{"token": "{slack}", "channel": "C123"}}', [slack[5:]], ["channel"])
    path = f"T{_r(rng, UPPER_ALNUM, 10)}/B{_r(rng, UPPER_ALNUM, 10)}/{_r(rng, ALNUM, 24)}"
    hook = f"https://hooks.slack.com/services/{path}"
    yield Case("chat", f"curl -X POST -d '{{\"text\":\"hi\"}}' {hook}", path.split("/"),
               ["hooks.slack.com/services/"])
    dpath = f"{_r(rng, string.digits, 18)}/{_r(rng, URLSAFE, 68)}"
    yield Case("chat", f"DISCORD_WEBHOOK=https://discord.com/api/webhooks/{dpath}",
               dpath.split("/"), ["DISCORD_WEBHOOK", "discord.com/api/webhooks/"])
    bot = (rng.choice("MNO") + _r(rng, ALNUM, 25) + "." + _r(rng, URLSAFE, 6) + "."
           + _r(rng, URLSAFE, 38))
    yield Case("chat", f"client.run('{bot}')", [bot[1:]], ["client.run"])


def ai_keys(rng: random.Random) -> Iterator[Case]:
    oa = "sk-proj-" + _r(rng, URLSAFE, rng.randint(40, 120)) + rng.choice(string.digits) + "Q"
    an = "sk-ant-api03-" + _r(rng, URLSAFE, 93) + "AA"
    for name, key, body in (("OPENAI_API_KEY", oa, oa[8:]), ("ANTHROPIC_API_KEY", an, an[13:])):
        for ctx in _contexts(rng, name, key):
            yield Case("ai", ctx, [body], [name if name in ctx else name.lower()])
        yield Case("ai", f'client = Anthropic(api_key="{key}")', [body], ["api_key"])


def stripe(rng: random.Random) -> Iterator[Case]:
    key = rng.choice(["sk_live_", "sk_test_", "rk_live_"]) + _r(rng, ALNUM, rng.randint(24, 99))
    yield Case("stripe", f"export STRIPE={key}", [key[8:]], ["export STRIPE="])
    yield Case("stripe", f"curl https://api.stripe.com/v1/charges -u {key}:", [key[8:]],
               ["api.stripe.com"])
    yield Case("stripe", f"stripe:\n  secret: {key}\n", [key[8:]], ["secret:"])


def private_keys(rng: random.Random) -> Iterator[Case]:
    for label in ("RSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY",
                  "ENCRYPTED PRIVATE KEY"):
        pem = _pem(rng, label)
        lines = pem.split("\n")[1:-1]
        yield Case("private_key", f"$ cat ~/.ssh/id\n{pem}\n$ ls", lines, ["cat ~/.ssh/id"])


def jwts(rng: random.Random) -> Iterator[Case]:
    def part(n: int) -> str:
        return base64.urlsafe_b64encode(rng.randbytes(n)).decode().rstrip("=")
    jwt = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJ" + part(rng.randint(30, 200)) + "."
           + part(32))
    sens = jwt.split(".")[1:]
    yield Case("jwt", f"curl -H 'Authorization: Bearer {jwt}' https://api.example.com",
               sens, ["Authorization"])
    yield Case("jwt", f'{{"id_token": "{jwt}"}}', sens, ["id_token"])
    yield Case("jwt", f"set-cookie: session={jwt}; Path=/", sens, ["Path=/"])


def url_passwords(rng: random.Random) -> Iterator[Case]:
    pw = _password(rng, URL_PASSWORD_CHARS)
    user = "u" + _r(rng, string.ascii_lowercase, 5)
    for scheme in ("postgres", "postgresql", "mysql", "mongodb+srv", "redis", "rediss",
                   "amqp", "https", "ftp"):
        who = "" if scheme.startswith("redis") and rng.random() < 0.5 else user
        url = f"{scheme}://{who}:{pw}@db.internal:5432/app?sslmode=require"
        yield Case("url", rng.choice([f"DATABASE_URL={url}", f"psql '{url}'",
                                      f'{{"dsn": "{url}"}}', f"connecting to {url} ..."]),
                   [pw], [who + ":"] if who else ["db.internal"])


def cli_flags(rng: random.Random) -> Iterator[Case]:
    pw = _password(rng)
    user = "admin" + _r(rng, string.digits, 2)
    cases = [
        (f"curl -u {user}:{pw} https://ci.example.com/api", [f"-u {user}:"]),
        (f"curl --user {user}:{pw} https://ci.example.com/api", [f"--user {user}:"]),
        (f"mysql -h db -u {user} -p{pw} shop", ["mysql -h db -u"]),
        (f"mysqldump -u root --password={pw} shop > dump.sql", ["--password="]),
        (f"app login --password {pw} --user {user}", ["--password", user]),
        (f"psql --set=token={pw}", ["--set=token="]),
        (f"sshpass -p {pw} ssh {user}@host", ["sshpass -p", user]),
        (f"redis-cli -h cache -a {pw} ping", ["redis-cli -h cache -a"]),
        (f"docker login -u {user} -p {pw} registry.example.com", ["docker login -u"]),
        (f"vault login -method=userpass username={user} password={pw}", ["password="]),
        (f"deploy --api-key '{pw}' --env prod", ["--api-key", "--env prod"]),
        (f'gh api user --token "{pw}" --paginate', ["--token", "--paginate"]),
    ]
    for text, names in cases:
        yield Case("cli", text, [pw], names)


def auth_headers(rng: random.Random) -> Iterator[Case]:
    opaque = _r(rng, ALNUM + "._~+/-", rng.randint(20, 60)) + rng.choice(string.digits)
    basic = base64.b64encode(f"user:{_password(rng)}".encode()).decode()
    for text, sens in ((f"Authorization: Bearer {opaque}", opaque),
                       (f"curl -H \"Authorization: Basic {basic}\" https://x", basic),
                       (f'{{"headers": {{"Authorization": "Bearer {opaque}"}}}}', opaque),
                       (f"> GET / HTTP/1.1\n> authorization: token {opaque}\n", opaque),
                       (f"requests.get(url, headers={{'Authorization': 'Bearer {opaque}'}})",
                        opaque),
                       (f"Proxy-Authorization: Basic {basic}", basic)):
        yield Case("auth_header", text, [sens], [text.split(":")[0][-5:]])


def env_lines(rng: random.Random) -> Iterator[Case]:
    names = ["DB_PASSWORD", "API_KEY", "SECRET_KEY", "AUTH_TOKEN", "STRIPE_SECRET",
             "CLIENT_SECRET", "SMTP_PASS", "MYSQL_PWD", "OPENAI_KEY", "JWT_SECRET",
             "REDIS_PASSWORD", "SESSION_SECRET", "ACCESS_TOKEN", "PGPASSWORD", "apiKey",
             "clientSecret", "password", "db.password", "app-secret"]
    name = rng.choice(names)
    value = _password(rng)
    form = rng.randrange(5)
    if form == 0:
        text = f"{name}={value}\n"
    elif form == 1:
        text = f'{name}="{value}"\n'
    elif form == 2:
        text = f"{name}='{value}'\n"
    elif form == 3:
        text = f"{name}: {value}\n"
    else:
        text = f"  {name} = {value}  # rotated\n"
    yield Case("env", text, [value], [name])
    words = " ".join(rng.choice(DICEWARE) for _ in range(rng.randint(3, 6)))
    yield Case("env", f"password: {words}\nuser: bob\n", words.split(" ")[1:] + [words],
               ["password:", "user: bob"])


def connection_strings(rng: random.Random) -> Iterator[Case]:
    pw = _password(rng, URL_PASSWORD_CHARS)
    host = "h" + _r(rng, string.ascii_lowercase, 6)
    for text in (f"postgresql://app:{pw}@{host}:5432/db",
                 f"mysql://root:{pw}@{host}/shop?charset=utf8",
                 f"mongodb://admin:{pw}@{host}:27017/?authSource=admin",
                 f"redis://:{pw}@{host}:6379/0",
                 f"amqp://guest:{pw}@{host}:5672/vhost",
                 f"Host={host};Port=5432;Username=app;Password={pw};Database=db",
                 f"Driver={{ODBC Driver 18}};Server={host};Uid=sa;Pwd={pw};",
                 f"jdbc:postgresql://{host}:5432/db?user=app&password={pw}"):
        yield Case("connection_string", rng.choice([text, f'conn = "{text}"', f"DSN={text}"]),
                   [pw], [host])


FAMILIES: dict[str, Callable[[random.Random], Iterator[Case]]] = {
    "aws": aws_keys, "gcp": gcp, "azure": azure, "forge": forge_tokens, "chat": chat,
    "ai": ai_keys, "stripe": stripe, "private_key": private_keys, "jwt": jwts,
    "url": url_passwords, "cli": cli_flags, "auth_header": auth_headers, "env": env_lines,
    "connection_string": connection_strings,
}


def corpus(family: str, secrets: int, seed: int = 12) -> Iterator[Case]:
    """`secrets` generated secrets of `family` (each in one or more contexts)."""
    rng = random.Random(f"{seed}:{family}")
    for _ in range(secrets):
        yield from FAMILIES[family](rng)


def leaks(case: Case, out: str, window: int = 10) -> list[str]:
    """The sensitive parts of `case` (or pieces of `window` characters) left in `out`."""
    found = []
    for s in case.sensitive:
        n = min(window, len(s))
        if any(s[i:i + n] in out for i in range(len(s) - n + 1)):
            found.append(s)
    return found
