"""Reading a workflow: its YAML as GitHub reads it, and the `${{ }}` expressions it uses."""
from __future__ import annotations

import json
import re
from pathlib import Path


class UsageError(Exception):
    """A problem with how the dry run was asked for: one line, no traceback."""


def load_yaml(path: Path):
    """ruamel.yaml comes with check-jsonschema (the test extras); it reads `on:` as a string, as GitHub does."""
    try:
        from ruamel.yaml import YAML
        return YAML(typ="safe", pure=True).load(path.read_text())
    except ImportError:
        pass
    try:
        import yaml
    except ImportError:
        raise UsageError("needs ruamel.yaml or PyYAML: run it with .venv/bin/python (make setup)") from None
    data = yaml.safe_load(path.read_text())
    if True in data and "on" not in data:  # PyYAML reads YAML 1.1: the key `on` becomes True
        data["on"] = data.pop(True)
    return data


# --- GitHub expressions: the subset these workflows use --------------------------------------------------------
_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>\d+(?:\.\d+)?)|(?P<op>==|!=|&&|\|\||<=|>=|[!()<>,])"
                    r"|(?P<path>[A-Za-z_][\w-]*(?:\.[\w-]+|\[\d+\])*))")
_FUNCS = {"always", "success", "failure", "cancelled", "contains", "startsWith", "endsWith", "format", "fromJSON",
          "toJSON"}


class Expressions:
    """Evaluates `${{ }}` against contexts (dicts): a missing property is '' as on GitHub."""

    def __init__(self, contexts: dict, status=lambda: True):
        self.contexts = contexts
        self.status = status  # True while no earlier step (or needed job) failed

    def _get(self, path: str):
        value = self.contexts
        for part in re.findall(r"[\w-]+", path):
            if isinstance(value, dict):
                value = value.get(part, "")
            elif isinstance(value, list) and part.isdigit():
                value = value[int(part)] if int(part) < len(value) else ""
            else:
                return ""
        return value

    def evaluate(self, expr: str):
        src, pos, expr = [], 0, expr.strip()
        while pos < len(expr):
            m = _TOKEN.match(expr, pos)
            if not m or m.end() == pos:
                raise UsageError(f"cannot read the expression {expr!r} at {expr[pos:]!r}")
            pos = m.end()
            if m["str"]:
                src.append(repr(m["str"][1:-1].replace("''", "'")))
            elif m["num"]:
                src.append(m["num"])
            elif m["op"]:
                src.append({"&&": " and ", "||": " or ", "!": " not "}.get(m["op"], m["op"]))
            elif m["path"] in ("true", "false", "null"):
                src.append({"true": "True", "false": "False", "null": "None"}[m["path"]])
            elif m["path"] in _FUNCS and expr[pos:].lstrip().startswith("("):
                src.append(f"_{m['path']}")
            else:
                src.append(f"_get({m['path']!r})")
        names = {"_get": self._get, "_always": lambda: True, "_success": self.status,
                 "_failure": lambda: not self.status(), "_cancelled": lambda: False,
                 "_contains": lambda a, b: str(b).lower() in (a if isinstance(a, list) else str(a).lower()),
                 "_startsWith": lambda a, b: str(a).lower().startswith(str(b).lower()),
                 "_endsWith": lambda a, b: str(a).lower().endswith(str(b).lower()),
                 "_format": lambda f, *a: re.sub(r"\{(\d+)\}", lambda g: _text(a[int(g[1])]), f),
                 "_fromJSON": json.loads, "_toJSON": json.dumps}
        return eval("".join(src), {"__builtins__": {}}, names)  # noqa: S307 -- tokens above, nothing else

    def condition(self, expr) -> bool:
        """A step's or job's `if:`; without a status function it means `success() && (...)`, as on GitHub."""
        if expr is None:
            return self.status()
        text = str(expr).strip()
        if text.startswith("${{") and text.endswith("}}"):
            text = text[3:-2]
        if not re.search(r"\b(always|success|failure|cancelled)\s*\(", text):
            text = f"success() && ({text})"
        return bool(self.evaluate(text))

    def interpolate(self, value):
        if isinstance(value, str):
            return re.sub(r"\$\{\{(.*?)\}\}", lambda m: _text(self.evaluate(m[1])), value)
        if isinstance(value, dict):
            return {k: self.interpolate(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.interpolate(v) for v in value]
        return value


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value) if isinstance(value, (dict, list)) else str(value)
