"""Where a value can come from: what the user knows, what the policy says, what a tool returned.

A `Knowledge` holds every value an ideal agent could have at some point of a trajectory: the
user's `known` facts (told when asked), numbers written in the policy, and every leaf of every
tool result so far (dict keys and list lengths included). Each value keeps its first source, and
whether that source was one of several alternatives (an element of a list of results, an id in a
list of ids, an entry of a keyed map), which is how a hidden choice is told apart from a lookup.

Values are compared normalised: numbers by value ("44" == 44 == 44.0), text case-insensitively with
underscores read as spaces ("one_way" == "One way"). An arithmetic expression is derivable when
every number in it is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
_NUMBERS = re.compile(r"\d+(?:\.\d+)?")
_EXPRESSION = re.compile(r"^[\d\s.,+\-*/()]+$")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-]*[A-Za-z0-9]|[A-Za-z0-9]")


def norm(value: Any) -> tuple[str, Any] | None:
    """A comparable key for a scalar, or None for values that say nothing (None, empty text)."""
    if isinstance(value, str):
        return _norm_text(value)
    if value is None or isinstance(value, (dict, list)):
        return None
    if isinstance(value, bool):
        return ("s", str(value).lower())
    if isinstance(value, (int, float)):
        return ("n", round(float(value), 2))
    return _norm_text(str(value))


@lru_cache(maxsize=1 << 16)
def _norm_text(value: str) -> tuple[str, Any] | None:
    text = value.strip()
    if not text:
        return None
    plain = text.replace(",", "") if re.fullmatch(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?", text) else text
    if _NUMBER.match(plain):
        return ("n", round(float(plain), 2))
    return ("s", text.lower().replace("_", " "))


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(path, scalar) for every scalar inside a JSON-like value."""
    if isinstance(value, dict):
        for key, v in value.items():
            yield from leaves(v, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from leaves(v, f"{path}[{i}]")
    else:
        yield path, value


def parse_result(text: str) -> Any:
    """A tool's result text as JSON when it is JSON, else the text itself."""
    if text[:1] in "[{":
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text
    return text


@dataclass(frozen=True)
class Source:
    """The first place a value was seen."""

    kind: str  # "known" | "policy" | "result" | "derived"
    step: int = -1  # index of the gold step whose result held it
    path: str = ""
    alternatives: int = 0  # > 1 when it was one of that many alternatives
    record: str = ""  # the path of the alternative it belongs to (picking that one settles its fields)

    def describe(self, tools: list[str] | None = None) -> str:
        if self.kind == "result":
            name = tools[self.step] if tools and 0 <= self.step < len(tools) else f"step {self.step}"
            return f"{name} result {self.path}"
        return f"{self.kind} {self.path}".strip()


def _is_keyed_map(value: dict[str, Any]) -> bool:
    return len(value) >= 2 and all(isinstance(v, dict) for v in value.values())


class Knowledge:
    """Values an agent can have, with their first source."""

    def __init__(self) -> None:
        self.sources: dict[tuple[str, Any], Source] = {}
        #: every value some tool result held, whatever its first source (a figure the policy also writes)
        self.results: set[tuple[str, Any]] = set()

    def __contains__(self, value: Any) -> bool:
        key = norm(value)
        return key is not None and key in self.sources

    def source(self, value: Any) -> Source | None:
        key = norm(value)
        return None if key is None else self.sources.get(key)

    def _add(self, value: Any, source: Source) -> None:
        key = norm(value)
        if key is None:
            return
        old = self.sources.get(key)
        # a later source settles a value first seen among alternatives (a list of ids, then that record)
        if old is None or (old.alternatives >= 2 and source.alternatives < 2):
            self.sources[key] = source

    def gains(self, result: Any, wanted: set[tuple[str, Any]], unread: set[tuple[str, Any]] = frozenset()) -> bool:
        """Whether `result` would bring a wanted value that is missing, or settle one seen only among alternatives,
        or show one of `unread` that no result showed yet (a figure the user asks for, known only from the policy)."""
        probe = Knowledge()
        probe.add_result(0, result)
        return self._gains(((k, s.alternatives) for k, s in probe.sources.items()), wanted, unread)

    def gains_text(self, text: str, wanted: set[tuple[str, Any]], unread: set[tuple[str, Any]] = frozenset()) -> bool:
        """`gains` of a tool's result text (`parse_result(text)`), from its cached walk (`result_entries`)."""
        return self._gains(((k, alt) for k, _, alt, _ in result_entries(text)), wanted, unread)

    def _gains(self, found: Iterator[tuple[tuple[str, Any], int]], wanted: set[tuple[str, Any]],
               unread: set[tuple[str, Any]]) -> bool:
        for key, alternatives in found:
            if key in unread and key not in self.results:
                return True
            if key in wanted:
                old = self.sources.get(key)
                if old is None or (old.alternatives >= 2 and alternatives < 2):
                    return True
        return False

    def keys_of(self, value: Any) -> set[tuple[str, Any]]:
        probe = Knowledge()
        probe.add_result(0, value)
        return set(probe.sources)

    def keys_of_text(self, text: str) -> set[tuple[str, Any]]:
        """`keys_of` a tool's result text, from its cached walk."""
        return {k for k, _, _, _ in result_entries(text)}

    def add_known(self, known: dict[str, Any]) -> None:
        """The user's facts: whole values and the words inside text values ("Denver (DEN)" gives "DEN")."""
        for key, value in known.items():
            for path, leaf in leaves(value, key):
                self._add(leaf, Source("known", path=path))
                if isinstance(leaf, str):
                    for token in _TOKEN.findall(leaf):
                        self._add(token, Source("known", path=path))

    def add_policy(self, policy: str) -> None:
        for number in _NUMBERS.findall(policy):
            self._add(number, Source("policy"))

    def add_derived(self, values: list[Any], note: str = "policy") -> None:
        for value in values:
            self._add(value, Source("derived", path=note))

    def add_result(self, step: int, result: Any, arguments: dict[str, Any] | None = None) -> None:
        """Add a call's result; values that merely echo the call's own arguments settle no choice."""
        echo = {k for _, v in leaves(arguments or {}) if (k := norm(v)) is not None}
        before = {k: self.sources[k] for k in echo if k in self.sources}
        self._walk(step, result, "", top=True, alternatives=0)
        self.sources.update(before)

    def add_result_text(self, step: int, text: str, arguments: dict[str, Any] | None = None) -> None:
        """`add_result(step, parse_result(text), arguments)`, from the text's cached walk (`result_entries`): the
        same sources, since a value's first source in one walk is the one it would keep in any knowledge."""
        echo = {k for _, v in leaves(arguments or {}) if (k := norm(v)) is not None}
        sources = self.sources
        before = {k: sources[k] for k in echo if k in sources}
        for key, path, alternatives, record in result_entries(text):
            old = sources.get(key)
            if old is None or (old.alternatives >= 2 and alternatives < 2):
                sources[key] = Source("result", step, path, alternatives, record)
        sources.update(before)
        self.results |= result_values(text)

    def _walk(self, step: int, value: Any, path: str, *, top: bool, alternatives: int, record: str = "") -> None:
        if isinstance(value, dict):
            keyed = _is_keyed_map(value)
            for key, v in value.items():
                here = f"{path}.{key}" if path else str(key)
                alt, rec = (len(value), here) if keyed else (alternatives, record)
                self._add(key, Source("result", step, here, alt, rec))
                self._walk(step, v, here, top=False, alternatives=alt, record=rec)
        elif isinstance(value, list):
            self._add(len(value), Source("result", step, f"{path}#len"))
            scalars = all(not isinstance(v, (dict, list)) for v in value)
            choice = len(value) >= 2 and (top or scalars)
            for i, v in enumerate(value):
                here = f"{path}[{i}]"
                self._walk(step, v, here, top=False, alternatives=len(value) if choice else alternatives,
                           record=here if choice else record)
        else:
            self._add(value, Source("result", step, path, alternatives, record))
            if (key := norm(value)) is not None:
                self.results.add(key)

    def derivable(self, value: Any) -> bool:
        """Known, or an arithmetic expression over known numbers."""
        if value in self:
            return True
        if isinstance(value, str) and _EXPRESSION.match(value) and re.search(r"[+\-*/]", value.strip()[1:] or "x"):
            return all(n in self for n in _NUMBERS.findall(value.replace(",", "")))
        return False

    def missing(self, arguments: dict[str, Any], skip: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
        """(path, value) of every argument leaf that is not derivable."""
        return [(path, v) for path, v in leaves(arguments)
                if norm(v) is not None and path.split(".")[0].split("[")[0] not in skip and not self.derivable(v)]

    def copy(self) -> Knowledge:
        other = Knowledge()
        other.sources = dict(self.sources)
        other.results = set(self.results)
        return other


def result_entries(text: str) -> tuple[tuple[tuple[str, Any], str, int, str], ...]:
    """A tool result text's values as `Knowledge.add_result` walks them: (key, path, alternatives, record) of each
    value's source in a knowledge that starts empty, in walk order. The same call on the same state returns the
    same text, so a build walks each distinct result once however often candidates meet it: applying these with
    `Knowledge._add`'s rule gives what walking the result again would (a value keeps its first source unless a
    later one settles it, and in one walk that later one is the entry kept here)."""
    return _walked(text)[0]


def result_values(text: str) -> frozenset[tuple[str, Any]]:
    """The values a tool result text shows as values (`Knowledge.results`: not the lengths of its lists)."""
    return _walked(text)[1]


@lru_cache(maxsize=1 << 13)
def _walked(text: str) -> tuple[tuple[tuple[tuple[str, Any], str, int, str], ...], frozenset[tuple[str, Any]]]:
    probe = Knowledge()
    probe._walk(0, parse_result(text), "", top=True, alternatives=0)
    return (tuple((key, src.path, src.alternatives, src.record) for key, src in probe.sources.items()),
            frozenset(probe.results))


def phrase_in(text: str, haystack: str) -> bool:
    """`text` occurs in `haystack` on word boundaries, case-insensitively."""
    body = re.escape(text.strip().lower())
    return bool(body) and re.search(rf"(?<![\w]){body}(?![\w])", haystack.lower()) is not None
