"""Validation: every reason a candidate can be rejected for, raised here and nowhere else.

Each check raises `Reject(check, detail)`; `tau tracer build` counts rejections per check (`CHECKS`, in the
order of the build's stages), and `tau tracer audit` runs the split-level checks (`SplitChecks`) over a built split.
The other stages report what went wrong as their own outcome, and the validator judges it: the grounder's
`DeadEnd`, the condition a candidate cannot take (`Fits.misfit`), the classifier's reading of the feelings
(`misread`), the rollout's verdict (`Validator.check_rollout`).

- `ungroundable`, `length` (ground): the grounder reached a dead end, or a walk longer than the profile allows.
- `feelings`, `balance` (design, feel): the candidate cannot take any condition left in the design (no feelings
  cue fits its events, the emotion needs an occasion it cannot have, its family has enough tasks like it), or
  the classifier never read its feelings back as the condition.
- `replay`: the gold calls replay without a tool error, give the same results as while grounding
  and the same final database hash (a tool reading a clock or a counter fails here).
- `provenance`: every argument of every gold call, and every gold output, is known to the user
  or was returned by an earlier call (or is a number of the policy); every read is used: its
  result feeds a later call or an output, or it checks a fact the decision rests on.
- `ambiguous`: every declared choice is settled by what the user says, and no write argument was
  taken from a list of alternatives that no choice covers; and no other row the user owns (another bill,
  line, reservation) fits every fact the user's words state about a written (or refused) entity while the
  same call is legal on it (`answers.alternative_bindings`).
- `policy`: no gold write breaks a policy rule of the pack, and every refused request breaks one; and no
  refused request has a smaller variant the rules accept (a credit of 50 where 75 is over the limit), since
  an agent offering it would follow the policy and fail the gold (`answers.compliant_variant`).
- `trivial`: the task needs something an agent that does nothing would not do: a database change,
  an output, or a handover.
- `leak`: the instruction and the user's lines name no id the user does not know.
- `consistency`: the task does not state the answer it asks for, nor redo or undo itself.
- `world`: every gold write changes the database, and the pack's `TracerHints.world` finds the requests true of the
  records (`tracer/world.py`).
- `unread`: every figure the user asks for is in a gold call's result of that intent or an earlier one, not only a
  number the policy happens to write (`world.unread_output`).
- `situation`: the pack's `TracerHints.situation` finds nothing in the request's reasons or the task's occasion
  that the database contradicts (a change of mind about a trip already flown, an occasion on someone else's
  booking).
- `duplicate`: the task is not a near-duplicate of an accepted task (same goal calls), repeats no write
  sequence, and (outside train) has a user and written entities no accepted task of the split has.
- `rollout`: the optional model rollout solved the task.
- `split`: no user or written entity of another split.
"""

from __future__ import annotations

import re
import weakref
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from tau_emotion.core.models import Action
from tau_emotion.core.state import canonical_json
from tau_emotion.tracer.answers import DECLINE_LESS, DECLINED, Call, alternative_bindings, refusal_variants
from tau_emotion.tracer.design import (
    CHALLENGE_SLACK,
    INTENT_STRATA,
    KIND_SLACK,
    kinds_fit,
    length_bin,
    needs_occasion,
    occasion_fits,
    share_fits,
)
from tau_emotion.tracer.feelings import FitMemo, situation
from tau_emotion.tracer.hints import TracerHints, load_hints
from tau_emotion.tracer.plan import refused_calls
from tau_emotion.tracer.provenance import _NUMBERS, Knowledge, leaves, norm, parse_result, phrase_in
from tau_emotion.tracer.world import unread_output, world_problems

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn

    from tau_emotion.core.domain import Domain
    from tau_emotion.core.models import Task
    from tau_emotion.tracer.grounding import Candidate, DeadEnd

CHECKS = ("ungroundable", "length", "refine", "replay", "provenance", "ambiguous", "policy", "trivial", "leak",
          "consistency", "situation", "world", "unread", "duplicate", "split", "rollout", "feelings", "balance")
_ID = re.compile(r"^[A-Za-z0-9_\-]{5,}$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
_WORDS = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-]*[A-Za-z0-9]")
DUPLICATE_OVERLAP = 0.5
#: the most a stall relaxes the challenge and intents strata (the audit holds them to 1.5 tasks at the end)
STALL_CAP = 1.25


class Reject(Exception):
    """A candidate fails one check; `check` names it for the rejection breakdown (one of `CHECKS`)."""

    def __init__(self, check: str, detail: str):
        super().__init__(f"{check}: {detail}")
        self.check = check
        self.detail = detail


def signature(actions: Iterable[tuple[str, dict[str, Any], bool]]) -> frozenset[str]:
    """What a task asks to be done: its goal calls (refused ones marked), canonically."""
    return frozenset(f"{'!' if refused else ''}{name}:{canonical_json(args)}" for name, args, refused in actions)


def task_signature(domain: Domain, task: Task) -> frozenset[str]:
    tools = domain.toolset
    calls = [(a.name, a.arguments, False) for a in task.gold.actions
             if a.name in tools and (tools[a.name].writes or tools[a.name].terminal)]
    calls += [(r["name"], r["arguments"], True) for r in refused_calls(task)]
    return signature(calls)


def candidate_signature(domain: Domain, cand: Candidate) -> frozenset[str]:
    tools = domain.toolset
    calls = [(s.name, s.arguments, False) for s in cand.steps
             if s.role == "goal" or tools[s.name].writes or tools[s.name].terminal]
    calls += [(r.name, r.arguments, True) for r in cand.refusals]
    return signature(calls)


def existing_ids(value: Any) -> set[str]:
    """Every id-like string anywhere in the database: row keys, nested keys (a user's payment method ids)
    and string values, so that a write echoing a record back is not taken to have created its ids."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.update(str(k) for k in item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and _ID.match(item):
            found.add(item)
    return found


def task_user(task: Task) -> str | None:
    return task.meta.get("user") or task.user.known.get("user_id")


def writes(domain: Domain, task: Task) -> list[tuple[str, tuple[tuple[str, str], ...]]]:
    """The task's write (and handover) calls as (tool, the ids it names), in order. A handover names the ids of
    the refused calls it follows (two handovers for different refused requests are different tasks)."""
    tools = domain.toolset
    refused = tuple(sorted({(k, str(v)) for r in refused_calls(task)
                            for k, v in (r.get("arguments") or {}).items() if k.endswith("_id")}))
    out = []
    for action in task.gold.actions:
        tool = tools[action.name] if action.name in tools else None
        if tool is not None and (tool.writes or tool.terminal):
            ids = tuple(sorted((k, str(v)) for k, v in action.arguments.items() if k.endswith("_id")))
            out.append((action.name, ids + refused if tool.terminal else ids))
    return out


def written_entities(domain: Domain, task: Task) -> set[tuple[str, str]]:
    """The entities the task's writes name (a handover's refused ids are not written)."""
    return {pair for name, ids in writes(domain, task) if not domain.toolset.is_terminal(name) for pair in ids}


def initial_ids(database: Any) -> frozenset[str]:
    """`existing_ids` of a database snapshot, walked once per snapshot (it never changes) and kept while it lives."""
    try:
        ids = _INITIAL_IDS.get(database)
    except TypeError:  # a database that cannot be weakly referenced is walked every time
        return frozenset(existing_ids(database.tables))
    if ids is None:
        ids = _INITIAL_IDS[database] = frozenset(existing_ids(database.tables))
    return ids


#: database snapshot -> its `existing_ids` (a cache of what a frozen snapshot holds: no order of calls changes it)
_INITIAL_IDS: weakref.WeakKeyDictionary[Any, frozenset[str]] = weakref.WeakKeyDictionary()


class DuplicateIndex:
    """Accepted tasks by signature; a candidate sharing at least half its goal calls with one is a duplicate."""

    def __init__(self) -> None:
        self.signatures: list[frozenset[str]] = []
        self.by_call: dict[str, list[int]] = defaultdict(list)

    def add(self, sig: frozenset[str]) -> None:
        self.signatures.append(sig)
        for call in sig:
            self.by_call[call].append(len(self.signatures) - 1)

    def duplicate_of(self, sig: frozenset[str]) -> int | None:
        for i in sorted({i for call in sig for i in self.by_call.get(call, [])}):
            other = self.signatures[i]
            if len(sig & other) / len(sig | other) >= DUPLICATE_OVERLAP:
                return i
        return None


class Validator:
    """All checks for one domain; `register` an accepted candidate so later ones are compared with it."""

    def __init__(self, domain: Domain, existing: Iterable[Task] = (), hints: TracerHints | None = None):
        """`hints`: the pack's (their `situation` check); default `load_hints(domain)`."""
        self.domain = domain
        hints = hints if hints is not None else load_hints(domain)
        self.situation = hints.situation
        self.world = hints.world
        self.tools = domain.toolset
        self.base = Knowledge()
        self.base.add_policy(domain.policy)
        self.initial_hash = domain.database.content_hash
        self.initial_ids = initial_ids(domain.database)
        self.index = DuplicateIndex()
        for task in existing:
            sig = task_signature(domain, task)
            if sig:
                self.index.add(sig)

    def check(self, cand: Candidate) -> None:
        if cand.task is None:
            raise Reject("refine", "the candidate has no task yet")
        self.check_replay_and_policy(cand)
        knowledge = self.check_provenance(cand)
        self.check_choices(cand, knowledge)
        self.check_trivial(cand)
        self.check_leak(cand, knowledge)
        self.check_consistency(cand)
        self.check_situation(cand)
        self.check_world(cand)
        self.check_one_answer(cand)
        self.check_duplicate(cand)

    def register(self, cand: Candidate) -> None:
        self.index.add(candidate_signature(self.domain, cand))

    def check_grounding(self, end: DeadEnd) -> NoReturn:
        """The grounder's dead end as a rejection: `length` for a walk past the profile, else `ungroundable`."""
        raise Reject("length" if end.too_long else "ungroundable", end.detail)

    def check_rollout(self, cand: Candidate, rollout: Callable[[Candidate], str | None] | None) -> None:
        """The optional rollout (`rollout.RolloutCheck`): what it says went wrong rejects the candidate."""
        why = rollout(cand) if rollout is not None else None
        if why:
            raise Reject("rollout", why)

    # ----------------------------------------------------------------------- checks

    def check_replay_and_policy(self, cand: Candidate) -> None:
        state = self.domain.database.state()
        refusals = sorted(cand.refusals, key=lambda r: r.at)
        for i, step in enumerate([*cand.steps, None]):
            for refusal in [r for r in refusals if r.at == i]:
                if not self.domain.violations(state, Action(name=refusal.name, arguments=refusal.arguments)):
                    raise Reject("policy", f"refused {refusal.name} breaks no policy rule, so refusing is not required")
            if step is None:
                break
            tool = self.tools.tools.get(step.name)
            if tool is None:
                raise Reject("replay", f"gold call {i} names unknown tool {step.name}")
            if tool.terminal and i != len(cand.steps) - 1:
                raise Reject("replay", f"terminal {step.name} is not the last gold call")
            if tool.writes:
                broken = self.domain.violations(state, Action(name=step.name, arguments=step.arguments))
                if broken:
                    raise Reject("policy", f"{step.name}: {broken[0].reason}")
            text, is_error = self.tools.call(state, step.name, step.arguments)
            if is_error:
                raise Reject("replay", f"gold call {i} ({step.name}) fails on replay: {text}")
            if text != step.text:
                raise Reject("replay", f"gold call {i} ({step.name}) returns something else on replay: not deterministic")
        if cand.end_hash and state.content_hash != cand.end_hash:
            raise Reject("replay", "the final database differs between two runs of the gold calls: not deterministic")

    def _free(self, name: str) -> tuple[str, ...]:
        tool = self.tools[name]
        if not tool.terminal:
            return ()
        return tuple(p for p, spec in tool.parameters.get("properties", {}).items() if spec.get("type") == "string")

    def check_provenance(self, cand: Candidate) -> Knowledge:
        assert cand.task is not None
        knowledge = self.base.copy()
        knowledge.add_known(cand.task.user.known)
        for draft in cand.drafts:
            knowledge.add_derived(draft.policy_values)
        names = [s.name for s in cand.steps]
        for i, step in enumerate(cand.steps):
            missing = knowledge.missing(step.arguments, skip=self._free(step.name))
            if missing:
                path, value = missing[0]
                raise Reject("provenance", f"{step.name}.{path}={value!r} is neither known to the user "
                                           f"nor returned by an earlier call")
            knowledge.add_result_text(i, step.text, step.arguments)
        for output in cand.task.gold.outputs:
            if output not in knowledge and not phrase_in(output, self.domain.policy):
                raise Reject("provenance", f"output {output!r} is not in any tool result nor in the policy")
        # a read is used when something it returned feeds a later call or an output
        wanted: set[tuple[str, Any]] = {k for o in cand.task.gold.outputs if (k := norm(o)) is not None}
        evidence = set(cand.evidence)
        for i in range(len(cand.steps) - 1, -1, -1):
            step = cand.steps[i]
            tool = self.tools[step.name]
            if not (tool.writes or tool.terminal or step.role == "goal" or step.name in evidence):
                if not knowledge.keys_of_text(step.text) & wanted:
                    raise Reject("provenance", f"read {i} ({step.name}) is not used: nothing it returns feeds a "
                                               f"later call or an output (calls: {' -> '.join(names)})")
            for _, value in leaves(step.arguments):
                if (k := norm(value)) is not None:
                    wanted.add(k)
                if isinstance(value, str) and k not in knowledge.sources:
                    wanted.update(k2 for n in _NUMBERS.findall(value.replace(",", "")) if (k2 := norm(n)) is not None)
        return knowledge

    def check_choices(self, cand: Candidate, knowledge: Knowledge) -> None:
        covered = set()
        for draft in cand.drafts:
            for choice in draft.choices:
                left = choice.resolve()
                if left != [choice.value]:
                    what = (f"{len(left)} {choice.what} options fit what the user says" if len(left) != 1
                            else f"what the user says picks another {choice.what}")
                    raise Reject("ambiguous", f"{draft.kind}: {what}")
                covered.add(norm(choice.value))
        # picking one alternative settles all of its fields (a gift card chosen: its balance too)
        picked = {(src.step, src.record) for key in covered if (src := knowledge.sources.get(key)) and src.record}
        names = [s.name for s in cand.steps]
        for step in cand.steps:
            if not self.tools[step.name].writes:
                continue
            for path, value in leaves(step.arguments):
                source = knowledge.source(value)
                if source is None or source.kind != "result" or source.alternatives < 2 or norm(value) in covered:
                    continue
                if (source.step, source.record) in picked:
                    continue
                raise Reject("ambiguous", f"{step.name}.{path}={value!r} is one of {source.alternatives} alternatives "
                                          f"in {source.describe(names)} and nothing the user says picks it")

    def check_trivial(self, cand: Candidate) -> None:
        assert cand.task is not None
        changes = bool(cand.end_hash) and cand.end_hash != self.initial_hash
        handover = any(self.tools[s.name].terminal for s in cand.steps)
        if not (changes or cand.task.gold.outputs or cand.task.gold.reasons or handover):
            raise Reject("trivial", "no database change, no output and no handover: doing nothing would pass")
        for draft in cand.drafts:
            if draft.refused and not draft.outputs and draft.on_refusal != "transfer":
                raise Reject("trivial", f"{draft.kind}: a refusal with nothing to say and no handover is not checked")

    def check_leak(self, cand: Candidate, knowledge: Knowledge) -> None:
        assert cand.task is not None
        user = cand.task.user
        said = set(_WORDS.findall(" ".join([user.instruction, *user.intents])))
        known = {t for _, v in leaves(user.known) if isinstance(v, str) for t in [v, *_WORDS.findall(v)]}
        for step in cand.steps:
            for _, value in leaves(parse_result(step.text)):
                if (isinstance(value, str) and value in said and value not in known and not _DATE.match(value)
                        and _ID.match(value) and (value.isupper() or any(c.isdigit() or c == "_" for c in value))):
                    raise Reject("leak", f"the user's words name {value!r}, which the user cannot know")

    def check_consistency(self, cand: Candidate) -> None:
        """A task a person would write: it does not state the answer it asks for, nor redo or undo itself."""
        assert cand.task is not None
        words = " ".join([cand.task.user.instruction, *cand.task.user.intents]).lower()
        for output in cand.task.gold.outputs:
            if re.fullmatch(r"[A-Za-z][A-Za-z ]+", output) and re.search(rf"\b{re.escape(output.lower())}\b", words):
                raise Reject("consistency", f"the user's words already say {output!r}, which the task asks about")
        written: dict[tuple[str, str], str] = {}
        created: dict[str, str] = {}  # ids a write of this task brought into being -> that write
        born: dict[str, int] = {}  # -> the intent that wrote it
        for step in cand.steps:
            if step.role != "goal" or not self.tools[step.name].writes:
                continue
            for key, value in step.arguments.items():
                if key.endswith("_id") and str(value) in created:
                    raise Reject("consistency", f"{step.name} changes {value}, which {created[str(value)]} just "
                                                f"created: a person would have asked for it that way at once")
            for _, value in leaves(parse_result(step.text)):
                if isinstance(value, str) and _ID.match(value) and value not in created \
                        and value not in self.initial_ids:
                    created[value] = step.name
                    born[value] = step.intent
            for key, value in step.arguments.items():
                # the caller's own id (a student's, on every school write) names who asks, not what is written
                if key.endswith("_id") and not key.startswith(("payment", "user")) \
                        and str(value) != str(cand.persona.entity):
                    entity = (key, str(value))
                    if entity in written:
                        raise Reject("consistency", f"{step.name} writes {key} {value} again after "
                                                    f"{written[entity]}: a follow-up that redoes or undoes the task")
                    written[entity] = step.name
        for i, draft in enumerate(cand.drafts):  # a refused or declined request on what the task just created
            for key, value in draft.arguments.items():
                if key.endswith("_id") and born.get(str(value), i) < i:
                    raise Reject("consistency", f"{draft.goal} asks about {value}, which "
                                                f"{created[str(value)]} just created")

    def check_situation(self, cand: Candidate) -> None:
        judge = self.situation
        if judge is not None and (why := judge(self.domain.database.state(), cand)):
            raise Reject("situation", why)

    def check_world(self, cand: Candidate) -> None:
        """Requests true of the world (issue 34 item 5) and figures read before they are told (item 6)."""
        why = world_problems(self.domain, cand, self.world)
        if why:
            raise Reject("world", why)
        why = unread_output(cand, self.domain.policy)
        if why:
            raise Reject("unread", why)

    def check_one_answer(self, cand: Candidate) -> None:
        """One right answer (issue 21): no other row of the user's that their words fit and on which the gold write
        (or the refused request) is legal; no refused call with a smaller variant the rules accept."""
        assert cand.task is not None
        steps = [(s.name, s.arguments) for s in cand.steps]
        refused = [Call(r.name, r.arguments, r.at, True) for r in cand.refusals]
        user = cand.persona.entity if cand.persona.entity is not None else cand.known.get("user_id")
        user_spec = cand.task.user
        found = alternative_bindings(self.domain, user, steps, refused, user_spec.instruction, user_spec.intents,
                                     user_spec.known)
        if found:
            raise Reject("ambiguous", found[0])
        # a user who turns down less than they ask (`DECLINE_LESS`, said in the instruction) keeps the refusal gold
        said = DECLINED in user_spec.instruction.lower()
        undeclined = [c for c, r in zip(refused, cand.refusals, strict=True)
                      if not (said and r.intent < len(cand.drafts) and DECLINE_LESS in cand.drafts[r.intent].preferences)]
        variants = refusal_variants(self.domain, steps, undeclined)
        if variants:
            raise Reject("policy", variants[0])

    def check_duplicate(self, cand: Candidate) -> None:
        sig = candidate_signature(self.domain, cand)
        goals = sum(1 for s in cand.steps if s.role == "goal") + len(cand.refusals)
        if len(sig) < goals:
            raise Reject("duplicate", "asks for the same goal call twice")
        if self.index.duplicate_of(sig) is not None:
            raise Reject("duplicate", "shares at least half of its goal calls with an accepted task")



class SplitChecks:
    """What a task must not share with the rest of its split and with the other splits (issue 21): no user or
    written entity of another Tracer-built split (`split`), no repeated write sequence, and outside train one task
    per user and one write per entity (`duplicate`). The build asks each candidate in turn and `add`s the ones it
    accepts; `tau tracer audit` replays a built split through the same checks.

    `reserved`: tasks of splits built before (the build's `avoid`), checked first. `apart`: tasks of the other
    Tracer-built splits (`keep_apart`), checked last, so a split built in the documented order (test, then train
    avoiding it) comes out exactly as before, and one built in the other order is still clean.
    """

    def __init__(self, domain: Domain, split: str, reserved: Iterable[Task] = (), apart: Iterable[Task] = ()):
        self.domain = domain
        self.split = split
        built = [t for t in reserved if t.meta.get("source") == "tracer"]
        apart = list(apart)
        self.reserved_users = {task_user(t) for t in built} - {None}
        self.reserved_entities = set().union(set(), *(written_entities(domain, t) for t in built))
        self.apart_users = {task_user(t) for t in apart} - {None} - self.reserved_users
        self.apart_entities = set().union(set(), *(written_entities(domain, t) for t in apart)) - self.reserved_entities
        self.sequences: set[tuple[Any, ...]] = set()
        self.users: set[Any] = set()
        self.entities: set[tuple[str, str]] = set()

    def check_user(self, user: Any) -> None:
        """The candidate's user belongs to a split built before (checked as soon as the user is known)."""
        if user in self.reserved_users:
            raise Reject("split", f"user {user} belongs to another split")

    def check_sequence(self, task: Task) -> None:
        sequence = tuple(writes(self.domain, task))
        if sequence and sequence in self.sequences:
            raise Reject("duplicate", f"repeats the write sequence of an accepted task: {sequence}")

    def check_reserved_entities(self, task: Task) -> None:
        if written_entities(self.domain, task) & self.reserved_entities:
            raise Reject("split", "writes an entity another split writes")

    def check_one_user(self, task: Task) -> None:
        """One task per user outside train (train reuses users by design)."""
        user = task_user(task)
        if self.split != "train" and user is not None and user in self.users:
            raise Reject("duplicate", f"user {user} already has a task in this split")

    def check_one_write(self, task: Task) -> None:
        """One write per entity outside train."""
        again = written_entities(self.domain, task) & self.entities if self.split != "train" else set()
        if again:
            raise Reject("duplicate", f"writes {sorted(again)[0]}, which an accepted task writes")

    def check_apart_user(self, user: Any) -> None:
        if user in self.apart_users:
            raise Reject("split", f"user {user} belongs to another split")

    def check_apart_entities(self, task: Task) -> None:
        both = written_entities(self.domain, task) & self.apart_entities
        if both:
            raise Reject("split", f"writes {sorted(both)[0]}, which another split writes")

    def check_apart(self, task: Task, user: Any) -> None:
        """The splits kept apart: the candidate's user, then the entities it writes."""
        self.check_apart_user(user)
        self.check_apart_entities(task)

    def check(self, task: Task) -> None:
        """The checks against the split so far, in the build's order (`check_apart` comes after the rollout)."""
        self.check_sequence(task)
        self.check_reserved_entities(task)
        self.check_one_user(task)
        self.check_one_write(task)

    def add(self, task: Task) -> None:
        self.sequences.add(tuple(writes(self.domain, task)))
        self.users.add(task_user(task))
        self.entities.update(written_entities(self.domain, task))


# --------------------------------------------------------------------------- the condition a candidate takes


def stratum(cand: Candidate) -> dict[str, Any]:
    """What the build balances across emotion families: whether the task is a policy challenge, how many
    intents the user states (1, 2, 3+; a refusal the user insists on is two, as in `intent_gold`), whether it carries a
    decision rule, and its gold length (`design.length_bin`); its request kinds separately (`kinds_fit`)."""
    intents = sum(1 + int(bool(d.refused and d.on_refusal == "transfer")) for d in cand.drafts)
    return {"challenge": bool(cand.policy_challenge), "intents": min(intents, INTENT_STRATA),
            "rule": any(d.decision for d in cand.drafts), "length": length_bin(len(cand.gold_actions))}


class Fits:
    """Why one candidate cannot take a condition (`misfit`: feelings that would not fit its events, an emotion that
    needs an occasion the task cannot have, or a family with enough or too few tasks like it, `design.share_fits`)
    and the occasions that give a condition its cause (`occasions`), while the build looks for its condition (the
    strata and the slack do not change meanwhile): the situation with each occasion made once, the feelings parts
    remembered per situation (`feelings.FitMemo`), the balance per family."""

    def __init__(self, cand: Candidate, occasions: list[tuple[str, int, str]], allowed: bool,
                 strata: dict[str, dict[str, Counter]] | None = None, slack: float = 1):
        self.cand, self.allowed, self.strata, self.slack = cand, allowed, strata, slack
        self._occasions = occasions
        self._memos: dict[Any, FitMemo] = {}
        self._balance: dict[str, Reject | None] = {}

    def feelings(self, condition: dict[str, str], occasion: tuple[str, int, str] | None = None) -> str | None:
        """`feelings_misfit` of `condition` in the candidate's situation (with `occasion` in its own's place)."""
        if occasion not in self._memos:
            self._memos[occasion] = FitMemo(situation(self.cand, occasion))
        return self._memos[occasion].misfit(condition)

    def occasions(self, condition: dict[str, str]) -> list[tuple[str, int, str]]:
        """The occasions that give `condition` its cause beside the candidate's events (none when it may have none)."""
        return [o for o in self._occasions if occasion_fits(o[2], condition)
                and self.feelings(condition, o) is None] if self.allowed else []

    def misfit(self, condition: dict[str, str]) -> Reject | None:
        why = None if needs_occasion(condition) else self.feelings(condition)
        if needs_occasion(condition) or why is not None:  # the appraisal may find the cause in an occasion instead
            if not self.occasions(condition):
                return Reject("feelings", why or f"{condition['emotion']} needs an occasion that gives reason for it")
        family = condition["family"]
        if family not in self._balance:
            self._balance[family] = self._family_misfit(family)
        return self._balance[family]

    def _family_misfit(self, family: str) -> Reject | None:
        strata, slack, cand = self.strata, self.slack, self.cand
        assert strata is not None, "the balance needs the build's strata"
        for name, value in stratum(cand).items():
            room = CHALLENGE_SLACK * slack if name in ("length", "rule") else min(CHALLENGE_SLACK * slack, STALL_CAP)
            if not share_fits(strata[name], family, value, room):
                kind = {"challenge": "a policy challenge" if value else "no policy challenge",
                        "intents": f"{value}{'+' if value == INTENT_STRATA else ''} intent(s)",
                        "rule": "a decision rule" if value else "no decision rule",
                        "length": f"gold length bin {value}"}[name]
                return Reject("balance", f"{family} has enough tasks with {kind} for the split's running share")
        sizes = Counter({f: sum(c.values()) for f, c in strata["challenge"].items()})
        if not kinds_fit(strata["kinds"], sizes, family, [d.kind for d in cand.drafts], KIND_SLACK * slack):
            return Reject("balance", f"{family} has enough {'/'.join(d.kind for d in cand.drafts)} "
                                     f"requests for the split's running share")
        return None


def incoherent(condition: dict[str, str], tries: int) -> Reject:
    """The rejection of a candidate whose `tries` feelings texts all failed the coherence audit."""
    return Reject("feelings", f"{tries} feelings texts for {condition['family']}.{condition['emotion']} "
                              f"fail the coherence audit")


def misread(condition: dict[str, str], reading: dict[str, str], tries: int) -> Reject:
    """The rejection of a candidate whose `tries` feelings texts the classifier never read back as `condition`."""
    return Reject("feelings", f"{tries} feelings texts for {condition['family']}.{condition['emotion']} "
                              f"were read as {reading['family']}.{reading['emotion']}")
