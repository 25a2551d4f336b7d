"""The `scripted` user: deterministic, offline, and moved by what the agent does.

It states the task's intents in order and moves to the next one only on evidence that the
current one was handled: the intent's gold writes are in the episode's state, its gold outputs
were said, its refusal reasons explained (the scorer's own matching). Tracer tasks say which gold
calls, outputs and reasons belong to which intent (`meta.intent_gold`); for other tasks a single
intent owns the whole gold, and with several intents the k-th of n counts as handled once k/n of
the gold's evidence is there. An intent with nothing to check is handled by any statement.

Otherwise a statement is no progress: the user restates what is missing and spends patience. A
question is answered with the facts asked for: the current intent's (`meta.intent_gold[i].facts`, with the
parts Tracer lists there) when one fits, never another request's beside them; else a fact no other request owns
(the caller's own, named in the opening "You are X (...)", also win over a request fact the question names less
completely: "the date of birth?" is not the appointment date); else, for a question about a later request's fact
(asked ahead, not about an argument of the current request's calls), that request's value said as the next
request's ("That is for my next request, but since you ask: ..."); else "I don't know". A confirmation proposing
less than a refused request asked ("a $50 credit instead?") gets a correction when the instruction says the user
turns smaller offers down. With each request the user
volunteers 0-2 of its facts the request's words do not already say, chosen and ordered by the trial's seeded rng, so trials differ
(a volunteered fact asked again is a repeated question); a choice question
("which card?") with its preference; a confirmation with "yes" only when the action described
names what the user asked for (ids, flight numbers, dates, cabins), else with a correction;
"anything else?" moves it on once the intent is handled. When everything is handled it ends with
###STOP###.

How it sounds comes from a `UserStyle` (`tau_emotion.core.protocols`); the patience accounting is
the user's own, the same for every style: friction (`unknown_question`, `repeated_question`,
`no_progress`) spends `style.cost(kind)` of `style.budget` and at zero the user gives up with the
give-up end token (`view.end_tokens.give_up`: ###UNSATISFIED### when the `unsatisfied` plugin is
loaded, else the done token ###STOP###). The neutral style's budget is `NEUTRAL_PATIENCE`, the
median budget of the emotion pack's 594 conditions, so a no-emotion control compares like with
like. Another plugin (the emotion pack) answers the core hook `tau_user_style` with its own style.
"""

from __future__ import annotations

import json
import math
import re
import weakref
from dataclasses import dataclass, field
from typing import Any

from tau_emotion.core import hookimpl
from tau_emotion.core.episode import EpisodeView
from tau_emotion.core.models import Message, Task
from tau_emotion.core.protocols import UserStyle
from tau_emotion.core.reward import outputs_told, reasons_explained
from tau_emotion.core.state import canonical_json

#: the neutral budget: the median of the emotion pack's budgets over all its conditions (a test checks)
NEUTRAL_PATIENCE = 5
#: patience spent per friction event; the emotion pack's data/patience.json holds the same costs (a test checks)
FRICTION_COST = {"unknown_question": 1, "repeated_question": 2, "no_progress": 1}

_WORD = re.compile(r"[a-z0-9]+")
_SYNONYMS = {
    "id": {"id", "number", "code", "identifier", "confirmation", "locator"},
    "ids": {"id", "ids", "number", "numbers", "code", "codes", "identifier", "confirmation", "locator"},
    "dob": {"dob", "birth", "birthday"},
    "email": {"email", "e-mail", "mail"},
}
_STOPWORDS = {"of", "the", "a", "an", "to", "for", "my", "your"}
_GENERIC = {"id", "ids", "name", "number", "code", "identifier"}
_CONFIRM = re.compile(
    r"\b(shall i|should i|may i|can i go|do you want me|would you like me|would you like to proceed|"
    r"confirm(?! (?:your|the|my)\b)|proceed|go ahead|is that (?:correct|right|ok)|are you sure|"
    r"(?:do|would) you (?:like|want) (?:me|to proceed|to go ahead))\b"
)
_ANYTHING_ELSE = re.compile(r"\b(anything else|something else|any other|else i can|further (?:help|assistance))\b")
_CHOICE = re.compile(r"\b(which|prefer|or)\b")
#: what a confirmation can name wrongly: reservation ids, flight numbers, dates, cabins
_SALIENT = {
    "id": re.compile(r"\b(?=[A-Z0-9]*\d)[A-Z0-9]{6}\b"),
    "flight": re.compile(r"\b[A-Z]{3}\d{3,4}\b"),
    "date": re.compile(r"\b\d{4}-\d{2}-\d{2}\b"),
    "cabin": re.compile(r"\b(basic[ _]economy|business|(?<!basic )(?<!basic_)economy)\b", re.I),
}


#: amounts and durations an agent may offer in place of what was asked ("a $50 credit", "180 days")
def _flat_arguments(value: Any, name: str = "") -> list[tuple[str, Any]]:
    """(argument name, scalar) pairs of a call's arguments, nested ones under their own name."""
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in _flat_arguments(v, k)]
    if isinstance(value, list):
        return [pair for v in value for pair in _flat_arguments(v, name)]
    return [(name, value)]


_OFFERED = re.compile(r"\$\s?(\d[\d,]*(?:\.\d+)?)|\b(\d+)\s+days?\b", re.I)
#: the instruction's words for a user who declines a smaller compliant variant of a refused request (tracer/answers.py)
_DECLINES_LESS = "offer of less than"


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

    def complaint(self, patience_left: int) -> str | None:
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
        self.style = style
        self.left = style.budget
        self.gave_up = False
        self.token = give_up_token

    def friction(self, kind: str) -> tuple[str | None, bool]:
        """Spend patience on one friction event ('unknown_question', 'repeated_question', 'no_progress').

        Returns (None, False) to carry on, (a prefix for the reply, False), or (the final message with the
        give-up token, True) to end the conversation.
        """
        if not self.gave_up:
            self.left -= self.style.cost(kind)
            if self.left > 0:
                return self.style.complaint(self.left), False
            self.gave_up = True
        return " ".join(x for x in (self.style.give_up(), self.token) if x), True


def singular(word: str) -> str:
    """'specialties' -> 'specialty', 'methods' -> 'method' ('address' stays): a question and a fact key match
    whether either says one or several."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    if word in ("ins", "outs", "ups"):  # the plural of a phrasal noun ('check_ins' -> 'check in')
        return word[:-1]
    return word


def singular_key(key: str) -> str:
    """'reservation_ids' -> 'reservation_id', 'check_outs' -> 'check_out' (a plural fact narrowed to one value)."""
    head, _, last = key.rpartition("_")
    last = "id" if last == "ids" else singular(last)
    return f"{head}_{last}" if head else last


def key_terms(key: str) -> list[set[str]]:
    terms = []
    for token in key.lower().split("_"):
        if token and token not in _STOPWORDS:
            terms.append({singular(t) for t in _SYNONYMS.get(token, {token}) | {token}})
    return terms


def format_value(value: Any) -> str:
    """A known fact as a person would say it: lists and flat records (an address) as their values joined
    by commas, anything nested as JSON."""
    if isinstance(value, dict) and all(isinstance(v, (str, int, float)) or v is None for v in value.values()):
        value = [v for v in value.values() if v not in (None, "")]
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return ", ".join(_scalar(v) for v in value)
    if isinstance(value, (str, int, float)):
        return _scalar(value)
    return json.dumps(value)


#: an enum value as stored ('not_recognised'): said as words; ids with digits ('omar_hughes_3171') stay as they are
_ENUM = re.compile(r"[a-z]+(?:_[a-z]+)+")


def _scalar(value: str | int | float) -> str:
    """One value as said: 65.0 as '65', 'not_recognised' as 'not recognised'."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str) and _ENUM.fullmatch(value):
        return value.replace("_", " ")
    return str(value)


def _plural_key(key: str) -> bool:
    """'copies', 'suspension_days', 'checked_bags' name several things ('address', 'status' do not)."""
    last = key.rpartition("_")[2]
    return last != singular(last) and not last.endswith("us")


def state_fact(key: str, value: Any) -> str:
    several = isinstance(value, list) and len(value) > 1
    verb = "are" if several or (_plural_key(key) and not isinstance(value, list)) else "is"
    return f"My {key.replace('_', ' ')} {verb} {format_value(value)}."


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def _names_value(value: Any, text: str) -> bool:
    """Whether lowered `text` names `value` (an ISO date also as 'May 19'; parts shorter than 3 do not count)."""
    value = str(value)
    forms = {value, value.replace("_", " ")}
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        forms.add(f"{_MONTHS[int(value[5:7]) - 1]} {int(value[8:])}")
    return any(len(f) >= 3 and re.search(rf"(?<!\w){re.escape(f.lower())}(?!\w)", text) for f in forms)


def _says_fact(key: str, value: Any, line: str) -> bool:
    """Whether a request line already says fact `key`: its value ('the gift card' as 'gift card', 30.0 as '30'),
    or, for a yes/no value, every word of its key ('take the travel insurance' says travel_insurance=yes)."""
    line = line.lower()
    said = _scalar(value) if isinstance(value, (str, int, float)) else str(value)
    said = re.sub(r"^(?:the|my|a|an) ", "", said.lower())
    if re.fullmatch(r"\d{1,2}", said):  # a count is said with its noun: "check 2 bags", "5 in total"
        nouns = {w for terms in key_terms(key) for w in terms}
        nouns |= {"bag"} if "baggage" in nouns else set()
        nouns = {f"{w}s" for w in nouns} | nouns | ({"in total"} if "total" in nouns else set())
        return bool(re.search(rf"(?<![\w$.]){said}\s+(?:\w+\s+)?(?:{'|'.join(map(re.escape, nouns))})\b", line))
    if _names_value(said, line):
        return True
    words = {singular(w) for w in _WORD.findall(line)}
    yes_no = isinstance(value, bool) or said in {"yes", "no", "true", "false"}
    return yes_no and all(terms & words for terms in key_terms(key))


def argument_names(value: Any, name: str = "") -> list[str]:
    """The argument names of a call, nested ones included ('flights.date' gives 'flights' and 'date')."""
    if isinstance(value, dict):
        return [n for k, v in value.items() for n in [k, *argument_names(v, k)]]
    if isinstance(value, list):
        return [n for v in value for n in argument_names(v, name)]
    return []


def leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in leaves(v)]
    return [value]


@dataclass
class IntentGoal:
    """What shows that one intent was handled."""

    #: (table, key) -> the canonical rows it may hold once handled (None: deleted)
    rows: dict[tuple[str, str], set[str | None]] = field(default_factory=dict)
    outputs: list[Any] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    #: values a confirmation of this intent's action may name
    values: set[str] = field(default_factory=set)
    #: the intent ends in a handover (a terminal tool)
    handover: bool = False

    @property
    def units(self) -> int:
        return len(self.rows) + len(self.outputs) + len(self.reasons) + self.handover


_goal_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # domain -> {(task, gold): goals}


def intent_goals(view: EpisodeView, n_intents: int) -> tuple[list[IntentGoal], bool]:
    """One goal per intent (and True) from `meta.intent_gold`, else one goal for the whole gold (False)."""
    task = view.task
    split = task.meta.get("intent_gold")
    per_intent = isinstance(split, list) and len(split) == n_intents
    cache = _goal_cache.setdefault(view.domain, {})
    key = (task.id, task.gold.model_dump_json(), json.dumps(split) if per_intent else None)
    if key not in cache:
        cache[key] = _build_goals(view, task, split if per_intent else None)
    return cache[key], per_intent


def _build_goals(view: EpisodeView, task: Task, split: list[dict] | None) -> list[IntentGoal]:
    groups = [list(g.get("actions", [])) for g in split] if split else [list(range(len(task.gold.actions)))]
    owner = {j: i for i, g in enumerate(groups) for j in g}
    state = view.scratch_state()
    rows_after: list[dict[tuple[str, str], str | None]] = []  # rows each gold write changed, as left by it

    def current(row: tuple[str, str]) -> str | None:
        table, key = row
        return canonical_json(state[table].peek(key)) if key in state[table] else None

    before: dict[tuple[str, str], str | None] = {}
    for action in task.gold.actions:
        view.tools.call(state, action.name, action.arguments)
        touched = set(before) | {(t, k) for t, rows in state.changed().items() for k in rows}
        after = {row: current(row) for row in touched}  # a row back at its snapshot value counts too
        rows_after.append({row: v for row, v in after.items() if row not in before or before[row] != v})
        before = after
    refused = [str(v) for r in task.meta.get("refused", []) for v in leaves(r.get("arguments", {}))]
    goals = [IntentGoal() for _ in groups]
    for j, changed in enumerate(rows_after):
        i = owner.get(j)
        if i is None:
            continue
        goals[i].handover |= view.tools.is_terminal(task.gold.actions[j].name)
        for row in changed:
            goals[i].rows.setdefault(row, set())
        if changed:
            goals[i].values.update(str(v) for v in leaves(task.gold.actions[j].arguments))
    # a row counts as handled at the value it has after its intent or any later one
    for i, goal in enumerate(goals):
        for row in goal.rows:
            goal.rows[row] = {c[row] for j, c in enumerate(rows_after) if row in c and owner.get(j, -1) >= i}
        goal.values.update(refused)
    if split:
        for goal, part in zip(goals, split, strict=True):
            goal.outputs, goal.reasons = list(part.get("outputs", [])), list(part.get("reasons", []))
    else:
        goals[0].outputs, goals[0].reasons = list(task.gold.outputs), list(task.gold.reasons)
    return goals


class ScriptedUser:
    def __init__(self, view: EpisodeView):
        self.view = view
        self.task = view.task
        self.intents = list(self.task.user.intents) or [self.task.user.instruction]
        self.goals, self.per_intent = intent_goals(view, len(self.intents))
        self.position = 0
        self.told: set[str] = set()
        self.ahead = False  # the last answered question was about a later request
        self.last_agent_text: str | None = None
        self.style: UserStyle = view.user_style(NeutralStyle())
        self.patience = Patience(self.style, view.end_tokens.give_up)

    async def start(self) -> Message:
        return Message(role="user", content=self.style.opening(self._with_volunteered(self.intents[0])))

    def _with_volunteered(self, request: str) -> str:
        """The request, plus 0-2 of its own facts the user volunteers, chosen and ordered by the trial's rng
        (`view.rng`, seeded by run seed, task and trial): trials of one task differ in what the agent still
        has to ask, so Pass^k measures something offline. A fact volunteered is told: asking it again is a
        repeated question. Facts the request's own words already say ("pay with my gift card", "take the
        travel insurance") are not restated in form wording."""
        known = self.task.user.known
        facts = [k for k in sorted(self._intent_facts()) if k in known and not isinstance(known[k], (dict, list))
                 and not _says_fact(k, known[k], request)]
        rng = self.view.rng
        chosen = rng.sample(facts, min(len(facts), rng.randrange(3))) if facts else []
        if not chosen:
            return request
        self.told.update(chosen)
        return f"{request} {' '.join(state_fact(k, known[k]) for k in chosen)}"

    # ----------------------------------------------------------------- evidence

    def _rows_done(self, goal: IntentGoal) -> list[bool]:
        state = self.view.state
        out = []
        for (table, key), wanted in goal.rows.items():
            row = state[table].get(key)
            out.append((None if row is None else canonical_json(row)) in wanted)
        return out

    def _progress(self, goal: IntentGoal) -> tuple[int, list[str]]:
        """How many evidence units of `goal` hold, and what is still missing (in words)."""
        rows = self._rows_done(goal)
        messages = self.view.messages
        # the reward's own matcher, with the whole gold: another intent's figures are no rivals of this one's
        gold, domain = self.task.gold, self.view.domain
        _, outputs_missing = outputs_told(goal.outputs, messages, gold=gold, domain=domain, tables=self.view.state)
        _, reasons_missing = reasons_explained(domain, goal.reasons, messages, gold=gold)
        handed_over = goal.handover and any(
            m.role == "tool" and not m.error and self.view.tools.is_terminal(m.name or "") for m in messages)
        missing = []
        if goal.handover and not handed_over:
            missing.append("I asked to be handed over to a person")
        if not all(rows):
            missing.append("what I asked for has not been done")
        if outputs_missing:
            missing.append("you have not told me what I asked to know")
        if reasons_missing:
            missing.append("you have not explained why it cannot be done")
        done = sum(rows) + len(goal.outputs) - len(outputs_missing) + len(goal.reasons) - len(reasons_missing)
        return done + handed_over, missing

    def _handled(self, text: str) -> tuple[bool, list[str]]:
        if self.per_intent or len(self.intents) == 1:
            goal = self.goals[self.position]
            if goal.units == 0:  # nothing to check: any statement will do
                return "?" not in text or bool(_ANYTHING_ELSE.search(text.lower())), []
            done, missing = self._progress(goal)
            return not missing, missing
        goal = self.goals[0]
        if goal.units == 0:
            return "?" not in text or bool(_ANYTHING_ELSE.search(text.lower())), []
        done, missing = self._progress(goal)
        if self.position == len(self.intents) - 1:
            return not missing, missing
        needed = math.ceil(goal.units * (self.position + 1) / len(self.intents))
        return done >= needed, missing or ["what I asked for has not been done"]

    # ----------------------------------------------------------------- answers

    def _asked_keys(self, text: str) -> list[str]:
        self.ahead = False  # set when the keys answer a later request's question
        words = {singular(w) for w in _WORD.findall(text.lower())}
        known = [k for k in self.task.user.known if k != "preferences"]
        grouped = self._intent_facts()

        # arguments of the current request's calls the question names in full ("the nonfree baggages?")
        named = [key_terms(n) for n in set(argument_names(self._current_arguments()))]
        named = [terms for terms in named if terms and all(t & words for t in terms)]

        def narrower(key: str) -> bool:
            """The question names an argument `key` does not cover: 'nonfree baggages' is not 'total_baggages'."""
            mine = key_terms(key)
            return any(not all(any(t & m for m in mine) for t in terms) for terms in named)

        def full(keys: list[str]) -> list[str]:
            """Keys every word of which the question names, the most completely named first kept: "the date of
            birth?" names all of `date_of_birth` and more than `date`, so `date` does not answer it."""
            found = [k for k in keys if all(terms & words for terms in key_terms(k))]
            most = max((len(key_terms(k)) for k in found), default=0)
            return [k for k in found if len(key_terms(k)) == most]

        def matching(keys: list[str]) -> list[str]:
            found = full(keys)
            if not found:  # "the first name?" asks for the new passenger's: the key's last two terms
                found = [k for k in keys if len(terms := key_terms(k)) > 2 and all(t & words for t in terms[-2:])]
            if not found:  # "which cabin?" asks for the new_cabin: the key's head noun, unless it is generic
                found = [k for k in keys if (terms := key_terms(k)) and not terms[-1] & _GENERIC and terms[-1] & words
                         and not narrower(k)]
            return found

        # The caller's own facts (those the opening "You are X (date of birth ...)" names) answer a question that
        # names them fully and more completely than any request fact: "the date of birth?" is not the appointment
        # `date`, "the zip?" while the agent finds the caller is not the new address's zip, "the phone number?" is
        # not the request line's number.
        persona = full([k for k in known if k in self._persona_facts()])
        # The current request's facts answer first (Tracer lists them, and the parts an agent asks for, in
        # `meta.intent_gold[i].facts`): "the zip code of the new address?" is the new address's zip, not the
        # caller's own, and another request's value is not given beside it.
        mine = matching([k for k in known if k in grouped]) if grouped else []
        if persona and not set(persona) & set(mine):
            best = max((len(key_terms(k)) for k in full(mine)), default=0)
            # a request fact the question names only loosely ("the zip?" for `new_address_zip`) gives way only while
            # the request's calls still look the caller up by that value and nobody has yet (no earlier request, no
            # successful tool call); a name never does: "the first name?" while adding a passenger is the passenger's
            calls = {str(v) for v in leaves(self._current_arguments())}
            if len(key_terms(persona[0])) > best and (
                    best or not mine or (not self._identified() and not persona[0].endswith("name")
                                         and str(self.task.user.known[persona[0]]) in calls)):
                return persona
        if mine:
            return mine
        if self.per_intent:
            # none of this request's facts fits: another request's value would be a wrong answer (the airline
            # compensation request asked "the origin?" must not give the next request's trip origin); only facts no
            # other request owns (the caller's own, the user id, facts every request shares) may fit
            split = self.task.meta.get("intent_gold") or []
            owned = set().union(*(set(part.get("facts") or []) for i, part in enumerate(split) if i != self.position))
            found = matching([k for k in known if k not in owned - grouped - self._persona_facts()])
            if found:
                return found
            # asked ahead about a later request ("the origin?" of the trip the user will change next): that
            # request's value, said as that request's, so the agent is neither told "I don't know" about a fact the
            # instruction states nor handed it as the current request's
            for i, part in enumerate(split):  # (not a question about an argument of this request's own calls)
                ahead = matching([k for k in known if k in set(part.get("facts") or [])]) \
                    if i > self.position and not named else []
                if ahead:
                    self.ahead = True
                    return ahead
            return []
        keys = matching(known)
        request = self.intents[self.position].lower()
        return sorted(keys, key=lambda k: not any(str(v).lower() in request for v in leaves(self.task.user.known[k])))

    def _identified(self) -> bool:
        """Whether the agent is past finding the caller: an earlier request was handled or a tool call succeeded."""
        return self.position > 0 or any(m.role == "tool" and not m.error for m in self.view.messages)

    def _persona_facts(self) -> set[str]:
        """The caller's own facts: names and the keys whose values the instruction's opening sentence ("You are
        Tara Murphy (date of birth 1983-05-15).") says."""
        instruction = self.task.user.instruction
        head = re.match(r"[^.]*?(?:\([^)]*\))?[^.(]*(?:\.|$)", instruction)
        opening = (head.group(0) if head else instruction).lower()
        known = self.task.user.known
        return {k for k, v in known.items() if k in ("first_name", "last_name")
                or (isinstance(v, (str, int)) and not isinstance(v, bool) and _names_value(v, opening))}

    def _asks_for_nothing(self, lower: str) -> bool:
        """Whether the question names an argument of the current request's calls whose gold value is empty (an
        address's second line the address does not have)."""
        words = {singular(w) for w in _WORD.findall(lower)}
        empty = {k for args in self._current_arguments() for k, v in _flat_arguments(args) if v in ("", None)}
        return any(all(t & words for t in key_terms(k)) for k in empty if key_terms(k))

    def _current_arguments(self) -> list[dict[str, Any]]:
        """The arguments of the current request's gold calls (`meta.intent_gold[i].actions`)."""
        split = self.task.meta.get("intent_gold")
        if not isinstance(split, list) or self.position >= len(split):
            return []
        actions = self.task.gold.actions
        return [actions[j].arguments for j in split[self.position].get("actions") or [] if j < len(actions)]

    def _value(self, key: str) -> Any:
        """The known value of `key` as this request's answer: a list merged from several requests' facts
        ("reservation_ids") narrows to the items this request's own line or gold calls name."""
        value = self.task.user.known[key]
        if not (self.per_intent and isinstance(value, list) and len(value) > 1 and key in self._intent_facts()):
            return value
        line = self.intents[self.position].lower()
        calls = {str(x).lower().replace("_", " ") for x in leaves(self._current_arguments()) if not isinstance(x, bool)}
        own = [v for v in value if any(str(x).lower().replace("_", " ") in calls or _names_value(x, line)
                                       for x in leaves(v) if isinstance(x, (str, int)) and not isinstance(x, bool))]
        if not own or len(own) == len(value):
            return value
        return own[0] if len(own) == 1 else own

    def _intent_facts(self) -> set[str]:
        split = self.task.meta.get("intent_gold")
        if not self.per_intent or not isinstance(split, list) or self.position >= len(split):
            return set()
        return set(split[self.position].get("facts") or [])

    def _preference(self) -> str | None:
        prefs = self.task.user.known.get("preferences")
        if not prefs:
            return None
        prefs = prefs if isinstance(prefs, list) else [prefs]
        return "I would like to " + "; and ".join(str(p) for p in prefs) + "."

    def _describes_request(self, text: str) -> bool:
        """False when a confirmation names an id, flight, date or cabin that is not part of this request."""
        goal = self.goals[self.position] if self.per_intent else self.goals[0]
        expected = {v.lower().replace("_", " ") for v in goal.values}
        if not expected:
            return True
        for pattern in _SALIENT.values():
            named = {m.lower().replace("_", " ") for m in pattern.findall(text)}
            if named and not named & expected and any(pattern.fullmatch(v) or pattern.search(v) for v in goal.values):
                return False
        return True

    def _offers_less(self, text: str) -> bool:
        """True when the user declines smaller offers and the agent proposes less than a refused request asked
        ("I can credit $50 instead, shall I?" after a refused $75 credit)."""
        if _DECLINES_LESS not in self.task.user.instruction:
            return False
        asked = [float(v) for r in self.task.meta.get("refused", []) for v in leaves(r.get("arguments", {}))
                 if not isinstance(v, bool) and re.fullmatch(r"\d+(?:\.\d+)?", str(v))]
        named = [float((a or b).replace(",", "")) for a, b in _OFFERED.findall(text)]
        return bool(asked and named) and all(n < max(asked) for n in named)

    def _with_friction(self, kind: str | None, reply: str) -> str:
        if kind is None:
            return reply
        said, ended = self.patience.friction(kind)
        if said is None:
            return reply
        if ended:
            return said
        return f"{said} {reply}"

    async def respond(self, message: Message) -> Message:
        text = (message.content or "").strip()
        repeated = text == self.last_agent_text
        self.last_agent_text = text
        request = self.intents[self.position]
        handled, missing = self._handled(text)
        if handled and text:
            self.position += 1
            if self.position >= len(self.intents):
                done = self.view.end_tokens.done
                return Message(role="user", content=f"{self.style.done()} {done}" if done else self.style.done())
            return Message(role="user", content=self.style.next_request(self._with_volunteered(self.intents[self.position])))
        lower = text.lower()
        if "?" in text and not _ANYTHING_ELSE.search(lower):
            keys = self._asked_keys(text)
            if _CONFIRM.search(lower):  # "I will change reservation X ... Shall I proceed?" is not a question about X
                if not self._describes_request(text) or self._offers_less(text):
                    reply = self._with_friction("no_progress", self.style.correct(request))
                else:
                    reply = self._with_friction("no_progress" if repeated else None, self.style.confirm())
            elif keys:
                kind = "repeated_question" if all(k in self.told for k in keys) else None
                self.told.update(keys)
                said: dict[str, str] = {}  # one sentence per value: 'check_outs' narrowed and 'check_out' say one date
                for k in keys:
                    value = self._value(k)
                    name = k if isinstance(value, list) or value == self.task.user.known[k] else singular_key(k)
                    said.setdefault(json.dumps(value, sort_keys=True, default=str), state_fact(name, value))
                facts = " ".join(said.values())
                if self.ahead:
                    facts = f"That is for my next request, but since you ask: {facts}"
                reply = self._with_friction(kind, self.style.answer(facts))
            elif _CHOICE.search(lower) and self._preference():
                reply = self._with_friction("repeated_question" if repeated else None,
                                            self.style.answer(self._preference() or ""))
            elif self._asks_for_nothing(lower):
                # "the address2?" for an address without a second line: there is none, which the user knows
                reply = self._with_friction("repeated_question" if repeated else None,
                                            self.style.answer("There isn't one; leave it empty."))
            else:
                reply = self._with_friction("unknown_question", self.style.dont_know())
            return Message(role="user", content=reply)
        what = "; ".join(missing) or "nothing has happened yet"
        return Message(role="user", content=self._with_friction("no_progress", self.style.restate(what, request)))


@hookimpl
def tau_register_users(register):
    register("scripted", ScriptedUser)
