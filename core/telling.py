"""Telling: whether the agent's turns state a task's gold outputs as answers and give its refusal reasons.

The one matcher of the reward and the scripted user (`outputs_told`, `reasons_explained`; the rule with
examples is docs/scoring.md). Each assistant turn is read on its own. A gold output is told when some turn
states it as the answer: a number by value ("$1,217.00", "1217 dollars" tell 1217), a text on word boundaries,
and that statement is

- not negated: no "not", "never", "no", "nor", "neither" among the four words before it in its clause
  ("it is not 404 dollars", "it hasn't landed");
- not one candidate of a series: no figure (or rival text) besides the gold's is joined to it by nothing but
  punctuation and linking words, or stands within three words of it with an "or" between ("$352, or $368",
  "between 352 and 368", "1, 2, 3, ...", "$751.86 back, or $767.86"), nor after the same three words in the
  turn ("The refund is $351. The refund is $352.");
- not in a list: a turn that states more than four figures besides the gold's (dates, times and ids are no
  figures), holds more than twelve short fragments (a dump of values: "True; P598541; Uma; Okafor; ..."),
  or explains more than three declared refusal reasons besides the gold's, tells nothing; a text answer also fails in a turn that names
  more than one of its rivals (other values of the same field in the database or in this transcript's tool
  results: "landed" against "on time", "delayed", "cancelled").

A reason is explained by a declared phrasing (not right after "not"/"never") in a turn that is not a list;
more than four reasons besides the gold's explained over the whole transcript (list turns included) is a recital, and then no reason
counts. The gold's own outputs and reasons never count against each other, so "refund $169 and $217" tells both.
"""

from __future__ import annotations

import bisect
import json
import re
import weakref
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tau_emotion.core.models import Gold, Message

#: figures besides the gold's (or reasons besides the gold's) a turn may state and still be an answer
LIST_FIGURES = 4
#: short fragments (three words or fewer between semicolons, commas, bars and line ends) a turn may hold
LIST_FRAGMENTS = 12
LIST_REASONS = 3
#: rivals of a text answer a turn may name beside it
LIST_RIVALS = 1
#: reasons besides the gold's a whole transcript may explain before it is a recital
RECITAL_REASONS = 4
#: how far back a negator reaches, in words of the clause
NEGATION_REACH = 4
#: a series joins two values by at most this many words, all linking words
SERIES_WORDS = 3
#: two figures after the same words in one turn are candidates for one answer ("the refund is $1. the refund is $2.")
LABEL_WORDS = 3

_NEGATORS = frozenset({"not", "never", "no", "nor", "neither"})
#: words that offer a second candidate: two values this close with one between are a hedge ("$751 back, or $767")
_DISJUNCTIONS = frozenset({"or", "either", "otherwise", "alternatively", "maybe", "perhaps", "possibly", "vs", "versus"})
_REASON_NEGATORS = frozenset({"not", "never"})
_LINKS = frozenset({"and", "or", "either", "nor", "then", "also", "plus", "maybe", "perhaps", "possibly",
                    "probably", "vs", "versus", "to", "else", "otherwise", "alternatively", "between", "from",
                    "usd", "eur", "gbp", "dollar", "dollars", "euro", "euros", "pound", "pounds"})
#: words after a number that are not its unit ("924 back", "494 for two")
_NOT_UNITS = _LINKS | frozenset({
    "a", "an", "the", "is", "are", "was", "were", "be", "been", "will", "would", "for", "in", "on", "at", "of",
    "with", "by", "per", "each", "back", "total", "now", "left", "more", "less", "off", "as", "if", "so", "but",
    "which", "that", "this", "it", "you", "your", "we", "i", "has", "have", "had", "into", "over", "under",
    "after", "before", "since", "until", "all", "remaining", "instead", "only", "too", "altogether", "overall"})

_CANNOT = re.compile(r"\b(?:cannot|can't)\b")
_WONT = re.compile(r"\bwon't\b")
_NT = re.compile(r"n't\b")
#: a number as written: "494", "1,494", "494.00" (not a piece of a date, time, id or longer number)
_NUMBER = re.compile(r"(?<![\w.])(?<!\d[,/:-])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w])(?![.,/:-]\d)")
_CURRENCY = r"(?:[$\u20ac\u00a3]|usd|eur|gbp)"
_NUMERIC_OUTPUT = re.compile(
    rf"^{_CURRENCY}?\s*(\d{{1,3}}(?:,\d{{3}})+|\d+)(\.\d+)?\s*(?:usd|eur|gbp|dollars?|euros?|pounds?)?$", re.I)
_MONEY_BEFORE = re.compile(rf"{_CURRENCY}\s*$")
_MONEY_AFTER = re.compile(r"^\s*(?:usd|eur|gbp|dollars?|euros?|pounds?|cents?)\b")
_NEXT_WORD = re.compile(r"^\s*([a-z]+)")
_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|" \
         r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
#: numbers that are pieces of a date or a term ("june 19", "19 june", "june 19, 2025", "fall 2025") or of an id
#: with a hyphen ("ht-1466942"): not figures anyone is told
_NOT_FIGURES = re.compile(
    rf"\b{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+(?:19|20)\d\d)?\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\b"
    r"(?:,?\s+(?:19|20)\d\d\b)?|\b(?:fall|spring|summer|winter|autumn)\s+(?:19|20)\d\d\b|\b[a-z]+-\d+\b")
#: where a clause ends: punctuation (not inside a number or a time) and the words that turn a sentence round
_CLAUSE_END = re.compile(r"[;!?()\[\]\u2014\u2013]|[.,:](?!\d)|\b(?:but|however|instead|although|though|whereas)\b")
_WORDS = re.compile(r"[a-z]+")
#: the number of an item in a numbered list ("1. Refund: $190"), which is no figure
_ITEM_NUMBER = re.compile(r"(?m)^[ \t]*\d{1,2}[.)][ \t]+")
_ITEM_BREAK = re.compile(r"[;|\n]|,(?!\d)")
_STRONG_BREAK = re.compile(r"[;!?\n]|[.:](?!\d)")


def normalize(text: str) -> str:
    """Lower case, one space between words, negations spelt out ("can't", "cannot" -> "can not")."""
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    text = _CANNOT.sub("can not", text)
    text = _WONT.sub("will not", text)
    text = _NT.sub(" not", text)
    return " ".join(text.split())


def number_value(text: str) -> Decimal | None:
    """The value of an output that is a number or an amount ("494", "$1,130.00", "USD 50"); None for text."""
    m = _NUMERIC_OUTPUT.match(text.strip())
    return Decimal(m.group(1).replace(",", "") + (m.group(2) or "")) if m else None


def numbers_in(text: str) -> set[Decimal]:
    """Every number written in `text`, by value ("$494.00" and "494 dollars" both give 494)."""
    return {Decimal(m.group(1).replace(",", "") + (m.group(2) or "")) for m in _NUMBER.finditer(text)}


@lru_cache(maxsize=4096)
def phrase_pattern(phrase: str) -> re.Pattern[str]:
    body = re.escape(normalize(phrase.strip())).replace(r"\ ", r"[\s-]+")
    return re.compile(rf"(?<![\w])(?<!\d\.){body}(?![\w])(?!\.\d)")


@lru_cache(maxsize=4096)
def _carries_negation(phrase: str) -> bool:
    return bool(_REASON_NEGATORS & set(normalize(phrase).split()))


def phrase_said(phrase: str, said: str) -> bool:
    """`phrase` occurs in the normalized text `said` on word boundaries, not right after "not"/"never".

    A phrasing may carry its own negation ("can not be removed"), and then it counts as written.
    """
    negated_phrase = _carries_negation(phrase)
    for m in phrase_pattern(phrase).finditer(said):
        before = said[max(0, m.start() - 24): m.start()].split()  # only the last word matters
        if negated_phrase or not before or before[-1] not in _REASON_NEGATORS:
            return True
    return False


def phrasings(output: str | list[str] | tuple[str, ...]) -> list[str]:
    return [output] if isinstance(output, str) else list(output)


def output_label(output: str | list[str] | tuple[str, ...]) -> str:
    return output if isinstance(output, str) else " | ".join(output)


# ----------------------------------------------------------------------------------------------- one turn


@dataclass(frozen=True)
class Mention:
    """One value stated in a turn: a figure (`value` set) or a text (`text` set), where it stands."""

    start: int
    end: int
    negated: bool
    value: Decimal | None = None
    text: str | None = None
    kind: str = "bare"  # figures: "money", "bare" or the unit word after it ("seat" in "3 seats")
    label: tuple[str, ...] = ()  # the last words before it in its clause ("the refund is")


class Turn:
    """One assistant message, normalized, with its figures found once (the scripted user asks every step)."""

    def __init__(self, content: str):
        self._explained: dict[int, tuple[Mapping[str, Any], frozenset[str]]] = {}
        self.said = normalize(_ITEM_NUMBER.sub("- ", content))
        self.fragments = sum(1 for part in _ITEM_BREAK.split(content) if 0 < len(_WORDS.findall(part.lower())) <= 3)
        self.clause_starts = [0, *(m.end() for m in _CLAUSE_END.finditer(self.said))]
        hidden = [(m.start(), m.end()) for m in _NOT_FIGURES.finditer(self.said)]
        self.figures = [self._figure(m) for m in _NUMBER.finditer(self.said)
                        if not any(a <= m.start() < b for a, b in hidden)]

    def _before(self, start: int) -> list[str]:
        clause = self.clause_starts[bisect.bisect_right(self.clause_starts, start) - 1]
        return _WORDS.findall(self.said[clause:start])

    def negated(self, start: int) -> bool:
        return bool(_NEGATORS & set(self._before(start)[-NEGATION_REACH:]))

    def _figure(self, m: re.Match[str]) -> Mention:
        value = Decimal(m.group(1).replace(",", "") + (m.group(2) or ""))
        before, after = self.said[max(0, m.start() - 5): m.start()], self.said[m.end(): m.end() + 24]
        kind = "bare"
        if _MONEY_BEFORE.search(before) or _MONEY_AFTER.match(after):
            kind = "money"
        elif (word := _NEXT_WORD.match(after)) and word.group(1) not in _NOT_UNITS:
            kind = word.group(1).removesuffix("s")
        start = m.start() - (1 if before.endswith(("$", "\u20ac", "\u00a3")) else 0)
        words = self._before(m.start())
        return Mention(start, m.end(), bool(_NEGATORS & set(words[-NEGATION_REACH:])), value=value, kind=kind,
                       label=tuple(words[-LABEL_WORDS:]) if len(words) >= 2 else ())

    def texts(self, phrase: str) -> list[Mention]:
        return [Mention(m.start(), m.end(), self.negated(m.start()), text=normalize(phrase))
                for m in phrase_pattern(phrase).finditer(self.said)]

    def joined(self, first: Mention, second: Mention) -> bool:
        """Nothing but punctuation and at most a few linking words stand between the two (`first` comes first),
        and across a sentence or a semicolon only values of one kind join ("924; 3 days before" is two)."""
        between = self.said[first.end: second.start]
        if first.text is not None and not between.strip():
            return False  # "landed on time" is one statement, "landed, on time" two candidates
        words = [w for w in _WORDS.findall(between) if w not in (first.kind, first.kind + "s")]
        if len(words) > SERIES_WORDS or not (all(w in _LINKS for w in words) or _DISJUNCTIONS & set(words)):
            return False
        return _same_kind(first, second) or not _STRONG_BREAK.search(between)


@lru_cache(maxsize=4096)
def _turn(content: str) -> Turn:
    return Turn(content)


def _same_kind(a: Mention, b: Mention) -> bool:
    return a.kind == b.kind or {a.kind, b.kind} == {"bare", "money"}


def _compatible(a: Mention, b: Mention) -> bool:
    """A bare number may be an amount or a count of anything ("2 or 3 refills", "$352 or 368")."""
    return a.kind == b.kind or "bare" in (a.kind, b.kind)


def _series(turn: Turn, mentions: list[Mention], target: Mention) -> list[Mention]:
    """The mentions joined to `target` in a chain ("1, 2, 3 or 4"), `target` included."""
    ordered = sorted((m for m in mentions if not m.negated), key=lambda m: m.start)
    if target not in ordered:
        return []
    i = ordered.index(target)
    lo = hi = i
    while lo > 0 and turn.joined(ordered[lo - 1], ordered[lo]) and _compatible(ordered[lo - 1], ordered[lo]):
        lo -= 1
    while hi + 1 < len(ordered) and turn.joined(ordered[hi], ordered[hi + 1]) and _compatible(ordered[hi], ordered[hi + 1]):
        hi += 1
    return ordered[lo: hi + 1]


# ------------------------------------------------------------------------------------------- the answers


@dataclass(frozen=True)
class Answers:
    """What the task's gold asks to be told (never counted against itself), and the domain's reasons."""

    figures: frozenset[Decimal]
    texts: frozenset[str]
    reasons: frozenset[str]
    declared: Mapping[str, Iterable[str]]

    @classmethod
    def of(cls, gold: Gold | None, outputs: Iterable[Any], reasons: Iterable[str], declared: Mapping[str, Any]) -> Answers:
        every = [*outputs, *(gold.outputs if gold is not None else ())]
        values = [p for o in every for p in phrasings(o)]
        texts = frozenset(normalize(p) for p in values if number_value(p) is None)
        # a number inside a gold text ("CardiShield 81") is part of an answer, never a rival of a gold figure
        figures = frozenset({v for p in values if (v := number_value(p)) is not None}
                            | {n for p in values if number_value(p) is None for n in numbers_in(p)})
        return cls(figures, texts, frozenset([*reasons, *(gold.reasons if gold is not None else ())]), declared)

    def explained(self, turn: Turn) -> frozenset[str]:
        """The declared reasons the turn explains, found once per turn and declaration (the entry holds the
        declaration, so its id is not reused while the entry lives)."""
        found = turn._explained.get(id(self.declared))
        if found is None or found[0] is not self.declared:
            said = turn.said
            reasons = frozenset(r for r, ps in self.declared.items() if any(phrase_said(p, said) for p in ps))
            found = turn._explained[id(self.declared)] = (self.declared, reasons)
        return found[1]

    def is_list(self, turn: Turn) -> bool:
        """The turn lists instead of answering: many figures, or many reasons, besides the gold's."""
        others = {f.value for f in turn.figures if not f.negated and f.value not in self.figures}
        return (len(others) > LIST_FIGURES or turn.fragments > LIST_FRAGMENTS
                or len(self.explained(turn) - self.reasons) > LIST_REASONS)

    def figure_told(self, turn: Turn, value: Decimal) -> bool:
        for figure in turn.figures:
            if figure.value == value and not figure.negated:
                series = _series(turn, turn.figures, figure)
                same_words = figure.label and any(
                    f.label == figure.label and f.value not in self.figures and not f.negated and _compatible(f, figure)
                    for f in turn.figures)
                if not same_words and all(f.value in self.figures for f in series):
                    return True
        return False

    def text_told(self, turn: Turn, phrase: str, rivals: Iterable[str]) -> bool:
        own = [m for m in turn.texts(phrase) if not m.negated]
        if not own:
            return False
        named = [m for r in rivals if normalize(r) not in self.texts for m in turn.texts(r) if not m.negated]
        if len({m.text for m in named}) > LIST_RIVALS:
            return False
        return any(all(m.text in self.texts for m in _series(turn, [*own, *named], mention)) for mention in own)


# ---------------------------------------------------------------------------------------- text rivals

_vocabularies: weakref.WeakKeyDictionary[Any, dict[str, frozenset[str]]] = weakref.WeakKeyDictionary()
#: a field is categorical (its values rival one another) when it has at most this many distinct texts
CATEGORICAL = 64


def _string_leaves(value: Any, key: str | None, into: dict[str, set[str]], cap: int | None = None) -> None:
    """Short texts without digits under each field name; a field past `cap` distinct texts stops collecting."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            _string_leaves(v, k, into, cap)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _string_leaves(v, key, into, cap)
    elif isinstance(value, str) and key is not None and len(value) <= 48:
        found = into[key]
        if (cap is None or len(found) <= cap) and value not in found and not any(c.isdigit() for c in value):
            found.add(value)


def _rivals(fields: dict[str, set[str]], cap: int | None) -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for raw in fields.values():
        values = {normalize(v) for v in raw}
        if 2 <= len(values) and (cap is None or len(raw) <= cap):
            for v in values:
                out[v] |= values
    return {k: frozenset(v) for k, v in out.items()}


def vocabulary(tables: Mapping[str, Mapping[str, Any]]) -> dict[str, frozenset[str]]:
    """Text -> every value of the categorical fields it is a value of ("landed" -> the flight statuses)."""
    fields: dict[str, set[str]] = defaultdict(set)
    for table in tables.values():
        for row in table.values():
            _string_leaves(row, None, fields, CATEGORICAL)
    return _rivals(fields, CATEGORICAL)


def domain_vocabulary(domain: Any, tables: Mapping[str, Mapping[str, Any]] | None) -> dict[str, frozenset[str]]:
    """The vocabulary of the domain's database (`domain.database`, else `tables`: a read-only state view), made
    once per domain."""
    database = getattr(domain, "database", None)
    key = database if database is not None else domain
    try:
        found = _vocabularies.get(key)
    except TypeError:  # not weakly referenceable: made each time
        found = None
    if found is None:
        source = database.tables if database is not None else tables
        if source is None:
            return {}
        found = vocabulary(source)
        try:
            _vocabularies[key] = found
        except TypeError:
            pass
    return found


def transcript_vocabulary(messages: list[Message]) -> dict[str, frozenset[str]]:
    """The same, from the tool results of this transcript (a field no database row holds: a diagnostic's result)."""
    fields: dict[str, set[str]] = defaultdict(set)
    for m in messages:
        if m.role == "tool" and m.content and m.content[:1] in "{[":
            try:
                _string_leaves(json.loads(m.content), None, fields)
            except ValueError:
                continue
    return _rivals(fields, None)


# ------------------------------------------------------------------------------------------------- API


def _turns(messages: list[Message]) -> list[Turn]:
    return [_turn(m.content) for m in messages if m.role == "assistant" and m.content]


def outputs_told(outputs: list[str | list[str]], messages: list[Message], *, gold: Gold | None = None,
                 domain: Any = None, tables: Mapping[str, Mapping[str, Any]] | None = None,
                 ) -> tuple[list[str], list[str]]:
    """(told, not told) labels of `outputs`, read from the assistant turns of `messages`.

    `gold` is the task's whole gold (outputs and reasons of other parts are no rivals: the scripted user asks
    about one intent's outputs at a time); `domain` (a `Domain` or the view's) gives the declared reasons and,
    with `tables` where it has no database, the rivals of text answers.
    """
    declared = getattr(domain, "refusal_reasons", None) or {}
    answers = Answers.of(gold, outputs, (), declared)
    turns = [t for t in _turns(messages) if not answers.is_list(t)]
    vocabularies: list[dict[str, frozenset[str]]] | None = None
    found: list[str] = []
    for output in outputs:
        told = False
        for phrasing in phrasings(output):
            value = number_value(phrasing)
            if value is not None:
                told = any(answers.figure_told(t, value) for t in turns)
            elif turns and any(t.texts(phrasing) for t in turns):
                if vocabularies is None:
                    vocabularies = [transcript_vocabulary(messages), domain_vocabulary(domain, tables)]
                key = normalize(phrasing)
                rivals = frozenset().union(*(v.get(key, frozenset()) for v in vocabularies))
                told = any(answers.text_told(t, phrasing, rivals) for t in turns)
            if told:
                break
        if told:
            found.append(output_label(output))
    return found, [output_label(o) for o in outputs if output_label(o) not in found]


def reasons_explained(domain: Any, reasons: list[str], messages: list[Message], *, gold: Gold | None = None,
                      ) -> tuple[list[str], list[str]]:
    """(explained, not explained) of `reasons`: a declared phrasing in a turn that is not a list, in a
    transcript that does not recite the domain's reasons."""
    declared = domain.refusal_reasons
    answers = Answers.of(gold, (), reasons, declared)
    explained: set[str] = set()
    recited: set[str] = set()  # list turns recite too
    for turn in _turns(messages):
        recited.update(answers.explained(turn))
        if not answers.is_list(turn):
            explained.update(answers.explained(turn))
    # a recital: more unrelated reasons than any refusal needs, or every reason the domain declares beside the task's
    # own (a pack of six, a task of two: the other four are no explanation either)
    if len(recited - answers.reasons) > RECITAL_REASONS or (
            len(declared) > len(answers.reasons) + 1 and set(declared) <= recited):
        explained = set()
    found = [r for r in reasons if r in explained]
    return found, [r for r in reasons if r not in found]
