"""Package discovery: every folder with an `__init__.py` under the top-level folders is a package, named
`tau_emotion.<folder path>` (so `core/env/` is `tau_emotion.core.env`; pyproject.toml holds everything else). A built-in
pack is its folder plus one entry-point line; its data files are found by the patterns in `[tool.setuptools.package-data]`."""

from setuptools import find_packages, setup

TOP = ("core", "plugins", "domain_packs", "emotion_pack", "tracer", "trainers", "templates")

setup(packages=[f"tau_emotion.{name}" for name in find_packages(include=[f"{top}*" for top in TOP])])
