"""Reverse refinement: from a grounded trajectory to what the simulated user says and knows.

The default `TemplateRefiner` renders Jinja2 templates of this package (`user_line.j2`,
`instruction.j2`, `handoff_line.j2`) around the pack's phrases: each intent becomes one first-person
line for the user (context, request, preferences, questions, in one of several phrasings chosen by
the seeded rng) and one part of a second-person instruction, followed by the facts the user can give.
Pack phrases are small templates using `{{my}}`, `{{me}}`, `{{I}}`, `{{am}}`, `{{have}}`, rendered in
the first person for the user's lines and in the second person for the instruction.

`LLMRefiner` asks a model (through litellm) to rewrite the template's output in the same schema
(`instruction`, `known`, `intents`); a rewrite that drops a fact or an intent is rejected (`refine`).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any

import jinja2

from tau_emotion.core.facts import is_plural_key, plural_key, singular
from tau_emotion.tracer.decisions import rule_text
from tau_emotion.tracer.grounders import join_and, month_day
from tau_emotion.tracer.hints import TracerHints, load_hints
from tau_emotion.tracer.provenance import leaves, norm, parse_result

if TYPE_CHECKING:
    import random

    from tau_emotion.core.domain import Domain
    from tau_emotion.tracer.grounding import Candidate
    from tau_emotion.tracer.hints import IntentDraft

FIRST = {"my": "my", "me": "me", "I": "I", "am": "am", "have": "have", "agent": "you"}
SECOND = {"my": "your", "me": "you", "I": "you", "am": "are", "have": "have", "agent": "the agent"}
_SIMPLE = re.compile(r"\{\{\s*(\w+)\s*\}\}")
IDENTITY_SKIP = ("first_name", "last_name", "name", "full_name")


def identity_phrase(key: str, value: Any) -> str:
    """How the opening sentence gives an identifying fact: 'phone number 774-555-9025'; a relative's first name
    ('child_first_name') as 'your child Kira', not 'child first name Kira'."""
    if key.endswith("_first_name"):
        return f"your {key[: -len('_first_name')].replace('_', ' ')} {value}"
    return f"{key.replace('_', ' ')} {value}"


def capfirst(text: str) -> str:
    return text[:1].upper() + text[1:]


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(lambda name: files(__package__).joinpath(name).read_text(encoding="utf-8")),
        undefined=jinja2.StrictUndefined, autoescape=False, trim_blocks=True, lstrip_blocks=True)
    env.filters["capfirst"] = capfirst
    env.filters["join_and"] = join_and
    return env


def say(text: str | None, person: dict[str, str]) -> str:
    """Render a pack phrase for one grammatical person (plain `{{var}}` phrases skip the template engine)."""
    if not text:
        return ""
    if "{%" not in text and "{#" not in text:
        try:
            return _SIMPLE.sub(lambda m: person[m.group(1)], text)
        except KeyError:
            pass
    return environment().from_string(text).render(**person)


def render(template: str, **variables: Any) -> str:
    text = environment().get_template(template).render(**variables)
    return re.sub(r"[ \t]+", " ", text).strip()


def describe_value(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k.replace('_', ' ')} {describe_value(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(describe_value(v) for v in value)
    return str(value)


def intent_fact_keys(cand: Candidate, draft: IntentDraft) -> list[str]:
    """The keys of `cand.known` that hold this intent's facts (a key two intents disagree on is plural)."""
    keys = []
    for key in draft.facts:
        for k in (key, plural_key(key)):
            if k in cand.known and k not in keys:
                keys.append(k)
                break
    return keys


def own_fact(draft: IntentDraft, known_key: str) -> tuple[str, Any]:
    """(key, value) of this intent's own fact behind `known_key` (the singular key when several intents' values
    were merged into a plural one)."""
    for key, value in draft.facts.items():
        if known_key in (key, plural_key(key)):
            return key, value
    raise KeyError(known_key)


def fact_phrase(key: str, value: Any) -> str:
    """'reservation_id', '7HEXVD' -> 'the reservation id is 7HEXVD' (facts said as a person says them)."""
    verb = "are" if isinstance(value, list) or is_plural_key(key) else "is"
    return f"{'your' if key.endswith(('_name', '_reason')) else 'the'} {key.replace('_', ' ')} {verb} {describe_value(value)}"


_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
#: a value said in words: letters and spaces, 4 or more, some lower case (not a code, id or yes/no)
_WORDS = re.compile(r"^(?=.*[a-z])(?!(?:yes|no|none|true|false)$)[A-Za-z][A-Za-z _'-]{3,}$")
_WISH = re.compile(r"^(?:you|i) (?:want|prefer|would like|need|would rather)(?: to)? ")
_DETERMINERS = re.compile(r"^(?:you |your |the |a |an |my |no )+", re.I)


def surfaces(value: Any) -> list[str]:
    """How a value may be said in a sentence ('2024-05-19' -> [..., 'May 19'], 'in_person' -> [..., 'in-person'])."""
    text = str(value)
    out = [text, text.replace("_", "-"), text.replace("_", " "), text.replace(" ", "-")]
    if _ISO_DATE.match(text):
        out.append(month_day(text))
    return out


_MONEY_KEY = re.compile(r"amount|price|fee|cost|total|refund|balance|limit|charge|credit|payment")


def money_forms(value: Any) -> list[str]:
    """'$75', '$75.00' for 75 (an amount the request says with its dollar sign)."""
    try:
        number = float(str(value).replace(",", ""))
    except ValueError:
        return []
    if number <= 0:
        return []
    out = [f"${number:,.2f}", f"${number:.2f}"]
    if number == int(number):
        out += [f"${int(number):,}", f"${int(number)}"]
    return out


def _said_in(form: str, lowered: str) -> bool:
    form = form.lower()
    lowered = re.sub(r"(?<=\d),(?=\d{3}\b)", "", lowered)  # '6,500 points' says 6500
    if form.startswith("$"):  # an amount: '$75' is not said by '$750' or '$75.50'
        return re.search(rf"{re.escape(form)}(?![\d]|[.,]\d)", lowered) is not None
    if form.isdigit():  # a count or number said on its own ("5 in total")
        return re.search(rf"(?<![\w$.,]){form}(?![\w]|[.,]\d)", lowered) is not None
    if re.fullmatch(r"[a-z][a-z ]+", form) and all(len(w) >= 6 for w in form.split()):
        # 'physical therapy' is said by 'a physical therapist', 'psychiatry' by '(psychiatrist)'
        return all(re.search(rf"\b{w[:6]}", lowered) for w in form.split())
    return len(form) >= 3 and form not in ("yes", "no", "none", "true", "false") and form in lowered


def already_said(key: str, value: Any, phrase: str, text: str) -> bool:
    """Whether `text` (the request's own words) already says this fact, so the instruction need not say it again:
    the fact's wording (or its clause after 'because' / 'that') appears, or every value in it does (parts too
    short to tell, 'VT', are left aside; a fact made only of such parts, 'no', never counts as said)."""
    lowered = text.lower()
    body = phrase.strip().lower()
    clauses = [body] + [body.split(sep, 1)[1] for sep in (" because ", " is that ") if sep in body]
    # a wish the request already says ("... with express delivery", "a transcript of your record, sent by email"):
    # "you want express delivery", "you want the transcript sent by email" would restate it
    wishes = [_WISH.sub("", c) for c in clauses if _WISH.match(c)]
    if any(len(c) >= 8 and c in lowered for c in (_DETERMINERS.sub("", c).rstrip(".") for c in clauses + wishes)):
        return True
    words = set(re.findall(r"[a-z]+", lowered))
    if any(len(w := {x for x in re.findall(r"[a-z]+", c) if len(x) >= 4}) >= 2 and w <= words for c in wishes):
        return True
    values = [v for _, v in leaves({"v": value})] if isinstance(value, (dict, list)) else [value]
    usable = [v for v in values if str(v).isdigit() or len(str(v)) >= 3]
    if not usable or any(str(v).lower() in ("yes", "no", "none", "true", "false") for v in usable):
        return False
    money = bool(_MONEY_KEY.search(key))  # an amount is said with its dollar sign: 'send $75' says amount 75
    return all(any(_said_in(f, lowered) for f in [*surfaces(v), *(money_forms(v) if money else [])]) for v in usable)


def ask_in_request(ask: str, request: str) -> bool:
    """'the copay' is already asked by 'know my copay for seeing Dr. Park', 'the diagnosis' by 'learn what Dr. Adler
    diagnosed' (each longer word of the ask, by its first six letters)."""
    body = _DETERMINERS.sub("", ask.strip().lower())
    lowered = request.lower()
    if len(body) >= 4 and body in lowered:
        return True
    words = re.findall(r"[a-z]+", body)
    return bool(words) and all(len(w) >= 5 for w in words) and all(re.search(rf"\b{w[:6]}", lowered) for w in words)


def _arg_leaves(value: Any, name: str = "") -> list[tuple[str, Any]]:
    """(argument name, scalar) pairs of a call's arguments, nested ones under their own name ('dob', 'date')."""
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _arg_leaves(v, k)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _arg_leaves(v, name)]
    return [(name, value)] if name else []


def answer_parts(cand: Candidate, known: dict[str, Any], groups: list[list[str]],
                 texts: list[str] | None = None) -> tuple[dict[str, Any], list[list[str]]]:
    """The parts of the user's words an agent may ask for that no known fact holds, as keys of their own, and which
    request owns each.

    A date or a word a call of the request takes that the request's own words (`texts[i]`) say ('your trip on May 19'
    for a `date` of 2024-05-19, 'your stay on the Florence city break' for a hotel search's `city`) is known under the
    argument's name, unless one of the request's facts already holds that value: a field of an address, an item of a
    merged list, a fact under another name (`travel_date`) would then be one fact under two keys; the plan's `answers`
    tie that fact to the argument, so the user answers "which city?" or "the date?" from it. A part two requests give
    different values is known under its plural (`dates`: both), owned by both; the scripted user answers each request
    with its own (the one its words or calls name).
    Returns the new keys with their values and, per request, the keys it owns.
    """
    said: dict[str, dict[int, Any]] = {}  # part -> request -> its value
    torn: set[str] = set()  # parts one request gives two values (two dates its words say): left out
    held = [{norm(v) for k in group for _, v in leaves({k: known.get(k)}) if norm(v) is not None} for group in groups]

    def add(i: int, key: str, value: Any) -> None:
        if key in known or norm(value) in held[i]:
            return
        mine = said.setdefault(key, {})
        if i in mine and mine[i] != value:
            torn.add(key)
        mine.setdefault(i, value)

    for i in range(len(groups)):
        if texts is None:
            continue
        lowered = texts[i].lower()
        for step in cand.steps:
            if step.intent != i:
                continue
            for name, v in _arg_leaves(step.arguments):
                # dates and words ('Florence' for a hotel search's city): not codes or ids (a leg's airport
                # code, 'JFK', is not the trip's origin or destination even where 'New York JFK' is said)
                if name.endswith("_id") or not isinstance(v, str) or not (_ISO_DATE.match(v) or _WORDS.match(v)):
                    continue
                if any(_said_in(f, lowered) for f in surfaces(v)):
                    add(i, name, v)
    parts: dict[str, Any] = {}
    owners: list[list[str]] = [[] for _ in cand.drafts]
    for key, by_request in said.items():
        if key in torn:
            continue
        values = list(dict.fromkeys(json.dumps(v, sort_keys=True, default=str) for v in by_request.values()))
        if len(values) > 1:
            # two requests, two values: known together under the plural ('dates'), each request owning it; the
            # scripted user answers a request with the value its own words or calls name, never the other's
            plural = plural_key(key)
            if plural != key and (plural in known or plural in said or plural in parts):
                continue
            key = plural
            parts[key] = [json.loads(v) for v in values]
        else:
            parts[key] = next(iter(by_request.values()))
        for i in by_request:
            owners[i].append(key)
    return parts, owners


_FILLER = frozenset({"the", "a", "an", "my", "your", "his", "her", "their"})


def _key_words(key: str) -> set[str]:
    return {singular(w) for w in key.lower().split("_") if w and w not in _FILLER}


def _said_words(value: Any) -> set[str]:
    return {singular(w) for w in re.findall(r"[a-z0-9]+", str(value).lower()) if w not in _FILLER}


def _scalars(value: Any) -> list[str]:
    """A known value's parts as compared text: the items of a list, the fields of a dict, else the value itself."""
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else [value]
    return [json.dumps(v, sort_keys=True, default=str) for v in items if not isinstance(v, bool)]


def placeholder(key: str, value: Any) -> bool:
    """A value that only repeats its key's words (`"card": "card"`, a lone card named by its kind): no fact."""
    return isinstance(value, str) and bool(_said_words(value)) and _said_words(value) <= _key_words(key)


def known_defects(known: dict[str, Any]) -> tuple[list[str], list[str]]:
    """What a task's `user.known` should not hold: (one fact under two keys, placeholder values).

    A fact is duplicated when two keys hold the same value (or one key's value is an item or a field of another's)
    and one key's words are among the other's (`date` beside `travel_date`, `city` beside `new_address_city`,
    `check_out` beside `check_outs`) or one holds the other whole; two facts that merely share a value
    (`pickup_city` and `dropoff_city`, both "Florence") are two facts. A placeholder is a value that only repeats
    its key's words (`"card": "card"`): it tells the user nothing.
    """
    keys = [k for k in known if k != "preferences"]
    dups = []
    holders = [f"{k}={known[k]!r}" for k in keys if placeholder(k, known[k])]
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            va, vb = known[a], known[b]
            if isinstance(va, bool) or isinstance(vb, bool) or va in ("", None):
                continue
            same = json.dumps(va, sort_keys=True, default=str) == json.dumps(vb, sort_keys=True, default=str)
            inside = (not isinstance(va, (dict, list)) and json.dumps(va, default=str) in _scalars(vb)) or \
                     (not isinstance(vb, (dict, list)) and json.dumps(vb, default=str) in _scalars(va))
            wa, wb = _key_words(a), _key_words(b)
            if (same and (wa <= wb or wb <= wa)) or (inside and (wa <= wb or wb <= wa or a.startswith(f"{b}_")
                                                                   or b.startswith(f"{a}_"))):
                dups.append(f"{a} and {b} both hold {va if not isinstance(va, (dict, list)) else vb!r}")
    return dups, holders


@dataclass
class Refined:
    instruction: str
    known: dict[str, Any]
    intents: list[str]
    #: which refiner's wording this is (None: the refiner's own name)
    source: str | None = None
    #: per request, the keys of `known` that hold parts of its facts (`answer_parts`), for `meta.intent_gold`
    parts: list[list[str]] | None = None


_TOKEN = re.compile(r"[A-Za-z0-9_]*\d[A-Za-z0-9_]*(?:\.\d+)?")


def grounded_tokens(texts: list[str]) -> set[str]:
    """Numbers and ids in `texts` ('$1,250.00' -> '1250', '17th' -> '17'), for the LLM rewrite's check."""
    out = set()
    for text in texts:
        for token in _TOKEN.findall(text.replace(",", "")):
            token = re.sub(r"(?<=\d)(st|nd|rd|th)$", "", token)
            token = re.sub(r"\.0+$", "", token)
            out.add(token.lower())
    return out


def intent_type(domain: Domain, draft: IntentDraft) -> str:
    tool = domain.toolset[draft.goal]
    return "handoff" if tool.terminal else ("request" if tool.writes or draft.refused else "question")


class TemplateRefiner:
    """The default refiner: Jinja2 templates with seeded phrasing variety."""

    name = "template"

    def __init__(self, domain: Domain, hints: TracerHints | None = None):
        self.domain = domain
        self.fact_phrase = (hints if hints is not None else load_hints(domain)).fact_phrase

    def _fact(self, key: str, value: Any) -> str:
        """A known fact as the instruction says it: the pack's wording when it gives one, else the generic one.

        An empty wording leaves the fact unsaid in the instruction (another fact's words already say it); the
        user still knows it.
        """
        custom = self.fact_phrase
        said = custom(key, value) if custom is not None else None
        return fact_phrase(key, value) if said is None else said

    def _intent(self, draft: IntentDraft, person: dict[str, str], variant: dict[str, int]) -> dict[str, Any]:
        request = say(draft.request[variant["request"] % len(draft.request)], person)
        return {
            "type": intent_type(self.domain, draft),
            "request": request,
            "context": say(draft.context, person),
            "prefs": [say(p, person) for p in draft.preferences],
            # a question the request already asks ("know my copay") is not asked again ("and the copay")
            "asks": [a for o in draft.outputs if o.ask if not ask_in_request(a := say(o.ask, person), request)],
            "refused": draft.refused,
            "rule": rule_text(draft.decision, person, say, variant["ask"]) if draft.decision else None,
            "facts": [],
            "on_refusal": draft.on_refusal,
            "frame": variant["frame"], "pref_frame": variant["pref"], "ask_frame": variant["ask"],
        }

    def refine(self, cand: Candidate, rng: random.Random) -> Refined:
        variants = [{k: rng.randrange(720) for k in ("request", "frame", "pref", "ask", "handoff")} for _ in cand.drafts]
        lines: list[str] = []
        for draft, variant in zip(cand.drafts, variants, strict=True):
            lines.append(render("user_line.j2", it=self._intent(draft, FIRST, variant)))
            if draft.refused and draft.on_refusal == "transfer":
                lines.append(render("handoff_line.j2", variant=variant["handoff"]))
        persona = cand.persona
        identity = [identity_phrase(k, v) for k, v in persona.facts.items()
                    if k not in IDENTITY_SKIP and not k.endswith("_first_name")]
        # a relative the caller acts for is its own sentence: "You are calling for your child Kira."
        calling_for = [identity_phrase(k, v) for k, v in persona.facts.items() if k.endswith("_first_name")]
        # a value that only repeats its key ("card": "card") tells the user nothing: the request's words say it
        known = {k: v for k, v in cand.known.items() if not placeholder(k, v)}
        prefs = list(dict.fromkeys(say(p, FIRST) for d in cand.drafts for p in d.preferences))
        if prefs:
            known.setdefault("preferences", "; ".join(prefs))
        # Facts grouped by the intent that needs them; one several intents need with the same value is said
        # once, marked shared. When their values differ (two bag requests paid with two cards), each intent
        # says its own: a merged list ("your cards ending in 5667 and 2863") would not say which is whose.
        groups = [[k for k in intent_fact_keys(cand, d) if k not in persona.facts and k in known] for d in cand.drafts]
        owners = Counter(k for g in groups for k in g)
        own = [{k: own_fact(d, k) for k in g} for d, g in zip(cand.drafts, groups, strict=True)]
        alike = {k for k in owners if owners[k] > 1 and len({json.dumps(o[k][1], sort_keys=True, default=str)
                                                             for o in own if k in o}) == 1}
        intents = [self._intent(d, SECOND, v) for d, v in zip(cand.drafts, variants, strict=True)]
        # One voice: each fact is said once, in the request it belongs to, and only when the request's own words
        # do not say it already (no form-like second pass). A fact several requests share with one value is said
        # in the first of them.
        said_by = [" ".join([it["request"], it["context"], *it["prefs"]]) for it in intents]
        told: set[str] = set()
        earlier_prefs: list[list[str]] = []
        for it in intents:  # a preference an earlier request stated word for word is not stated again, nor pointed at
            if it["prefs"] and it["prefs"] in earlier_prefs:
                it["prefs"] = []
            earlier_prefs.append(it["prefs"])
        for it, group, mine in zip(intents, groups, own, strict=True):
            text = " ".join([it["request"], it["context"], *it["prefs"], *it["asks"], it["rule"] or ""])
            it["facts"] = []
            for k in group:
                if k in alike and k in told:
                    continue
                told.add(k)
                key, value = mine[k] if owners[k] > 1 and k not in alike else (k, known[k])
                phrase = self._fact(key, value)
                # a reason is said by the request's own 'because ...' (the context), in the customer's words
                if key.rstrip("s").endswith("reason") and it["context"]:
                    continue
                if phrase and not already_said(key, value, phrase, text):
                    it["facts"].append(phrase)
        shared: list[str] = []
        grouped = set(owners)
        rest = [p for k, v in known.items()
                if k not in persona.facts and k != "preferences" and k not in grouped if (p := self._fact(k, v))]
        instruction = render("instruction.j2", name=persona.name, identity=identity, calling_for=calling_for,
                             occasion=say(cand.occasion, SECOND), intents=intents, shared=shared, facts=rest,
                             closing=rng.randrange(720))
        parts, owners = answer_parts(cand, known, [[k for k in intent_fact_keys(cand, d) if k in known] for d in cand.drafts],
                                     said_by)
        known.update(parts)
        return Refined(instruction=instruction, known=known, intents=lines, parts=owners)


def hidden_ids(cand: Candidate, known: dict[str, Any]) -> list[str]:
    """Ids from the trajectory that the user does not know (for the LLM prompt)."""
    said = {norm(v) for _, v in leaves(known)}
    out: list[str] = []
    for step in cand.steps:
        for _, v in leaves({"a": step.arguments, "r": parse_result(step.text) if step.role == "goal" else None}):
            if isinstance(v, str) and re.fullmatch(r"[A-Za-z0-9_\-]{5,}", v) and any(c.isdigit() for c in v) \
                    and norm(v) not in said and not re.match(r"\d{4}-\d{2}-\d{2}", v) and v not in out:
                out.append(v)
    return out[:30]


def parse_json_object(text: str | None) -> dict[str, Any]:
    text = text or ""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object in the reply")
    value = json.loads(text[start:end + 1])
    if not isinstance(value, dict):
        raise ValueError("the reply is not a JSON object")
    return value


class RewriteRefused(ValueError):
    """The model's rewrite breaks the grounded task; the refiner keeps the template's wording (no rejection)."""


class LLMRefiner:
    """Rewrites the template refiner's output with a model; same schema, checked against the grounded task.

    The rewrite must keep every known fact, add none, and state no number or id that the template's
    wording of the grounded task does not; otherwise the template's wording is kept and the task's
    `meta.refiner` says why.
    """

    name = "llm"

    def __init__(self, domain: Domain, client: Any, hints: TracerHints | None = None):
        """`client`: a model client from the catalog (`pm.model_client(settings)`)."""
        self.domain = domain
        self.template = TemplateRefiner(domain, hints)
        self.client = client

    def refine(self, cand: Candidate, rng: random.Random) -> Refined:
        """The model's rewrite when it passes `check`, else the template's wording (`source` says which)."""
        draft = self.template.refine(cand, rng)
        try:
            return self.rewrite(cand, draft)
        except RewriteRefused as exc:
            return Refined(instruction=draft.instruction, known=draft.known, intents=draft.intents,
                           source=f"template (llm rewrite refused: {str(exc)[:120]})", parts=draft.parts)

    def rewrite(self, cand: Candidate, draft: Refined) -> Refined:
        prompt = render("refine_prompt.j2", instruction=draft.instruction, intents=draft.intents,
                        known=json.dumps(draft.known, indent=1, ensure_ascii=False),
                        hidden=hidden_ids(cand, draft.known))
        try:
            reply = asyncio.run(self._ask(prompt))
            value = parse_json_object(reply)
        except (ValueError, RuntimeError) as exc:
            raise RewriteRefused(f"the refiner model gave no usable answer: {str(exc).splitlines()[0][:200]}") from None
        instruction, known, intents = value.get("instruction"), value.get("known"), value.get("intents")
        if not isinstance(instruction, str) or not instruction.strip():
            raise RewriteRefused("the rewrite has no instruction")
        if not isinstance(intents, list) or len(intents) != len(draft.intents) or not all(isinstance(i, str) for i in intents):
            raise RewriteRefused(f"the rewrite has {len(intents) if isinstance(intents, list) else 'no'} user lines, "
                                   f"expected {len(draft.intents)}")
        if not isinstance(known, dict):
            raise RewriteRefused("the rewrite has no known facts")
        have = {norm(v) for _, v in leaves(known)}
        lost = [v for _, v in leaves(cand.known) if norm(v) is not None and norm(v) not in have]
        if lost:
            raise RewriteRefused(f"the rewrite dropped the known fact {lost[0]!r}")
        grounded = {norm(v) for _, v in leaves(draft.known)}
        added = [v for _, v in leaves(known) if norm(v) is not None and norm(v) not in grounded]
        if added:
            raise RewriteRefused(f"the rewrite adds the fact {added[0]!r}, which the task does not have")
        allowed = grounded_tokens([draft.instruction, *draft.intents, json.dumps(draft.known)])
        for text in [instruction, *intents]:
            for token in grounded_tokens([text]) - allowed:
                raise RewriteRefused(f"the rewrite states {token!r}, a number or id the grounded task does not have")
        parts = [[k for k in own if k in known] for own in draft.parts or []] or None
        return Refined(instruction=instruction.strip(), known=known, intents=[i.strip() for i in intents], source="llm",
                       parts=parts)

    async def _ask(self, prompt: str) -> str | None:
        message = await self.client.complete([{"role": "user", "content": prompt}])
        return message.content
