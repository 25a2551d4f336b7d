"""The core reads no plugin's options: a plugin's option group is read by that plugin (and role groups
through `core.roles`), so nothing in core names a group by a string literal."""

import ast
from pathlib import Path

from tau_emotion.core.manager import get_plugin_manager

CORE = Path(__file__).resolve().parents[2] / "core"


def option_reads(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, key) of every `X.options["key"]`, `X.options.get("key")`, `X.options.setdefault("key")` and
    `X.options_for("key", ...)` whose key is a string literal."""
    found = []
    for node in ast.walk(tree):
        key = None
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "options":
            key = node.slice
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            target = node.func
            if target.attr == "options_for" or (target.attr in ("get", "setdefault", "pop")
                                                and isinstance(target.value, ast.Attribute)
                                                and target.value.attr == "options"):
                key = node.args[0]
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            found.append((node.lineno, key.value))
    return found


def test_core_names_no_option_group():
    groups = set(get_plugin_manager().catalog("options").names())
    assert {"model_calls", "progress", "serve", "agent", "user"} <= groups
    offences = [f"core/{path.name}:{line} reads options['{key}']" for path in sorted(CORE.glob("*.py"))
                for line, key in option_reads(ast.parse(path.read_text(encoding="utf-8")))]
    assert not offences, offences


def test_the_scan_finds_each_form_of_read():
    code = ('a = config.options["litellm"]\nb = run.config.options.get("serve", {})\n'
            'c = config.options_for("progress", M)\nd = config.options.setdefault("tool_calling", {})\n'
            'e = config.options.get(group)\n')
    assert [key for _, key in option_reads(ast.parse(code))] == ["litellm", "serve", "progress", "tool_calling"]
