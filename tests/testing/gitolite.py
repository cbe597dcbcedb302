"""gitolite3 behind OpenSSH on 127.0.0.1, for tests of the server hook behind a real
hosting layer (Debian's gitolite3, openssh-server and openssh-client; `.ci/run`
installs them).

The hook goes in as gitolite's documentation says for a repo-specific hook: the
`.gitolite.rc` enables ``LOCAL_CODE => "$ENV{HOME}/local"`` and ``repo-specific-hooks``,
the script `git gasp install-hooks --server --check` writes is copied to
``$HOME/local/hooks/repo-specific/git-gasp``, and a repository's conf says
``option hook.pre-receive = git-gasp``; gitolite then links it in as
``hooks/pre-receive.h00-git-gasp`` behind its multi-hook driver. sshd runs as this user
(root: it needs to), on a free loopback port, with gitolite's ``authorized_keys``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.testing.daemon import free_port

SSHD = "/usr/sbin/sshd"
NEEDED = ("gitolite", "ssh", "ssh-keygen")


def missing() -> str | None:
    """Why gitolite behind sshd cannot run here (None: it can)."""
    absent = [n for n in NEEDED if shutil.which(n) is None]
    if not os.path.exists(SSHD):
        absent.append(SSHD)
    if absent:
        return "not installed: " + ", ".join(absent) + " (Debian: gitolite3 openssh-server " \
               "openssh-client; .ci/run installs them)"
    if os.geteuid() != 0:
        return "sshd must run as root to serve gitolite here"
    return None


class Gitolite:
    """A running gitolite: its home, an admin key, and how to reach it."""

    def __init__(self, base: Path, port: int) -> None:
        self.base, self.port = base, port
        self.home = base / "home"
        self.key = base / "keys" / "admin"

    @property
    def ssh_command(self) -> str:
        """GIT_SSH_COMMAND for a client (the admin key, this port, no host key kept)."""
        return (f"ssh -i {self.key} -p {self.port} -o IdentitiesOnly=yes -o BatchMode=yes "
                "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR")

    def url(self, repo: str) -> str:
        return f"root@127.0.0.1:{repo}"

    def _gitolite(self, *args: str) -> None:
        env = dict(os.environ, HOME=str(self.home))
        proc = subprocess.run(["gitolite", *args], env=env, capture_output=True)
        assert proc.returncode == 0, proc.stderr.decode(errors="replace")

    def add_repo(self, name: str, *, hook: bool = True) -> Path:
        """A new repository `name` the admin may push to (RW+), with our pre-receive when
        `hook`; its path on the server."""
        lines = f"\nrepo {name}\n    RW+     =   admin\n"
        if hook:
            lines += "    option hook.pre-receive = git-gasp\n"
        conf = self.home / ".gitolite" / "conf" / "gitolite.conf"
        conf.write_text(conf.read_text() + lines)
        self._gitolite("compile")
        self._gitolite("trigger", "POST_COMPILE")
        return self.home / "repositories" / f"{name}.git"


@contextmanager
def gitolite_server(base: Path, hook_script: Path) -> Iterator[Gitolite]:
    """gitolite set up under `base` with `hook_script` as its repo-specific ``git-gasp``
    hook, served by sshd on loopback while the block runs."""
    keys = base / "keys"
    keys.mkdir(parents=True)
    for name in ("admin", "host"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f",
                        str(keys / name)], check=True)
    server = Gitolite(base, free_port())
    server.home.mkdir()
    server._gitolite("setup", "-pk", str(keys / "admin.pub"))
    rc = server.home / ".gitolite.rc"
    text = rc.read_text()
    for commented in ('# LOCAL_CODE                =>  "$ENV{HOME}/local",',
                      "# 'repo-specific-hooks',"):
        assert commented in text, f".gitolite.rc has no line {commented!r}"
        text = text.replace(commented, commented[2:], 1)
    rc.write_text(text)
    hooks = server.home / "local" / "hooks" / "repo-specific"
    hooks.mkdir(parents=True)
    shutil.copy(hook_script, hooks / "git-gasp")
    (hooks / "git-gasp").chmod(0o755)
    config = base / "sshd_config"
    config.write_text(
        f"Port {server.port}\nListenAddress 127.0.0.1\nHostKey {keys / 'host'}\n"
        f"PidFile {base / 'sshd.pid'}\nAuthorizedKeysFile {server.home}/.ssh/authorized_keys\n"
        "StrictModes no\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nUsePAM no\n"
        f"SetEnv HOME={server.home}\n")
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation
    log = open(base / "sshd.log", "wb")  # noqa: SIM115 - open while sshd runs
    sshd = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=log, stderr=log)
    try:
        env = dict(os.environ, GIT_SSH_COMMAND=server.ssh_command)
        for _ in range(200):  # until it answers
            probe = subprocess.run(["git", "ls-remote", server.url("testing")], env=env,
                                   capture_output=True)
            if probe.returncode == 0:
                break
            if sshd.poll() is not None:
                raise AssertionError("sshd exited: " + (base / "sshd.log").read_text())
            time.sleep(0.05)
        else:
            raise AssertionError("gitolite over sshd never answered: "
                                 + probe.stderr.decode(errors="replace"))
        yield server
    finally:
        sshd.terminate()
        sshd.wait()
        log.close()
