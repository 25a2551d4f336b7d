"""Packaging: a built-in pack is one folder plus one entry-point line; its data files ship by pattern."""

import fnmatch
import tomllib
from pathlib import Path

from setuptools import find_packages

ROOT = Path(__file__).resolve().parents[1]
TOP = ("core", "plugins", "domain_packs", "emotion_pack", "tracer", "trainers", "templates")


def test_every_package_folder_is_found_and_every_asset_matches_a_package_data_pattern():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "packages" not in config  # found by setup.py, not listed by hand
    patterns = config["package-data"]["*"]
    found = set(find_packages(where=str(ROOT), include=[f"{t}*" for t in TOP]))
    folders = {str(p.parent.relative_to(ROOT)).replace("/", ".") for t in TOP for p in (ROOT / t).rglob("__init__.py")}
    assert folders == found and {"domain_packs.airline", "plugins.report", "core", "core.env"} <= found
    assert config["package-dir"] == {"tau_emotion": "."}  # every folder's import name is its path: core/env is core.env
    missed = []
    for package in found:
        here = ROOT / package.replace(".", "/")
        for path in here.rglob("*"):
            if path.is_dir() or path.suffix in (".py", ".pyc") or "__pycache__" in path.parts:
                continue
            rel = path.relative_to(here)
            inner = next((p for p in path.parents if p != here and (p / "__init__.py").is_file()
                          and p.is_relative_to(here)), None)
            if inner is not None:  # it belongs to a subpackage, checked there
                continue
            if not any(fnmatch.fnmatch(str(rel), pattern) for pattern in patterns):
                missed.append(f"{package}: {rel}")
    assert not missed, missed


def test_a_built_in_pack_needs_only_its_entry_point_line():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    points = project["entry-points"]["tau_emotion"]
    for pack in ("airline", "retail", "telecom", "telehealth", "mock"):
        assert points[pack] == f"tau_emotion.domain_packs.{pack}"
