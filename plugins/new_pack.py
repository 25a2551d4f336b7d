"""The `new_pack` plugin: `tau new-pack NAME [--dir D]` writes a pip-installable third-party domain pack.

The pack is rendered from the Jinja2 templates in `tau_emotion.templates/new_pack/` (`package/`
becomes `tau_emotion_NAME/`, `.j2` is dropped), then its seeded generator writes `data/db.json`,
so the hand-written tasks, the policy and the database agree from the start and `pytest` in the new
folder runs the conformance suite (`tau_emotion.domain_packs.conformance`) against it. The pack is written
into a temporary folder beside its target and renamed into place at the end (`outputs.new_folder`), so a
kill or a full disk never leaves half a pack under the name.
"""

from __future__ import annotations

import json
import keyword
import runpy
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

import click

from tau_emotion.core import hookimpl
from tau_emotion.core.errors import TauError
from tau_emotion.core.outputs import new_folder
from tau_emotion.core.plugin_cli import debug_option, guarded

TEMPLATES = "new_pack"


class NewPackError(TauError):
    """The pack cannot be written (a bad name, an existing folder)."""


def check_name(name: str) -> None:
    """A pack name is a lower-case Python identifier (it becomes the module `tau_emotion_NAME`)."""
    if not name.isidentifier() or keyword.iskeyword(name) or name != name.lower() or name.startswith("_"):
        raise NewPackError(f"pack name '{name}' must be a lower-case Python identifier, e.g. 'acme' or 'my_shop'")


def _templates(root: Traversable, prefix: str = "") -> list[tuple[str, Traversable]]:
    out = []
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        rel = f"{prefix}{entry.name}"
        if entry.is_dir():
            if entry.name != "__pycache__":
                out += _templates(entry, rel + "/")
        elif entry.name.endswith(".j2"):
            out.append((rel, entry))
    return out


def render_pack(name: str, directory: Path) -> Path:
    """Write the pack `name` into `directory/name` and return that folder."""
    import jinja2

    check_name(name)
    target = directory / name
    if target.exists():
        raise NewPackError(f"{target} already exists: choose another --dir or remove it")
    module = f"tau_emotion_{name}"
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)
    rendered = {}
    for rel, entry in _templates(files("tau_emotion.templates").joinpath(TEMPLATES)):
        path = rel.removesuffix(".j2")
        path = module + path[len("package"):] if path.startswith("package/") else path
        rendered[path] = env.from_string(entry.read_text(encoding="utf-8")).render(name=name, module=module)
    with new_folder(target) as building:  # renamed to `target` only once every file is there
        for path, text in rendered.items():
            out = building / path
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8")
        db = runpy.run_path(str(building / module / "generate_db.py"))["generate"](0)
        (building / module / "data" / "db.json").write_text(json.dumps(db, indent=1) + "\n", encoding="utf-8")
    return target


@click.command("new-pack")
@click.argument("name")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="Folder to create the pack in (as DIR/NAME).")
@debug_option
@guarded
def new_pack_command(name: str, directory: Path) -> None:
    """Write a pip-installable domain pack NAME: tools, seeded database, policy, tasks, Tracer hints, tests."""
    target = render_pack(name, directory)
    click.echo(f"wrote the {name} pack to {target}; next:\n"
               f"  pip install -e {target}\n"
               f"  pytest {target}\n"
               f"  tau run --plugins {name} --split hand --agent oracle --user scripted --trials 1\n"
               f"  tau tracer build {name} --split test --n 10 --min-calls 2   (docs/writing-a-pack.md)")


@hookimpl
def tau_register_commands(cli: click.Group) -> None:
    cli.add_command(new_pack_command)
