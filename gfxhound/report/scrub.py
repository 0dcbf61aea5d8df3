"""Scrub what a draft must not carry upstream: local paths, the user's name, the host name, environment values.

Why a list of replacements and a checker: a draft is pasted into a public issue; what leaks is decided by this
machine (its home, temp dir, checkout, virtual environments), so the scrubber is built from it, and `leaks()`
lets the report command and the tests prove nothing survived. What belongs to the harness rather than to this
machine (its paths, finding ids, file names, commands, a generated repro attached) is upstream_lint.py's; a
draft's `leaks` holds both.
"""
from __future__ import annotations

import getpass
import os
import re
import socket
import tempfile
from pathlib import Path

SECRET_NAMES = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|KEY|AUTH|COOKIE|CREDENTIAL", re.I)
COMMON_USERS = {"root", "user", "runner", "ubuntu", "debian", "admin", "test"}


def _identity() -> dict:
    home = str(Path.home())
    user = os.environ.get("USER") or os.environ.get("LOGNAME") or getpass.getuser()
    return {"home": home, "user": user, "host": socket.gethostname(), "tmp": tempfile.gettempdir(),
            "cwd": os.getcwd()}


class Scrubber:
    def __init__(self, roots: dict | None = None, env: dict | None = None):
        """`roots`: {path: placeholder} for places the draft may name relatively (the corpus -> "corpus")."""
        ident = _identity()
        self.ident = ident
        self.env = dict(os.environ if env is None else env)
        pairs = [(str(Path(p).resolve()), name) for p, name in (roots or {}).items()]
        pairs += [(ident["cwd"], ".")]
        self.pairs = sorted({p: n for p, n in pairs if p not in ("/", "")}.items(), key=lambda kv: -len(kv[0]))

    def __call__(self, text: str) -> str:
        # virtual environments and installed packages: only the package path after site-packages matters
        text = re.sub(r"(?:/[^\s'\"():]+)?/(?:site|dist)-packages/", "<site-packages>/", text)
        text = re.sub(r"(?:/[^\s'\"():]+)?/\.?venv[^/\s'\"]*/bin/(python3?|gfxhound)\b", r"\1", text)
        for path, name in self.pairs:
            text = text.replace(path + "/", name + "/").replace(path, name)
        tmp = re.escape(self.ident["tmp"].rstrip("/"))
        text = re.sub(tmp + r"/[^\s'\"():]*/([^/\s'\"():]+)", r"<tmp>/\1", text)
        text = re.sub(tmp + r"/([^/\s'\"():]+)", r"<tmp>/\1", text)
        home = self.ident["home"]
        if home not in ("/", ""):
            text = text.replace(home, "~")
        for name, value in self.env.items():
            if not value or len(value) < 6:
                continue
            if SECRET_NAMES.search(name) or (len(value) >= 12 and not value.startswith(("/usr/", "/bin", "/lib"))
                                             and not re.fullmatch(r"[\w.-]+", value) and value in text):
                text = text.replace(value, f"${name}")
        user = self.ident["user"]
        if user and user not in COMMON_USERS and len(user) >= 3:
            text = re.sub(rf"\b{re.escape(user)}\b", "<user>", text)
        host = self.ident["host"]
        if host and len(host) >= 4 and host != "localhost":
            text = re.sub(rf"\b{re.escape(host)}\b", "<host>", text)
        return text

    def leaks(self, text: str) -> list:
        """What of this machine is still in `text` (empty when clean)."""
        found = []
        ident = self.ident
        checks = {"home directory": ident["home"] if ident["home"] not in ("/", "/root") else None,
                  "working directory": ident["cwd"] if ident["cwd"] != "/" else None,
                  "temp path": ident["tmp"].rstrip("/") + "/",
                  "user name": ident["user"] if ident["user"] not in COMMON_USERS else None,
                  "host name": ident["host"] if len(ident["host"]) >= 4 and ident["host"] != "localhost" else None}
        for what, value in checks.items():
            if value and re.search(rf"(?<![\w.-]){re.escape(value)}(?![\w-])", text):
                found.append(f"{what} ({value})")
        if ident["home"] == "/root" and re.search(r"(?<![\w.-])/root/", text):
            found.append("home directory (/root)")
        for path, _ in self.pairs:
            if path in text:
                found.append(f"local path ({path})")
        for name, value in self.env.items():
            if value and SECRET_NAMES.search(name) and len(value) >= 6 and value in text:
                found.append(f"environment value (${name})")
        return sorted(set(found))
