"""Shared Jinja2 templates (prompts), read with importlib.resources."""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from typing import Any


@cache
def _environment() -> Any:
    import jinja2

    return jinja2.Environment(loader=jinja2.FunctionLoader(
        lambda name: files(__name__).joinpath(name).read_text(encoding="utf-8")),
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)


def render(name: str, **values: Any) -> str:
    return _environment().get_template(name).render(**values)
