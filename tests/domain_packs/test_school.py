"""Behaviour of the school pack's tools, rules and hand tasks against its real generated database."""

from __future__ import annotations

import json
from importlib.resources import files

import pytest

from tau_emotion.core.domain import Domain
from tau_emotion.domain_packs.school import generate_db, rules, tau_register_domains
from tau_emotion.domain_packs.school.tools import TUITION_PER_CREDIT, age_on, balance, current_enrollments
from tau_emotion.tracer.plan import decision_branches, refused_calls
from tests.domain_packs.graph_properties import check_graph

DATA = files("tau_emotion.domain_packs.school").joinpath("data")


@pytest.fixture(scope="module")
def domain() -> Domain:
    found: list[Domain] = []
    tau_register_domains(found.append)
    assert [d.name for d in found] == ["school"]
    return found[0]


@pytest.fixture()
def state(domain):
    return domain.database.state()


def call(domain, state, name, **arguments):
    text, is_error = domain.toolset.call(state, name, arguments)
    assert not is_error, text
    return json.loads(text) if text[:1] in "[{" else text


def _first(state, table, test):
    return next(row for _, row in state[table].scan() if test(row))


def login(domain, state, row):
    return call(domain, state, "verify_caller", phone_number=row["phone_number"], date_of_birth=row["date_of_birth"])


def adult(s):
    return age_on(s["date_of_birth"]) >= 18


def _student(state, test):
    return _first(state, "students", test)


def _section(state, test):
    return _first(state, "sections", test)


# --------------------------------------------------------------------------- database and generator


def test_generator_rewrites_the_shipped_database_byte_for_byte(tmp_path):
    out = tmp_path / "db.json"
    generate_db.main(["--seed", "0", "--out", str(out)])
    assert out.read_bytes() == DATA.joinpath("db.json").read_bytes()
    assert out.stat().st_size < 3_000_000
    generate_db.main(["--seed", "1", "--out", str(out)])
    assert out.read_bytes() != DATA.joinpath("db.json").read_bytes()


def test_database_scale_variety_and_consistency(domain, state):
    t = domain.database.tables
    assert len(t["students"]) == 600 and len(t["enrollments"]) > 1500 and len(t["absences"]) > 1000
    students = list(t["students"].values())
    assert 60 < sum(not adult(s) for s in students) < 150
    assert {h["kind"] for s in students for h in s["holds"]} == {"financial", "advising", "immunization", "library"}
    assert sum(s["standing"] == "probation" for s in students) > 10
    assert len({s["student_number"] for s in students}) == len(students)
    sections = list(t["sections"].values())
    assert sum(s["seats_taken"] >= s["capacity"] for s in sections) > 10
    assert {s["session"] for s in sections} == {"full", "A", "B", "Q"}
    for s in sections:  # seat counts agree with the enrollments
        assert s["seats_taken"] == sum(e["crn"] == s["crn"] and e["status"] == "enrolled" for e in t["enrollments"].values())
    for s in students:  # the generated records obey the credit limit, prerequisites and the schedule
        for term in ("2025FA", "2026SP"):
            cap = rules.CREDIT_CAP["minor" if not adult(s) else s["standing"]]
            assert sum(e["credits"] for e in current_enrollments(state, s, term)) <= cap
        for e in current_enrollments(state, s):
            others = [x for x in current_enrollments(state, s, e["term"]) if x["crn"] != e["crn"]]
            fake = {"student_id": s["student_id"], "crn": e["crn"]}
            stripped = {**s, "enrollment_ids": [x["enrollment_id"] for x in others]}
            state["students"][s["student_id"]] = stripped
            assert rules.prerequisites_met(state, "enroll_in_section", fake) is None
            assert rules.no_schedule_conflict(state, "enroll_in_section", fake) is None
            state["students"][s["student_id"]] = s
    assert len(domain.toolset.tools) == 14


# --------------------------------------------------------------------------- tools


def test_nothing_is_read_before_verification(domain, state):
    student = _student(state, adult)
    text, is_error = domain.toolset.call(state, "get_student_record", {"student_id": student["student_id"]})
    assert is_error and "not verified" in text
    guardian = _first(state, "guardians", lambda g: True)
    out = login(domain, state, guardian)
    assert out["kind"] == "guardian" and out["students"][0]["student_id"] in guardian["student_ids"]
    assert call(domain, state, "get_student_record", student_id=guardian["student_ids"][0])["guardians"]


def test_enrolling_charges_tuition_and_dropping_follows_the_refund_schedule(domain, state):
    student = _student(state, lambda s: adult(s) and not current_enrollments(state, s, "2026SP"))
    login(domain, state, student)
    section = _section(state, lambda s: s["term"] == "2026SP" and s["course_code"] == "PSY101")
    before = balance(state, student)
    out = call(domain, state, "enroll_in_section", student_id=student["student_id"], crn=section["crn"])
    assert out["tuition_charged"] == 3 * TUITION_PER_CREDIT
    assert state["sections"].peek(section["crn"])["seats_taken"] == section["seats_taken"] + 1
    dropped = call(domain, state, "drop_section", student_id=student["student_id"], crn=section["crn"])
    assert dropped == {"crn": section["crn"], "course_code": "PSY101", "status": "dropped", "grade": None,
                       "tuition_refunded": 630}
    assert balance(state, student) == before
    full_term = next(e for s in [_student(state, lambda s: any(e["session"] == "full" for e in current_enrollments(state, s)))]
                     for e in current_enrollments(state, s) if e["session"] == "full")
    login(domain, state, state["students"].peek(full_term["student_id"]))
    out = call(domain, state, "drop_section", student_id=full_term["student_id"], crn=full_term["crn"])
    assert out["status"] == "withdrawn" and out["tuition_refunded"] == full_term["credits"] * TUITION_PER_CREDIT * 0.5


def test_paying_the_balance_clears_a_financial_hold(domain, state):
    student = _student(state, lambda s: any(h["kind"] == "financial" for h in s["holds"]) and balance(state, s) > 0
                       and s["payment_methods"])
    login(domain, state, student)
    out = call(domain, state, "make_payment", student_id=student["student_id"], amount=balance(state, student),
               payment_method_id=next(iter(student["payment_methods"])))
    assert out["balance"] == 0 and out["holds_cleared"] == ["financial"]


# --------------------------------------------------------------------------- rules: each allows the compliant action and catches the violation


def test_own_or_linked_student(domain, state):
    me, other = _student(state, adult), _student(state, lambda s: adult(s) and s["student_id"] != _student(state, adult)["student_id"])
    login(domain, state, me)
    assert rules.own_or_linked_student(state, "get_billing", {"student_id": me["student_id"]}) is None
    assert "own student record" in rules.own_or_linked_student(state, "get_billing", {"student_id": other["student_id"]})
    guardian = _first(state, "guardians", lambda g: True)
    login(domain, state, guardian)
    assert rules.own_or_linked_student(state, "get_student_record", {"student_id": guardian["student_ids"][0]}) is None
    assert rules.own_or_linked_student(state, "get_student_record", {"student_id": me["student_id"]})


def test_adult_student_release(domain, state):
    student = _student(state, lambda s: adult(s) and any(v == ["financial"] for v in s["releases"].values()))
    gid = next(g for g, v in student["releases"].items() if v == ["financial"])
    login(domain, state, state["guardians"].peek(gid))
    assert rules.adult_student_release(state, "get_billing", {"student_id": student["student_id"]}) is None
    assert rules.adult_student_release(state, "get_student_record", {"student_id": student["student_id"]}) is None
    assert "academic release" in rules.adult_student_release(state, "get_academic_record", {"student_id": student["student_id"]})
    minor = _student(state, lambda s: not adult(s) and s["guardian_ids"])
    login(domain, state, state["guardians"].peek(minor["guardian_ids"][0]))
    assert rules.adult_student_release(state, "get_academic_record", {"student_id": minor["student_id"]}) is None


def test_minor_needs_guardian(domain, state):
    minor = _student(state, lambda s: not adult(s))
    login(domain, state, minor)
    args = {"student_id": minor["student_id"], "crn": "x"}
    assert "under 18" in rules.minor_needs_guardian(state, "enroll_in_section", args)
    assert rules.minor_needs_guardian(state, "get_academic_record", args) is None
    login(domain, state, state["guardians"].peek(minor["guardian_ids"][0]))
    assert rules.minor_needs_guardian(state, "enroll_in_section", args) is None


def test_prerequisites_met(state):
    algebra = _section(state, lambda s: s["course_code"] == "MATH121" and s["term"] == "2026SP")
    ready = _student(state, lambda s: any(c["course_code"] == "MATH095" and c["grade"] in "ABC" for c in s["transcript"]))
    failed = _student(state, lambda s: any(c["course_code"] == "MATH095" and c["grade"] in "DFW" for c in s["transcript"])
                      and not any(c["course_code"] == "MATH095" and c["grade"] in "ABC" for c in s["transcript"]))
    new = _student(state, lambda s: not s["transcript"])
    args = {"crn": algebra["crn"]}
    assert rules.prerequisites_met(state, "enroll_in_section", {**args, "student_id": ready["student_id"]}) is None
    assert "MATH095" in rules.prerequisites_met(state, "enroll_in_section", {**args, "student_id": new["student_id"]})
    assert rules.prerequisites_met(state, "enroll_in_section", {**args, "student_id": failed["student_id"]})


def test_section_has_seats(state):
    full = _section(state, lambda s: s["seats_taken"] >= s["capacity"])
    free = _section(state, lambda s: s["seats_taken"] < s["capacity"])
    assert "full" in rules.section_has_seats(state, "enroll_in_section", {"student_id": "x", "crn": full["crn"]})
    assert rules.section_has_seats(state, "enroll_in_section", {"student_id": "x", "crn": free["crn"]}) is None


def test_credit_limit(state):
    four = _section(state, lambda s: s["course_code"] == "SPA101" and s["term"] == "2025FA" and s["session"] == "B")
    minor = _student(state, lambda s: not adult(s) and sum(e["credits"] for e in current_enrollments(state, s, "2025FA")) >= 5)
    light = _student(state, lambda s: adult(s) and s["standing"] == "good"
                     and sum(e["credits"] for e in current_enrollments(state, s, "2025FA")) <= 14)
    assert "limit of 8" in rules.credit_limit(state, "enroll_in_section", {"student_id": minor["student_id"], "crn": four["crn"]})
    assert rules.credit_limit(state, "enroll_in_section", {"student_id": light["student_id"], "crn": four["crn"]}) is None


def test_add_deadline(state):
    started = _section(state, lambda s: s["term"] == "2025FA" and s["session"] == "full")
    later = _section(state, lambda s: s["session"] == "B")
    assert "add/drop deadline" in rules.add_deadline(state, "enroll_in_section", {"student_id": "x", "crn": started["crn"]})
    assert rules.add_deadline(state, "enroll_in_section", {"student_id": "x", "crn": later["crn"]}) is None


def test_withdrawal_deadline(state):
    quick = _section(state, lambda s: s["session"] == "Q")
    full = _section(state, lambda s: s["term"] == "2025FA" and s["session"] == "full")
    assert "withdrawal deadline" in rules.withdrawal_deadline(state, "drop_section", {"student_id": "x", "crn": quick["crn"]})
    assert rules.withdrawal_deadline(state, "drop_section", {"student_id": "x", "crn": full["crn"]}) is None


def test_registration_hold(state):
    held = _student(state, lambda s: any(h["kind"] == "advising" for h in s["holds"]))
    library = _student(state, lambda s: [h["kind"] for h in s["holds"]] == ["library"])
    assert "advising hold" in rules.registration_hold(state, "drop_section", {"student_id": held["student_id"], "crn": "x"})
    assert rules.registration_hold(state, "enroll_in_section", {"student_id": library["student_id"], "crn": "x"}) is None


def test_transcript_hold(state):
    library = _student(state, lambda s: [h["kind"] for h in s["holds"]] == ["library"])
    advising = _student(state, lambda s: [h["kind"] for h in s["holds"]] == ["advising"])
    args = {"delivery": "mail", "copies": 1}
    assert "library hold" in rules.transcript_hold(state, "request_transcript", {**args, "student_id": library["student_id"]})
    assert rules.transcript_hold(state, "request_transcript", {**args, "student_id": advising["student_id"]}) is None


def test_no_schedule_conflict(state):
    student = _student(state, lambda s: any(state["sections"].peek(e["crn"])["days"] == ["Mon", "Wed"]
                                            and state["sections"].peek(e["crn"])["session"] == "full"
                                            for e in current_enrollments(state, s, "2025FA")))
    mine = next(state["sections"].peek(e["crn"]) for e in current_enrollments(state, student, "2025FA")
                if state["sections"].peek(e["crn"])["days"] == ["Mon", "Wed"] and state["sections"].peek(e["crn"])["session"] == "full")
    clash = _section(state, lambda s: s["term"] == "2025FA" and s["session"] == "B" and "Mon" in s["days"]
                     and s["start_time"] < mine["end_time"] and mine["start_time"] < s["end_time"])
    online = _section(state, lambda s: s["term"] == "2025FA" and s["session"] == "B" and not s["days"])
    assert "same time" in rules.no_schedule_conflict(state, "enroll_in_section", {"student_id": student["student_id"], "crn": clash["crn"]})
    assert rules.no_schedule_conflict(state, "enroll_in_section", {"student_id": student["student_id"], "crn": online["crn"]}) is None


def test_payment_plan_eligibility(state):
    planned = _student(state, lambda s: s["payment_plan"] is not None)
    owing = _student(state, lambda s: s["payment_plan"] is None and balance(state, s) >= 300)
    paid = _student(state, lambda s: s["payment_plan"] is None and balance(state, s) == 0)
    check = rules.payment_plan_eligibility
    assert "active payment plan" in check(state, "enroll_payment_plan", {"student_id": planned["student_id"], "installments": 3})
    assert check(state, "enroll_payment_plan", {"student_id": owing["student_id"], "installments": 3}) is None
    assert "under the 300" in check(state, "enroll_payment_plan", {"student_id": paid["student_id"], "installments": 2})


def test_late_fee_waiver_once(state):
    def late_fee_of(test):
        return _first(state, "charges", lambda c: c["kind"] == "late_fee" and test(state["students"].peek(c["student_id"])))
    used = late_fee_of(lambda s: any(w["date"] >= "2025-07-01" for w in s["late_fee_waivers"]))
    last_year = late_fee_of(lambda s: s["late_fee_waivers"] and all(w["date"] < "2025-07-01" for w in s["late_fee_waivers"]))
    assert "used on" in rules.late_fee_waiver_once(state, "waive_late_fee", {"charge_id": used["charge_id"]})
    assert rules.late_fee_waiver_once(state, "waive_late_fee", {"charge_id": last_year["charge_id"]}) is None


def test_absence_window(state):
    friday = _section(state, lambda s: s["term"] == "2025FA" and s["session"] == "full" and s["days"] == ["Fri"])
    args = {"student_id": "x", "crn": friday["crn"], "reason": "illness"}
    assert rules.absence_window(state, "report_absence", {**args, "date": "2025-09-12"}) is None  # this Friday
    assert rules.absence_window(state, "report_absence", {**args, "date": "2025-09-05"})  # five days ago
    assert "no class" in rules.absence_window(state, "report_absence", {**args, "date": "2025-09-11"})  # a Thursday
    assert rules.absence_window(state, "report_absence", {**args, "date": "2025-09-26"})  # 16 days ahead


def test_every_rule_is_listed_and_tested():
    tested = {name[len("test_"):] for name in globals() if name.startswith("test_")}
    assert {rule.name for rule in rules.RULES} <= tested
    assert len(rules.RULES) == 14


def test_tools_stay_permissive_so_the_rules_matter(domain, state):
    """The tools register into a full section and let a minor drop a class: only the rules say no."""
    minor = _student(state, lambda s: not adult(s) and current_enrollments(state, s, "2025FA"))
    login(domain, state, minor)
    crn = current_enrollments(state, minor, "2025FA")[0]["crn"]
    assert rules.violations(state, "drop_section", {"student_id": minor["student_id"], "crn": crn})
    call(domain, state, "drop_section", student_id=minor["student_id"], crn=crn)


# --------------------------------------------------------------------------- hand tasks and graph


def test_hand_tasks_obey_the_rules_follow_the_graph_and_refuse_what_the_rules_forbid(domain):
    tasks = domain.tasks("hand")
    assert len(tasks) >= 3 and sum(bool(t.gold.reasons) for t in tasks) >= 2
    from tau_emotion.tracer.graph import build_graph
    from tau_emotion.tracer.hints import TracerHints

    edges = set(build_graph(domain, TracerHints()).graph.edges)  # declared and inferred (the prober infers edges out of verify_caller)
    for task in tasks:
        assert task.gold.actions[0].name == "verify_caller", task.id
        state = domain.database.state()
        for action in task.gold.actions:
            assert rules.violations(state, action.name, action.arguments) == [], (task.id, action.name)
            text, is_error = domain.toolset.call(state, action.name, action.arguments)
            assert not is_error, (task.id, action.name, text)
        names = [a.name for a in task.gold.actions]
        assert set(zip(names, names[1:], strict=False)) <= edges, task.id
        for refused in refused_calls(task):
            state = domain.database.state()
            for action in task.gold.actions[: refused["after"]]:
                domain.toolset.call(state, action.name, action.arguments)
            assert rules.violations(state, refused["name"], refused["arguments"]), task.id


def test_graph_has_every_tool_and_a_density_in_the_band(domain):
    from tau_emotion.tracer.graph import build_graph
    from tau_emotion.tracer.hints import TracerHints

    graph = build_graph(domain, TracerHints())
    check_graph(domain, graph)
    assert graph.entry_tools == ["verify_caller"]


# --------------------------------------------------------------------------- Tracer hints and the built splits


def test_the_packs_tracer_hints_keep_the_graph(domain):
    from tau_emotion.domain_packs.school.tracer_hints import HINTS
    from tau_emotion.tracer.graph import build_graph

    graph = build_graph(domain, HINTS)
    check_graph(domain, graph, HINTS)
    assert graph.entry_tools == ["verify_caller"]
    writes = {name for name, tool in domain.toolset.tools.items() if tool.writes}
    assert set(HINTS.goals) == writes  # every write is a goal the Tracer grounds


@pytest.mark.parametrize("split", ["test", "train"])
def test_tracer_built_splits_obey_the_rules_and_refuse_what_they_forbid(domain, split):
    tasks = domain.tasks(split)
    assert all(t.meta["source"] == "tracer" for t in tasks)
    if split == "test":
        assert len(tasks) == 58 and sum(len(t.gold.actions) for t in tasks) / len(tasks) >= 6.5
        challenged = [t for t in tasks if refused_calls(t)]
        assert len(challenged) >= 10 and len({r for t in challenged for r in t.gold.reasons}) >= 3
        assert sum(bool(decision_branches(t)) for t in tasks) >= 0.2 * len(tasks)
    else:
        assert len(tasks) >= 600
    for task in tasks[:: 1 if split == "test" else 10]:
        state = domain.database.state()
        refused = {r["after"]: r for r in refused_calls(task)}
        for i, action in enumerate([*task.gold.actions, None]):
            if i in refused:
                assert rules.violations(state, refused[i]["name"], refused[i]["arguments"]), task.id
            if action is None:
                break
            if domain.toolset[action.name].writes:
                assert rules.violations(state, action.name, action.arguments) == [], (task.id, action.name)
            domain.toolset.call(state, action.name, action.arguments)


def test_test_and_train_share_no_user(domain):
    users = {split: {t.meta["user"] for t in domain.tasks(split)} for split in ("test", "train")}
    assert users["test"] and users["train"] and not users["test"] & users["train"]


def test_a_student_struggles_only_with_a_class_that_has_begun(domain, state):
    """'struggling with US History this term' is said of a section that started (a session-B section starts in
    October; school-test-001 of the held-out reading)."""
    from tau_emotion.domain_packs.school.tools import TODAY

    checked = 0
    for task in domain.tasks("test"):
        for event in task.plan.situation.events:
            if " struggling with " not in event:
                continue
            title = event.split(" struggling with ", 1)[1].removesuffix(" this term")
            sections = [state["sections"].peek(a.arguments["crn"]) for a in task.gold.actions
                        if a.name == "drop_section" and
                        state["courses"].peek(state["sections"].peek(a.arguments["crn"])["course_code"])["title"] == title]
            if not sections:
                continue  # a refused drop: the gold writes nothing to read the section from
            assert all(s["start_date"] <= TODAY for s in sections), (task.id, event)
            checked += 1
    assert checked >= 1
