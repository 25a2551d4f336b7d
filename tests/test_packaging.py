"""The wheel must contain every package folder and the data the packs read."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_python_folder_is_a_listed_package():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    setuptools = config["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    mapping = setuptools["package-dir"]
    found = set()
    mapped = {(ROOT / folder).resolve() for folder in mapping.values()}
    for namespace, folder in mapping.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            if "__pycache__" in rel.parts:
                continue
            # a folder mapped to a name of its own (core/env is tau_emotion.env) belongs to that name only
            if any((ROOT / folder / Path(*rel.parts[:i])).resolve() in mapped for i in range(1, len(rel.parts) + 1)):
                continue
            found.add(".".join([namespace, *rel.parts]) if rel.parts else namespace)
    assert found - listed == set(), f"folders missing from [tool.setuptools] packages: {sorted(found - listed)}"
    assert listed - found == set(), f"listed packages without a folder: {sorted(listed - found)}"


def test_package_data_covers_data_folders():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    data = config["tool"]["setuptools"]["package-data"]
    for package in config["tool"]["setuptools"]["packages"]:
        namespace = next(ns for ns in sorted(config["tool"]["setuptools"]["package-dir"], key=len, reverse=True)
                         if package == ns or package.startswith(ns + "."))
        folder = ROOT / config["tool"]["setuptools"]["package-dir"][namespace] / Path(*package[len(namespace):].split(".")[1:])
        if (folder / "data").is_dir():
            assert "data/*" in data.get(package, []), f"{package}/data is not package data"
