"""Behaviour of the basketball pack's tools, rules and hand tasks against its real generated database."""

from __future__ import annotations

import json
from importlib.resources import files

import pytest

from tau_emotion.core.domain import Domain
from tau_emotion.core.reward import check_task
from tau_emotion.domain_packs.basketball import generate_db, rules, tau_register_domains
from tau_emotion.domain_packs.basketball.tools import UPGRADE_FEE, age_on, days_until, ticket_price
from tau_emotion.tracer.plan import decision_branches, refused_calls
from tests.domain_packs.graph_properties import check_graph
from tests.domain_packs.rule_coverage import check_rules_on_tasks

DATA = files("tau_emotion.domain_packs.basketball").joinpath("data")


@pytest.fixture(scope="module")
def domain() -> Domain:
    found: list[Domain] = []
    tau_register_domains(found.append)
    assert [d.name for d in found] == ["basketball"]
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


def _days(state, order):
    return days_until(state["games"].peek(order["game_code"])["date"])


def _order(state, test):
    return _first(state, "ticket_orders", lambda o: o["status"] == "active" and test(o))


def _member(state, fan_id):
    fan = state["fans"].peek(fan_id)
    return fan["membership_id"] and state["memberships"].peek(fan["membership_id"])["status"] == "active"


# --------------------------------------------------------------------------- database and generator


def test_generator_rewrites_the_shipped_database_byte_for_byte(tmp_path):
    out = tmp_path / "db.json"
    generate_db.main(["--seed", "0", "--out", str(out)])
    assert out.read_bytes() == DATA.joinpath("db.json").read_bytes()
    assert out.stat().st_size < 3_000_000
    generate_db.main(["--seed", "1", "--out", str(out)])
    assert out.read_bytes() != DATA.joinpath("db.json").read_bytes()


def test_database_scale_variety_and_its_own_policy(domain, state):
    tables = domain.database.tables
    assert len(tables["fans"]) == 600 and len(tables["ticket_orders"]) > 1000 and len(tables["games"]) == 41
    orders = list(tables["ticket_orders"].values())
    assert len({o["order_number"] for o in orders}) == len(orders)  # customer-visible and unique
    assert sum(_days(state, o) == 0 for o in orders) > 10  # tonight's game: past the cut-off
    assert sum(o["transfers"] == 1 and _days(state, o) >= 1 for o in orders) > 50
    assert {m["status"] for m in tables["memberships"].values()} == {"active", "past_due"}
    players = list(tables["players"].values())
    assert sum(not p["waiver_signed"] for p in players) > 30 and sum(bool(p["contact_fan_id"]) for p in players) > 30
    for reg in tables["registrations"].values():  # registrations obey age groups, waivers and guardians
        player, program = tables["players"][reg["player_id"]], tables["programs"][reg["program_code"]]
        assert program["min_age"] <= age_on(player["dob"], program["start_date"]) <= program["max_age"]
        assert player["waiver_signed"] and reg["registered_by"] == player["guardian_fan_id"]
    for program in tables["programs"].values():
        assert 0 <= program["enrolled"] <= program["capacity"]
    for stock in tables["inventory"].values():
        assert 0 <= stock["sold"] <= stock["capacity"]
    for order in orders:  # a listing never asks more than face value
        assert order["resale_price"] is None or order["resale_price"] <= order["face_value"]
    held: dict[tuple[str, str], int] = {}
    for order in orders:  # nobody holds more than 8 tickets for one game, transfers included
        key = (order["fan_id"], order["game_code"])
        held[key] = held.get(key, 0) + len(order["seats"])
    assert max(held.values()) <= rules.MAX_TICKETS
    assert 9 <= len(domain.toolset.tools) <= 17


# --------------------------------------------------------------------------- tools


def test_identification_schedule_and_buying(domain, state):
    fan = _first(state, "fans", lambda f: len(f["ticket_order_ids"]) >= 2)
    assert call(domain, state, "find_fan_by_email", email=fan["email"])["fan_id"] == fan["fan_id"]
    details = call(domain, state, "get_fan_details", fan_id=fan["fan_id"])
    assert [o["order_number"] for o in details["ticket_orders"]] == [
        state["ticket_orders"].peek(o)["order_number"] for o in fan["ticket_order_ids"]]
    schedule = call(domain, state, "get_game_schedule")
    assert len(schedule) == 41 and {g["status"] for g in schedule} == {"played", "scheduled"}
    game = next(g for g in schedule if days_until(g["date"]) > 5 and g["tier"] == "rivalry")
    seats = {s["section_code"]: s for s in call(domain, state, "get_seat_availability", game_code=game["game_code"])}
    section = next(c for c, s in seats.items() if s["seats_left"] >= 2)
    assert seats[section]["price"] == state["sections"].peek(section)["base_price"] * 1.5
    out = call(domain, state, "buy_tickets", fan_id=fan["fan_id"], game_code=game["game_code"], section_code=section,
               quantity=2, payment_id=next(iter(fan["payment_methods"])))
    assert out["charged"] == 2 * seats[section]["price"] and len(set(out["seats"])) == 2
    after = call(domain, state, "get_seat_availability", game_code=game["game_code"])
    assert next(s for s in after if s["section_code"] == section)["seats_left"] == seats[section]["seats_left"] - 2
    sold_out = next(k for k, s in state["inventory"].scan() if s["sold"] >= s["capacity"])
    game_code, section_code = sold_out.split(":")
    text, is_error = domain.toolset.call(state, "buy_tickets", {"fan_id": fan["fan_id"], "game_code": game_code,
                                                                "section_code": section_code, "quantity": 1,
                                                                "payment_id": next(iter(fan["payment_methods"]))})
    assert is_error and ("seats left" in text or "was played" in text)


def test_upgrade_charges_the_difference_and_the_fee_to_non_members(domain, state):
    order = _order(state, lambda o: o["section_code"] == "SEC_UPPER_201" and _days(state, o) > 3
                   and not _member(state, o["fan_id"]) and len(o["seats"]) == 2
                   and state["inventory"].peek(f"{o['game_code']}:SEC_LOWER_101")["sold"] <= 298)
    out = call(domain, state, "upgrade_tickets", order_id=order["order_id"], section_code="SEC_LOWER_101")
    new = ticket_price(state, order["game_code"], "SEC_LOWER_101")
    assert out["price_difference"] == round(2 * (new - order["face_value"]), 2) and out["upgrade_fee"] == 2 * UPGRADE_FEE


def test_transfer_moves_the_order_between_accounts(domain, state):
    order = _order(state, lambda o: o["transfers"] == 0 and _days(state, o) >= 1)
    recipient = _first(state, "fans", lambda f: f["fan_id"] != order["fan_id"])
    call(domain, state, "transfer_tickets", order_id=order["order_id"], recipient_email=recipient["email"])
    assert order["order_id"] in state["fans"].peek(recipient["fan_id"])["ticket_order_ids"]
    assert order["order_id"] not in state["fans"].peek(order["fan_id"])["ticket_order_ids"]
    assert state["ticket_orders"].peek(order["order_id"])["transfers"] == 1
    assert "no fan account" in domain.toolset.call(state, "transfer_tickets", {
        "order_id": order["order_id"], "recipient_email": "nobody@example.com"})[0]


def test_relocation_changes_seat_and_balance(domain, state):
    membership = _first(state, "memberships", lambda m: m["tier_code"] == "TIER_LOWER" and m["status"] == "active"
                        and m["section_code"] != "SEC_LOWER_102")
    out = call(domain, state, "relocate_membership_seat", membership_id=membership["membership_id"],
               section_code="SEC_LOWER_102")
    after = state["memberships"].peek(membership["membership_id"])
    assert after["section_code"] == "SEC_LOWER_102" and after["relocations_this_season"] == membership["relocations_this_season"] + 1
    assert out["balance_change"] > 0 and after["balance"] == round(membership["balance"] + out["balance_change"], 2)


def test_registration_and_refund_schedule(domain, state):
    player = _first(state, "players", lambda p: p["waiver_signed"] and 8 <= age_on(p["dob"], "2026-04-06") <= 12
                    and not any(state["registrations"].peek(r)["program_code"] == "CAMP_SPRING_U12"
                                for r in p["registration_ids"]))
    guardian = state["fans"].peek(player["guardian_fan_id"])
    out = call(domain, state, "register_player", fan_id=guardian["fan_id"], player_id=player["player_id"],
               program_code="CAMP_SPRING_U12", payment_id=next(iter(guardian["payment_methods"])))
    assert out["charged"] == 260
    assert call(domain, state, "cancel_registration", registration_id=out["registration_id"])["refunded"] == 260
    near = _first(state, "registrations", lambda r: r["program_code"] == "CLINIC_SHOOTING" and r["status"] == "registered")
    assert call(domain, state, "cancel_registration", registration_id=near["registration_id"])["refunded"] == 22.5
    full = state["programs"].peek("LEAGUE_WINTER_U12")
    assert full["enrolled"] == full["capacity"]


def test_return_refunds_a_delivered_order(domain, state):
    order = _first(state, "merch_orders", lambda o: o["status"] == "delivered")
    assert call(domain, state, "return_merch_order", order_id=order["order_id"])["refunded"] == order["total"]
    shipped = _first(state, "merch_orders", lambda o: o["status"] == "shipped")
    assert "not delivered" in domain.toolset.call(state, "return_merch_order", {"order_id": shipped["order_id"]})[0]


# --------------------------------------------------------------------------- rules: each passes the compliant, catches the violating


def test_ticket_limit(state):
    def held(order):
        fan = state["fans"].peek(order["fan_id"])
        return sum(len(state["ticket_orders"].peek(o)["seats"]) for o in fan["ticket_order_ids"]
                   if state["ticket_orders"].peek(o)["game_code"] == order["game_code"])

    order = _order(state, lambda o: 2 <= held(o) <= 6)
    buy = {"fan_id": order["fan_id"], "game_code": order["game_code"]}
    assert rules.ticket_limit(state, "buy_tickets", {**buy, "quantity": 9 - held(order)})
    assert not rules.ticket_limit(state, "buy_tickets", {**buy, "quantity": 8 - held(order)})


def test_game_day_cutoff(state):
    tonight = _order(state, lambda o: _days(state, o) == 0)
    later = _order(state, lambda o: _days(state, o) >= 1)
    for action in rules.TICKET_ACTIONS:
        assert rules.game_day_cutoff(state, action, {"order_id": tonight["order_id"]})
        assert not rules.game_day_cutoff(state, action, {"order_id": later["order_id"]})


def test_transfer_limit_and_resale_price_cap(state):
    passed = _order(state, lambda o: o["transfers"] == 1)
    fresh = _order(state, lambda o: o["transfers"] == 0)
    assert rules.transfer_limit(state, "transfer_tickets", {"order_id": passed["order_id"]})
    assert not rules.transfer_limit(state, "transfer_tickets", {"order_id": fresh["order_id"]})
    face = fresh["face_value"]
    assert rules.resale_price_cap(state, "list_tickets_for_resale", {"order_id": fresh["order_id"], "price_each": face + 1})
    assert not rules.resale_price_cap(state, "list_tickets_for_resale", {"order_id": fresh["order_id"], "price_each": face})


def test_upgrade_only_higher(state):
    order = _order(state, lambda o: o["section_code"] == "SEC_LOWER_101")
    assert rules.upgrade_only_higher(state, "upgrade_tickets", {"order_id": order["order_id"], "section_code": "SEC_UPPER_202"})
    assert rules.upgrade_only_higher(state, "upgrade_tickets", {"order_id": order["order_id"], "section_code": "SEC_LOWER_104"})
    assert not rules.upgrade_only_higher(state, "upgrade_tickets", {"order_id": order["order_id"],
                                                                    "section_code": "SEC_LOWER_102"})


def test_relocation_rules(state):
    used = _first(state, "memberships", lambda m: m["relocations_this_season"] == 1)
    fresh = _first(state, "memberships", lambda m: m["relocations_this_season"] == 0 and m["status"] == "active"
                   and m["tier_code"] == "TIER_UPPER")
    behind = _first(state, "memberships", lambda m: m["status"] == "past_due")
    assert rules.relocation_once_per_season(state, "relocate_membership_seat", {"membership_id": used["membership_id"]})
    assert not rules.relocation_once_per_season(state, "relocate_membership_seat", {"membership_id": fresh["membership_id"]})
    assert rules.relocation_needs_good_standing(state, "relocate_membership_seat", {"membership_id": behind["membership_id"]})
    assert not rules.relocation_needs_good_standing(state, "relocate_membership_seat",
                                                    {"membership_id": fresh["membership_id"]})
    move = {"membership_id": fresh["membership_id"]}
    assert rules.relocation_within_level(state, "relocate_membership_seat", {**move, "section_code": "SEC_LOWER_102"})
    assert not rules.relocation_within_level(state, "relocate_membership_seat", {**move, "section_code": "SEC_UPPER_202"})


def test_youth_rules(state):
    player = _first(state, "players", lambda p: p["waiver_signed"] and p["contact_fan_id"]
                    and 8 <= age_on(p["dob"], "2025-12-22") <= 12)
    ok = {"fan_id": player["guardian_fan_id"], "player_id": player["player_id"], "program_code": "CAMP_HOLIDAY_U12"}
    assert not rules.guardian_only(state, "register_player", ok)
    assert rules.guardian_only(state, "register_player", {**ok, "fan_id": player["contact_fan_id"]})
    assert not rules.waiver_required(state, "register_player", ok)
    unsigned = _first(state, "players", lambda p: not p["waiver_signed"])
    assert rules.waiver_required(state, "register_player", {**ok, "player_id": unsigned["player_id"]})
    assert not rules.age_group(state, "register_player", ok)
    assert rules.age_group(state, "register_player", {**ok, "program_code": "CAMP_HOLIDAY_TEEN"})
    assert rules.age_group(state, "register_player", {**ok, "program_code": "LEAGUE_WINTER_U17"})


def test_registration_cancellation_window(state):
    started = _first(state, "registrations", lambda r: r["program_code"] == "CAMP_FALL_SKILLS")
    soon = _first(state, "registrations", lambda r: r["program_code"] == "CAMP_THANKS_MINI")
    half = _first(state, "registrations", lambda r: r["program_code"] == "CLINIC_SHOOTING")
    later = _first(state, "registrations", lambda r: r["program_code"] == "CAMP_SPRING_U12")
    for bad in (started, soon):
        assert rules.registration_cancellation_window(state, "cancel_registration", {"registration_id": bad["registration_id"]})
    for good in (half, later):
        assert not rules.registration_cancellation_window(state, "cancel_registration",
                                                          {"registration_id": good["registration_id"]})


def test_shop_rules(state):
    def delivered(test):
        return _first(state, "merch_orders", lambda o: o["status"] == "delivered" and test(o))

    old = delivered(lambda o: -days_until(o["delivered_on"]) > 30)
    recent = delivered(lambda o: -days_until(o["delivered_on"]) <= 30 and not any(i["final_sale"] for i in o["items"]))
    final = delivered(lambda o: any(i["final_sale"] for i in o["items"]))
    assert rules.return_window(state, "return_merch_order", {"order_id": old["order_id"]})
    assert not rules.return_window(state, "return_merch_order", {"order_id": recent["order_id"]})
    assert rules.final_sale(state, "return_merch_order", {"order_id": final["order_id"]})
    assert not rules.final_sale(state, "return_merch_order", {"order_id": recent["order_id"]})


def test_every_rule_names_a_declared_reason_and_the_tasks_meet_it(domain):
    check_rules_on_tasks(domain, rules)


# --------------------------------------------------------------------------- hand tasks


def test_hand_tasks_score_one_and_refusals_are_grounded(domain):
    hand = domain.tasks("hand")
    assert len(hand) >= 3 and all(check_task(domain, t) is None for t in hand)
    assert len({r for t in hand for r in t.gold.reasons}) >= 3
    tables = domain.database.tables
    internal = [*tables["fans"], *tables["ticket_orders"], *tables["players"], *tables["registrations"]]
    for task in hand:  # the fan names orders by order number, never by internal id
        assert not any(key in task.user.instruction for key in internal)


# --------------------------------------------------------------------------- Tracer hints and built splits


def test_the_packs_tracer_hints_keep_the_graph_and_ground_every_write(domain):
    from tau_emotion.domain_packs.basketball.tracer_hints import HINTS
    from tau_emotion.tracer.graph import build_graph

    graph = build_graph(domain, HINTS)
    # the policy edges let a game-day request follow any step (issue 21): every gold path runs along the edges
    check_graph(domain, graph, HINTS)
    writes = {name for name, t in domain.toolset.tools.items() if t.writes}
    assert set(HINTS.goals) == writes


def test_every_refusal_the_hints_ask_for_quotes_the_policy_and_names_a_declared_reason(domain):
    from tau_emotion.domain_packs.basketball import tracer_hints
    from tau_emotion.tracer.provenance import phrase_in

    told = tracer_hints._REFUSALS
    assert set(told) == {r.name for r in rules.RULES}  # one challenge per policy rule
    for refusal in told.values():  # the Tracer finds a refusal's keyword in the written policy, or drops the task
        assert phrase_in(refusal.keyword, domain.policy), refusal.keyword
    # tickets are never refunded: no tool refunds them, so no call can be refused for it
    assert {r.reason for r in told.values()} == set(domain.refusal_reasons) - {"tickets_non_refundable"}


def test_tracer_built_test_split_meets_its_targets_and_obeys_the_rules(domain):
    tasks = domain.tasks("test")
    assert len(tasks) == 58 and all(t.meta["source"] == "tracer" for t in tasks)
    assert sum(len(t.gold.actions) for t in tasks) / len(tasks) >= 6.5
    challenged = [t for t in tasks if refused_calls(t)]
    assert len(challenged) >= 10 and len({r for t in challenged for r in t.gold.reasons}) >= 3
    assert sum(bool(decision_branches(t)) for t in tasks) >= 0.2 * len(tasks)
    tables = domain.database.tables
    internal = [*tables["fans"], *tables["ticket_orders"], *tables["memberships"], *tables["players"],
                *tables["registrations"], *tables["merch_orders"]]
    for task in tasks:
        assert not any(key in task.user.instruction for key in internal), task.id
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
    train = domain.tasks("train") if "train" in domain.splits else []
    assert not {t.meta["user"] for t in tasks} & {t.meta["user"] for t in train}



def test_a_registration_refused_for_age_misses_the_age_group_by_a_year_or_two(domain):
    """A parent may misjudge an age group by a little, not sign a 17-year-old up for an under-10s league
    (basketball-test-050 of the held-out reading): the grounder's age refusals, over many personas."""
    import random

    from tau_emotion.domain_packs.basketball.tracer_hints import AGE_SLIP, HINTS, _years_off, ground_register_player
    from tau_emotion.tracer.hints import GroundingContext, Ungrounded

    offs = []
    for seed in range(300):
        state = domain.database.state()
        ctx = GroundingContext(domain=domain, state=state, persona=None, rng=random.Random(seed), rates=HINTS.rates)
        try:
            ctx.persona = HINTS.persona(ctx)
            ctx.want_challenge = True
            found = ground_register_player(ctx)
        except Ungrounded:
            continue
        if found is not None and found.kind == "register_age":
            args = found.arguments
            offs.append(_years_off(state["players"].peek(args["player_id"]), state["programs"].peek(args["program_code"])))
    assert offs, "no registration refused for age was grounded"
    assert all(1 <= off <= AGE_SLIP for off in offs), offs
