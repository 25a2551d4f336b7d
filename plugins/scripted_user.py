"""The `scripted` user: deterministic, offline, moved by what the agent does, following the task's `IntentPlan`.

It states the requests in order and moves on only on evidence (the request's goal changes are in the state, its
outputs said, its reasons explained: `core.reward`'s matchers); else it restates what is missing and spends
patience. A question gets the facts it names (the current request's, the caller's own when named more fully, a later
request's "for my next request", else "I don't know"; the name when asked for the id of a thing it knows by name); a
confirmation an opening "yes" unless it names another request's id or less than the refused request the user turns
smaller offers down for; with a decision rule it decides once the figure is said (`core.consent`), "No, ..." over it. It volunteers 0-2 facts per request in its own words, chosen by the trial's rng. A `UserStyle` words it;
friction spends `style.cost(kind)` of `style.budget` and at zero it gives up. A task without a plan gets one of its
whole gold (`core.goals.plan_from_gold`; line k of n is handled at k/n of the evidence); docs/architecture.md §5."""

from __future__ import annotations

import calendar
import json
import math
import re
import weakref
from typing import Any

from tau_emotion.core import hookimpl
from tau_emotion.core.consent import decide, decision_words
from tau_emotion.core.episode import EpisodeView
from tau_emotion.core.facts import (
    ALIASES,
    GENERIC,
    head_named,
    leaves,
    named_by,
    scalar,
    singular,
    singular_key,
    state_fact,
)
from tau_emotion.core.goals import changes_done, plan_from_gold
from tau_emotion.core.models import IntentPlan, Message, PlanFact, RequestPlan
from tau_emotion.core.protocols import UserStyle
from tau_emotion.core.reward import outputs_told, reasons_explained

#: the neutral budget: the median of the emotion pack's budgets over all its conditions (a test checks)
NEUTRAL_PATIENCE = 5
#: patience spent per friction event; the emotion pack's data/patience.json holds the same costs (a test checks)
FRICTION_COST = {"unknown_question": 1, "repeated_question": 2, "no_progress": 1}

_WORD = re.compile(r"[a-z0-9]+")
_CONFIRM = re.compile(
    r"\b(shall i|should i|may i|can i go|do you want me|would you like me|would you like to proceed|"
    r"confirm(?! (?:your|the|my)\b)|proceed|go ahead|is that (?:correct|right|ok)|are you sure|"
    r"(?:do|would) you (?:like|want) (?:me|to proceed|to go ahead))\b")
_ANYTHING_ELSE = re.compile(r"\b(anything else|something else|any other|else i can|further (?:help|assistance))\b")
_CHOICE = re.compile(r"\b(which|prefer|or)\b")
#: what a confirmation can name wrongly: ids, codes and dates (letters or dashes with digits)
_SALIENT = re.compile(r"(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[a-z_-])[\w-]{3,}(?![\w-])")
_NUMBER = re.compile(r"(?<![\w.,-])\d[\d,]*(?:\.\d+)?(?![\w-])")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
#: words that say nothing of a fact's content ("I want", "my")
_FUNCTION_WORDS = frozenset({"i", "me", "my", "am", "is", "are", "be", "the", "a", "an", "to", "of", "in", "on", "for",
                             "with", "and", "it", "want", "would", "like", "prefer", "d", "m", "s"})
#: the words a question uses for an id (`core.facts.ALIASES`)
_ID_WORDS = ALIASES["id"] | GENERIC - {"name"}


class NeutralStyle:
    """The scripted user's own phrasing and budget: a `UserStyle`, and what other styles may delegate to."""

    budget: int = NEUTRAL_PATIENCE

    def opening(self, request: str) -> str:
        return request

    def next_request(self, request: str) -> str:
        return f"Thank you. {request}"

    def answer(self, text: str) -> str:
        return text

    def confirm(self) -> str:
        return "Yes, please go ahead."

    def correct(self, request: str) -> str:
        return f"No, that is not what I asked for. {request}"

    def restate(self, missing: str, request: str) -> str:
        return f"That does not settle it yet: {missing}. {request}"

    def dont_know(self) -> str:
        return "I don't know that, sorry."

    def complaint(self, patience_left: int, kind: str) -> str | None:
        return None

    def give_up(self) -> str:
        return "This is not getting anywhere, so I will stop here."

    def done(self) -> str:
        return "Thank you, that is everything I needed."

    def cost(self, kind: str) -> int:
        return FRICTION_COST[kind]


class Patience:
    """The patience accounting every style shares: friction spends the style's cost of its budget."""

    def __init__(self, style: UserStyle, give_up_token: str | None):
        self.style, self.left, self.gave_up, self.token = style, style.budget, False, give_up_token

    def friction(self, kind: str) -> tuple[str | None, bool]:
        """Spend patience on one friction event: (a prefix for the reply or None, False), or (the last message, True)."""
        if not self.gave_up:
            self.left -= self.style.cost(kind)
            if self.left > 0:
                return self.style.complaint(self.left, kind), False
            self.gave_up = True
        return " ".join(x for x in (self.style.give_up(), self.token) if x), True


def _tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def says(value: Any, text: str) -> bool:
    """Whether `text` names `value`: its words in a row ('415-555-1264' in '... line 415-555-1264?'), an ISO date
    also as 'May 19'."""
    words = _tokens(text)
    for leaf in leaves(value):
        said = scalar(leaf)
        forms = [said] + ([f"{calendar.month_name[int(said[5:7])]} {int(said[8:10])}"] if _ISO_DATE.fullmatch(said) else [])
        for form in forms:
            want = _tokens(form)
            if want and any(words[i:i + len(want)] == want for i in range(len(words))):
                return True
    return False


def already_said(fact: PlanFact, line: str) -> bool:
    """The line says the fact: its value, or every content word of the fact's own words ('skip the travel
    insurance' for travel_insurance=no, '5 checked bags in total' beside 'add 2 checked bags, 5 in total')."""
    words, said = ({singular(w) for w in _tokens(t)} - _FUNCTION_WORDS for t in (fact.words, line))
    return says(fact.value, line) or words <= said


def _arg_names(calls: list[Any]) -> list[tuple[str, Any]]:
    """('tool.path', value) of every argument leaf of `calls` ('book.passengers.first_name')."""
    def walk(value: Any, path: str) -> list[tuple[str, Any]]:
        if isinstance(value, dict):
            return [x for k, v in value.items() for x in walk(v, f"{path}.{k}")]
        return [x for v in value for x in walk(v, path)] if isinstance(value, list) else [(path, value)]

    return [x for call in calls for x in walk(call.arguments, call.name)]


_plans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # domain -> {(task, gold): one-request plan}


def task_plan(view: EpisodeView) -> IntentPlan:
    """The task's plan, or (once per task and gold) a one-request plan of its whole gold."""
    task = view.task
    if task.plan is not None:
        return task.plan
    cache = _plans.setdefault(view.domain, {})
    key = (task.id, task.gold.model_dump_json())
    if key not in cache:
        cache[key] = plan_from_gold(task, view.tools, view.scratch_state().database)
    return cache[key]


class ScriptedUser:
    def __init__(self, view: EpisodeView):
        self.view = view
        self.task = view.task
        self.plan = task_plan(view)
        self.lines = list(self.task.user.intents) or [self.task.user.instruction]
        self.per_request = len(self.plan.requests) == len(self.lines)
        self.position, self.since = 0, 0  # the request, and where in the transcript it was made
        self.told: set[str] = set()  # the values said ('key=value'), so "said already" is said only after
        self.ahead = False
        self.last_agent_text: str | None = None
        self.style: UserStyle = view.user_style(NeutralStyle())
        self.patience = Patience(self.style, view.end_tokens.give_up)

    @property
    def request(self) -> RequestPlan:
        return self.plan.requests[self.position if self.per_request else 0]

    async def start(self) -> Message:
        return Message(role="user", content=self.style.opening(self._with_volunteered(self.lines[0])))

    def _mark(self, fact: PlanFact) -> str:
        return f"{fact.key}={json.dumps(fact.value, sort_keys=True, default=str)}"

    def _with_volunteered(self, line: str) -> str:
        """The line and 0-2 of its request's facts in the customer's words, those the line does not already say
        and no value twice (`PlanFact.words`: a fact without words is told only when asked)."""
        if not self.per_request:
            return line
        facts, values = [], set()
        for fact in self.request.facts:
            value = json.dumps(fact.value, sort_keys=True, default=str)
            if fact.words and value not in values and not already_said(fact, line):
                facts.append(fact)
            values.add(value)
        rng = self.view.rng
        chosen = rng.sample(facts, min(len(facts), rng.randrange(3))) if facts else []
        self.told.update(self._mark(f) for f in chosen)
        return " ".join([line, *(f"{f.words[:1].upper()}{f.words[1:]}." for f in chosen)])

    def _progress(self, request: RequestPlan) -> tuple[int, int, list[str]]:
        """(evidence units of `request`, how many hold, what is still missing in words)."""
        messages = self.view.messages
        rows = changes_done(self.view.state, request.goal)
        gold, domain = self.task.gold, self.view.domain  # the reward's matcher, with the whole gold: no rivals there
        _, outputs_missing = outputs_told(request.outputs, messages, gold=gold, domain=domain, tables=self.view.state)
        _, reasons_missing = reasons_explained(domain, request.reasons, messages, gold=gold)
        handed_over = request.goal.handover and any(
            m.role == "tool" and not m.error and self.view.tools.is_terminal(m.name or "") for m in messages)
        missing = [text for text, gap in (
            ("I asked to be handed over to a person", request.goal.handover and not handed_over),
            ("what I asked for has not been done", not all(rows)),
            ("you have not told me what I asked to know", bool(outputs_missing)),
            ("you have not explained why it cannot be done", bool(reasons_missing))) if gap]
        units = len(rows) + len(request.outputs) + len(request.reasons) + request.goal.handover
        done = sum(rows) + len(request.outputs) - len(outputs_missing) + len(request.reasons) - len(reasons_missing)
        return units, done + handed_over, missing

    def _handled(self, text: str) -> tuple[bool, list[str]]:
        units, done, missing = self._progress(self.request)
        if units == 0:  # nothing to check: any statement will do
            return "?" not in text or bool(_ANYTHING_ELSE.search(text.lower())), []
        if self.per_request or self.position == len(self.lines) - 1:
            return not missing, missing
        return done >= math.ceil(units * (self.position + 1) / len(self.lines)), missing or [
            "what I asked for has not been done"]

    # ----------------------------------------------------------------- answers

    def _calls(self, request: RequestPlan, refused: bool = True) -> list[Any]:
        calls = [self.task.gold.actions[j] for j in request.actions if j < len(self.task.gold.actions)]
        return calls + ([request.refusal.call] if request.refusal and refused else [])

    def _score(self, fact: PlanFact, words: set[str], named: set[str]) -> tuple[float, str | None]:
        """How completely the question names `fact` (its key's words, or an argument it gives or names the thing of;
        0.5 for a key's head noun alone), and the argument it names."""
        best, via = float(named_by(fact.key, words) or named_by(singular_key(fact.key), words)), None
        for path in [*fact.answers, *fact.names]:
            score = named_by(path.rpartition(".")[2], words)
            if score > best:
                best, via = float(score), path
        if not best and head_named(fact.key, words) and not named - set(fact.answers):
            best = 0.5
        return best, via

    def _top(self, facts: list[PlanFact], words: set[str], named: set[str]) -> tuple[float, list[tuple[PlanFact, Any]]]:
        scored = [(self._score(f, words, named), f) for f in facts]
        top = max((s for (s, _), _ in scored), default=0.0)
        found, values = [], set()
        for (score, via), fact in scored:  # one value once: a part ('address1') is in its whole ('new_address')
            value = {json.dumps(v, default=str) for v in leaves(fact.value)}
            if score == top and top > 0 and not value <= values:
                found.append((fact, via))
                values |= value
        return top, found

    def _asked(self, text: str) -> list[tuple[PlanFact, str | None]]:
        """The facts a question asks for, each with the argument it names (None: it names the fact itself)."""
        self.ahead = False
        words = {singular(w) for w in _tokens(text)}
        gold = _arg_names(self._calls(self.request, refused=False))
        named = {p for p, _ in gold if named_by(p.rpartition(".")[2], words)}  # the request's arguments it names in full
        mine, found = self._top(self.request.facts, words, named)
        own, caller = self._top(self.plan.caller, words, named)
        if own > mine or (own == mine and own and self._caller_first([f for f, _ in caller], {p for p, _ in gold})):
            return caller
        if not self.per_request:
            return found
        for later in self.plan.requests[self.position + 1:]:
            score, ahead = self._top(later.facts, words, set())
            if score > mine and (score >= 1 or not found):  # a later request's fact it names more fully: not this one
                self.ahead = not named  # asked ahead, about no argument of this request: said as the next request's
                return ahead if self.ahead else []
        return found

    def _caller_first(self, facts: list[PlanFact], args: set[str]) -> bool:
        """A tie goes to the caller's own fact while the request's calls still look the caller up by it and no call
        has found them yet (a name never: "the first name?" while adding a passenger is the passenger's)."""
        found = self.position > 0 or any(m.role == "tool" and not m.error for m in self.view.messages)
        return not found and any(not f.key.endswith("name") and set(f.answers) & args for f in facts)

    def _answer(self, fact: PlanFact, via: str | None, words: set[str]) -> str:
        """A fact said under the name it was asked by (a field of a whole: both names); asked for its id, the thing
        (in the customer's words, else under its own name: "my date of birth is ...")."""
        if via is not None:
            name = via.rpartition(".")[2]
            if via in fact.names and words & _ID_WORDS:
                said = fact.words or state_fact(fact.key, fact.value).rstrip(".")
                return f"I don't have the {name.replace('_', ' ')}; {said[:1].lower()}{said[1:]}."
            part = isinstance(fact.value, dict) and name in fact.value  # "My new address zip is 85701."
            return state_fact(f"{fact.key}_{name}", fact.value[name]) if part else state_fact(name, fact.value)
        key = fact.key if isinstance(fact.value, list) or fact.value == self.task.user.known.get(fact.key) \
            else singular_key(fact.key)
        if not named_by(key, words):  # asked by its head noun alone ("which cabin?"): said so ("My cabin is ...")
            key = key.rpartition("_")[2]
        return state_fact(key, fact.value)

    def _empty_asked(self, words: set[str]) -> bool:
        """The question names an argument of the request's calls whose gold value is empty (no second address line)."""
        args = _arg_names(self._calls(self.request))
        return any(v in ("", None) and named_by(p.rpartition(".")[2], words) for p, v in args)

    def _values(self, requests: list[RequestPlan]) -> set[str]:
        found = [v for r in requests for v in [*(v for _, v in _arg_names(self._calls(r))), *(f.value for f in r.facts)]]
        return {t for v in leaves(found) for t in [str(v).lower(), *_SALIENT.findall(str(v).lower())]}

    def _wrong_confirmation(self, text: str) -> bool:
        """A confirmation naming an id, code or date of another request's calls and not of this one's."""
        mine, others = self._values([self.request]), self._values([r for r in self.plan.requests if r is not self.request])
        return self.per_request and any(t in others and t not in mine for t in _SALIENT.findall(text.lower()))

    def offers_less(self, text: str) -> bool:
        """An offer of less than the current refused request asked, when the user turns such offers down ("$50 instead?")."""
        refusals = [self.request.refusal] if self.per_request and self.request.refusal else [] if self.per_request \
            else self.plan.refusals
        asked = [float(v) for r in refusals if r.declines_smaller for v in leaves(r.call.arguments)
                 if isinstance(v, (int, float)) and not isinstance(v, bool)]
        named = [float(n.replace(",", "")) for n in _NUMBER.findall(_SALIENT.sub(" ", text.lower()))]
        return bool(asked and named) and all(n < max(asked) for n in named)

    def _with_friction(self, kind: str | None, reply: str) -> str:
        said, ended = self.patience.friction(kind) if kind else (None, False)
        return said or "" if ended else " ".join(x for x in (said, reply) if x)

    def _preference(self) -> str | None:
        prefs = [str(p) for p in leaves(self.task.user.known.get("preferences")) if p]
        return "I would like to " + "; and ".join(prefs) + "." if prefs else None

    def _reply_to_question(self, text: str, repeated: bool) -> str:
        lower = text.lower()
        words = {singular(w) for w in _tokens(text)}
        line = self.lines[self.position]
        if _CONFIRM.search(lower):  # "I will change reservation X ... Shall I proceed?" is not a question about X
            if self._wrong_confirmation(text) or self.offers_less(text):
                return self._with_friction("no_progress", self.style.correct(line))
            rule = self.request.decision if self.per_request else None  # decided once the figure is heard
            verdict = decide(rule, self.view.messages[self.since:])
            if rule is not None and verdict != "yes":
                return self._with_friction("no_progress" if verdict == "ask" else None, decision_words(rule, verdict))
            return self._with_friction("no_progress" if repeated else None, self.style.confirm())
        asked = self._asked(text)
        if asked:
            marks = [self._mark(f) for f, _ in asked]
            kind = "repeated_question" if all(m in self.told for m in marks) else None
            self.told.update(marks)
            facts = " ".join(_once_missing(list(dict.fromkeys(self._answer(f, via, words) for f, via in asked))))
            ahead = "That is for my next request, but since you ask: " if self.ahead else ""
            return self._with_friction(kind, self.style.answer(ahead + facts))
        # a choice ("which card?") gets the preference; "the address2?" for an address without one: there is none
        other = self._preference() if _CHOICE.search(lower) else None
        other = other or ("There isn't one; leave it empty." if self._empty_asked(words) else None)
        if other:
            return self._with_friction("repeated_question" if repeated else None, self.style.answer(other))
        return self._with_friction("unknown_question", self.style.dont_know())

    async def respond(self, message: Message) -> Message:
        text = (message.content or "").strip()
        repeated = text == self.last_agent_text
        self.last_agent_text = text
        handled, missing = self._handled(text)
        if handled and text:  # asked to go ahead with what its rule declines (the figure told): "No, ..." first
            rule = self.request.decision if self.per_request and _CONFIRM.search(text.lower()) else None
            no = decision_words(rule, "no") if rule and decide(rule, self.view.messages[self.since:]) == "no" else ""
            self.position, self.since = self.position + 1, len(self.view.messages)
            if self.position >= len(self.lines):
                done = self.view.end_tokens.done
                return Message(role="user", content=" ".join(x for x in (no, self.style.done(), done) if x))
            line = self._with_volunteered(self.lines[self.position])
            return Message(role="user", content=" ".join(x for x in (no, self.style.next_request(line)) if x))
        if "?" in text and not _ANYTHING_ELSE.search(text.lower()):
            return Message(role="user", content=self._reply_to_question(text, repeated))
        what = "; ".join(missing) or "nothing has happened yet"
        restate = self.style.restate(what, self.lines[self.position])
        return Message(role="user", content=self._with_friction("no_progress", restate))


@hookimpl
def tau_register_users(register):
    register("scripted", ScriptedUser)




def _once_missing(answers: Any) -> list[str]:
    """Answers with "I don't have the customer id; " said once, before the first fact that stands for it."""
    heads, out = [a.partition("; ")[0] if a.startswith("I don't have the ") else None for a in answers], []
    for a, h in zip(answers, heads, strict=True):
        out.append(a.partition("; ")[2][:1].upper() + a.partition("; ")[2][1:] if h and h in heads[:len(out)] else a)
    return out
