"""Behaviour of the bank pack's tools, rules and hand tasks against its real generated database."""

from __future__ import annotations

import json
from importlib.resources import files

import pytest

from tau_emotion.core.domain import Domain
from tau_emotion.domain_packs.bank import generate_db, rules, tau_register_domains
from tau_emotion.domain_packs.bank.tools import EXPRESS_CARD_FEE, NEXT_BUSINESS_DAY, TODAY
from tau_emotion.tracer.plan import decision_branches, refused_calls
from tests.domain_packs.graph_properties import check_graph

DATA = files("tau_emotion.domain_packs.bank").joinpath("data")


@pytest.fixture(scope="module")
def domain() -> Domain:
    found: list[Domain] = []
    tau_register_domains(found.append)
    assert [d.name for d in found] == ["bank"]
    return found[0]


@pytest.fixture()
def state(domain):
    return domain.database.state()


def call(domain, state, name, **arguments):
    text, is_error = domain.toolset.call(state, name, arguments)
    assert not is_error, text
    return json.loads(text) if text[:1] in "[{" else text


def fail(domain, state, name, **arguments):
    text, is_error = domain.toolset.call(state, name, arguments)
    assert is_error, text
    return text


def _first(state, table, test):
    return next(row for _, row in state[table].scan() if test(row))


def login(domain, state, customer_id):
    c = state["customers"].peek(customer_id)
    call(domain, state, "verify_identity", phone_number=c["phone_number"], date_of_birth=c["date_of_birth"],
         zip_code=c["address"]["zip"])
    return c


def owner(state, account):
    return next(h["customer_id"] for h in account["holders"] if h["role"] == "owner")


def _checking(state, test=lambda a: True):
    return _first(state, "accounts", lambda a: a["type"] == "checking" and len(a["holders"]) == 1 and test(a))


def _tx(state, test):
    return _first(state, "transactions", test)


# --------------------------------------------------------------------------- database and generator


def test_generator_rewrites_the_shipped_database_byte_for_byte(tmp_path):
    out = tmp_path / "db.json"
    generate_db.main(["--seed", "0", "--out", str(out)])
    assert out.read_bytes() == DATA.joinpath("db.json").read_bytes()
    assert out.stat().st_size < 3_000_000
    generate_db.main(["--seed", "1", "--out", str(out)])
    assert out.read_bytes() != DATA.joinpath("db.json").read_bytes()


def test_database_scale_and_variety(domain):
    t = domain.database.tables
    assert len(t["customers"]) == 400 and len(t["transactions"]) > 8000 and len(t["accounts"]) > 600
    assert {c["tier"] for c in t["customers"].values()} == {"standard", "plus", "premier"}
    roles = {h["role"] for a in t["accounts"].values() for h in a["holders"]}
    assert roles == {"owner", "joint_owner", "authorised_user"}
    assert {a["type"] for a in t["accounts"].values()} == {"checking", "savings", "loan"}
    assert len({a["account_number"] for a in t["accounts"].values()}) == len(t["accounts"])
    tx = list(t["transactions"].values())
    assert {"card", "payee_payment", "fee", "transfer_out", "interest", "loan_payment"} <= {x["type"] for x in tx}
    assert sum(x["type"] == "card" and x["status"] == "pending" for x in tx) > 20
    assert sum(x.get("sent_on") == TODAY for x in tx) > 20
    assert sum(c["frozen_by"] == "fraud_team" for c in t["cards"].values()) > 5
    assert sum(bool(c["fee_refunds"]) for c in t["customers"].values()) > 20
    for account in t["accounts"].values():  # every balance agrees with its history
        if account["type"] != "loan":
            assert account["balance"] >= -account["overdraft_limit"]
    assert len(domain.toolset.tools) == 17


# --------------------------------------------------------------------------- tools


def test_nothing_is_read_before_verification_and_a_wrong_detail_fails(domain, state):
    account = _checking(state)
    assert "not verified" in fail(domain, state, "get_account_details", account_id=account["account_id"])
    c = state["customers"].peek(owner(state, account))
    assert "do not match" in fail(domain, state, "verify_identity", phone_number=c["phone_number"],
                                  date_of_birth="1900-01-01", zip_code=c["address"]["zip"])
    login(domain, state, c["customer_id"])
    profile = call(domain, state, "get_customer_profile", customer_id=c["customer_id"])
    assert account["account_id"] in [a["account_id"] for a in profile["accounts"]]
    details = call(domain, state, "get_account_details", account_id=account["account_id"])
    assert details["available_balance"] == account["balance"] + account["overdraft_limit"]


def test_statement_adds_up_to_the_balance(domain, state):
    account = _checking(state)
    login(domain, state, owner(state, account))
    months = [call(domain, state, "get_statement", account_id=account["account_id"], month=m)
              for m in ("2025-06", "2025-07", "2025-08", "2025-09")]
    for earlier, later in zip(months, months[1:], strict=False):
        assert earlier["closing_balance"] == later["opening_balance"]
    assert months[-1]["closing_balance"] == account["balance"]


def test_payments_transfers_and_reversals_move_the_balances(domain, state):
    account = _checking(state, lambda a: a["balance"] > 1000)
    customer = login(domain, state, owner(state, account))
    paid = call(domain, state, "pay_payee", from_account_id=account["account_id"], payee_id=customer["payee_ids"][0],
                amount=100)
    assert paid["value_date"] == NEXT_BUSINESS_DAY and paid["balance"] == round(account["balance"] - 100, 2)
    back = call(domain, state, "reverse_payment", transaction_id=paid["transaction_id"])
    assert back["balance"] == account["balance"]
    loan = next((state["accounts"].peek(a) for a in customer["account_ids"]
                 if state["accounts"].peek(a)["type"] == "loan"), None)
    if loan is not None:
        moved = call(domain, state, "transfer_between_accounts", from_account_id=account["account_id"],
                     to_account_id=loan["account_id"], amount=50)
        assert moved["to_balance"] == round(loan["balance"] - 50, 2)
    assert "available" in fail(domain, state, "pay_payee", from_account_id=account["account_id"],
                               payee_id=customer["payee_ids"][0], amount=10**7)


def test_dispute_credits_provisionally_and_replacement_blocks_the_card(domain, state):
    charge = _tx(state, lambda t: t["type"] == "card" and t["status"] == "settled" and not t["disputed"])
    account = state["accounts"].peek(charge["account_id"])
    customer = login(domain, state, state["cards"].peek(charge["card_id"])["cardholder_id"])
    out = call(domain, state, "dispute_transaction", transaction_id=charge["transaction_id"], reason="not_recognised")
    assert out["provisional_credit"] == -charge["amount"] and out["balance"] == round(account["balance"] - charge["amount"], 2)
    assert "already disputed" in fail(domain, state, "dispute_transaction", transaction_id=charge["transaction_id"],
                                      reason="duplicate")
    card = call(domain, state, "replace_card", card_id=charge["card_id"], reason="stolen", express=True)
    assert card["old_status"] == "blocked" and card["fee"] == (0 if customer["tier"] == "premier" else EXPRESS_CARD_FEE)
    assert "blocked" in fail(domain, state, "set_card_status", card_id=charge["card_id"], status="active")


# --------------------------------------------------------------------------- rules: each allows the compliant action and catches the violation


def test_own_records_only(domain, state):
    mine, theirs = _checking(state), _checking(state, lambda a: a["account_id"] != _checking(state)["account_id"])
    login(domain, state, owner(state, mine))
    assert rules.own_records_only(state, "get_transactions", {"account_id": mine["account_id"]}) is None
    assert "not held" in rules.own_records_only(state, "get_transactions", {"account_id": theirs["account_id"]})
    assert rules.own_records_only(state, "get_customer_profile", {"customer_id": owner(state, theirs)})
    assert rules.own_records_only(state, "transfer_between_accounts", {
        "from_account_id": mine["account_id"], "to_account_id": theirs["account_id"], "amount": 5})


def test_owner_or_joint_owner(domain, state):
    account = _first(state, "accounts", lambda a: any(h["role"] == "authorised_user" for h in a["holders"]))
    user = next(h["customer_id"] for h in account["holders"] if h["role"] == "authorised_user")
    login(domain, state, user)
    args = {"from_account_id": account["account_id"], "payee_id": "x", "amount": 10}
    assert "authorised user" in rules.owner_or_joint_owner(state, "pay_payee", args)
    card = next(c for c in state["customers"].peek(user)["card_ids"] if state["cards"].peek(c)["account_id"] == account["account_id"])
    assert rules.owner_or_joint_owner(state, "set_card_status", {"card_id": card, "status": "frozen"}) is None
    assert rules.owner_or_joint_owner(state, "set_card_limit", {"card_id": card, "daily_limit": 100})
    joint = _first(state, "accounts", lambda a: any(h["role"] == "joint_owner" for h in a["holders"]))
    login(domain, state, next(h["customer_id"] for h in joint["holders"] if h["role"] == "joint_owner"))
    assert rules.owner_or_joint_owner(state, "pay_payee", {**args, "from_account_id": joint["account_id"]}) is None


def test_daily_payee_limit(domain, state):
    sent = _tx(state, lambda t: t.get("sent_on") == TODAY and t["status"] == "pending")
    account = state["accounts"].peek(sent["account_id"])
    limit = rules.DAILY_PAYEE_LIMIT[rules.owner_tier(state, account)]
    already = sum(-state["transactions"].peek(t)["amount"] for t in account["transaction_ids"]
                  if state["transactions"].peek(t).get("sent_on") == TODAY)
    args = {"from_account_id": account["account_id"], "payee_id": "x"}
    assert rules.daily_payee_limit(state, "pay_payee", {**args, "amount": round(limit - already, 2)}) is None
    assert "a day" in rules.daily_payee_limit(state, "pay_payee", {**args, "amount": round(limit - already + 1, 2)})


def test_savings_transfer_limit(state):
    busy = _first(state, "accounts", lambda a: a["type"] == "savings" and sum(
        state["transactions"].peek(t)["type"] == "transfer_out" and state["transactions"].peek(t)["date"] >= "2025-09-01"
        for t in a["transaction_ids"]) == 6)
    quiet = _first(state, "accounts", lambda a: a["type"] == "savings" and not any(
        state["transactions"].peek(t)["type"] == "transfer_out" for t in a["transaction_ids"]))
    assert "transfers out" in rules.savings_transfer_limit(state, "transfer_between_accounts", {
        "from_account_id": busy["account_id"], "to_account_id": "x", "amount": 10})
    assert rules.savings_transfer_limit(state, "transfer_between_accounts", {
        "from_account_id": quiet["account_id"], "to_account_id": "x", "amount": 10}) is None


def test_dispute_window(state):
    old = _tx(state, lambda t: t["type"] == "card" and t["status"] == "settled" and t["date"] < "2025-07-19")
    recent = _tx(state, lambda t: t["type"] == "card" and t["status"] == "settled" and t["date"] >= "2025-07-19")
    assert "60 days" in rules.dispute_window(state, "dispute_transaction", {"transaction_id": old["transaction_id"]})
    assert rules.dispute_window(state, "dispute_transaction", {"transaction_id": recent["transaction_id"]}) is None


def test_dispute_settled_card_charges_only(state):
    pending = _tx(state, lambda t: t["type"] == "card" and t["status"] == "pending")
    fee = _tx(state, lambda t: t["type"] == "fee")
    settled = _tx(state, lambda t: t["type"] == "card" and t["status"] == "settled")
    check = rules.dispute_settled_card_charges_only
    assert "pending" in check(state, "dispute_transaction", {"transaction_id": pending["transaction_id"]})
    assert "not a card purchase" in check(state, "dispute_transaction", {"transaction_id": fee["transaction_id"]})
    assert check(state, "dispute_transaction", {"transaction_id": settled["transaction_id"]}) is None


def test_no_reversal_after_settlement(state):
    settled = _tx(state, lambda t: t["type"] == "payee_payment" and t["status"] == "settled")
    pending = _tx(state, lambda t: t["type"] == "payee_payment" and t["status"] == "pending")
    assert "settled" in rules.no_reversal_after_settlement(state, "reverse_payment", {"transaction_id": settled["transaction_id"]})
    assert rules.no_reversal_after_settlement(state, "reverse_payment", {"transaction_id": pending["transaction_id"]}) is None


def test_fee_refund_allowance(state):
    def fee_of(test):
        return _tx(state, lambda t: t["type"] == "fee" and not t["refunded"] and test(
            state["customers"].peek(owner(state, state["accounts"].peek(t["account_id"])))))
    used = fee_of(lambda c: c["tier"] == "standard" and c["fee_refunds"])
    fresh = fee_of(lambda c: not c["fee_refunds"])
    assert "fee refund" in rules.fee_refund_allowance(state, "refund_fee", {"transaction_id": used["transaction_id"]})
    assert rules.fee_refund_allowance(state, "refund_fee", {"transaction_id": fresh["transaction_id"]}) is None


def test_card_limit_by_tier(state):
    for tier, top in rules.CARD_LIMIT_MAX.items():
        card = _first(state, "cards", lambda c, tier=tier: rules.owner_tier(state, state["accounts"].peek(c["account_id"])) == tier)
        assert rules.card_limit_by_tier(state, "set_card_limit", {"card_id": card["card_id"], "daily_limit": top}) is None
        assert rules.card_limit_by_tier(state, "set_card_limit", {"card_id": card["card_id"], "daily_limit": top + 1})


def test_fraud_hold(state):
    held = _first(state, "cards", lambda c: c["frozen_by"] == "fraud_team")
    mine = _first(state, "cards", lambda c: c["frozen_by"] == "customer")
    assert "fraud team" in rules.fraud_hold(state, "set_card_status", {"card_id": held["card_id"], "status": "active"})
    assert rules.fraud_hold(state, "set_card_status", {"card_id": mine["card_id"], "status": "active"}) is None


def test_standing_order_start(state):
    args = {"from_account_id": "x", "payee_id": "y", "amount": 50, "frequency": "monthly"}
    assert rules.standing_order_start(state, "create_standing_order", {**args, "start_date": "2025-10-01"}) is None
    assert rules.standing_order_start(state, "create_standing_order", {**args, "start_date": TODAY})
    assert rules.standing_order_start(state, "create_standing_order", {**args, "start_date": "2026-12-01"})


def test_every_rule_is_listed_and_tested():
    tested = {name[len("test_"):] for name in globals() if name.startswith("test_")}
    assert {rule.name for rule in rules.RULES} <= tested
    assert len(rules.RULES) == 11


def test_tools_stay_permissive_so_the_rules_matter(domain, state):
    """The tools reverse a settled payment and unfreeze a fraud hold: only the rules say no."""
    settled = _tx(state, lambda t: t["type"] == "payee_payment" and t["status"] == "settled")
    login(domain, state, owner(state, state["accounts"].peek(settled["account_id"])))
    assert rules.violations(state, "reverse_payment", {"transaction_id": settled["transaction_id"]})
    call(domain, state, "reverse_payment", transaction_id=settled["transaction_id"])
    held = _first(state, "cards", lambda c: c["frozen_by"] == "fraud_team")
    assert call(domain, state, "set_card_status", card_id=held["card_id"], status="active")["status"] == "active"


# --------------------------------------------------------------------------- hand tasks and graph


def test_hand_tasks_obey_the_rules_follow_the_graph_and_refuse_what_the_rules_forbid(domain):
    tasks = domain.tasks("hand")
    assert len(tasks) >= 3 and sum(bool(t.gold.reasons) for t in tasks) >= 2
    edges = set(domain.graph_edges)
    for task in tasks:
        assert task.gold.actions[0].name == "verify_identity", task.id
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
    assert graph.entry_tools == ["verify_identity"]


# --------------------------------------------------------------------------- Tracer hints and the built splits


def test_the_packs_tracer_hints_keep_the_graph_and_its_gold_paths(domain):
    from tau_emotion.domain_packs.bank.tracer_hints import HINTS
    from tau_emotion.tracer.graph import build_graph

    check_graph(domain, build_graph(domain, HINTS), HINTS)
    writes = {name for name, tool in domain.toolset.tools.items() if tool.writes}
    assert set(HINTS.goals) == writes  # a grounder for every write, none for a read


def test_tracer_built_test_split_meets_the_targets_obeys_the_rules_and_refuses_what_they_forbid(domain):
    tasks = domain.tasks("test")
    assert len(tasks) == 58 and all(t.meta["source"] == "tracer" for t in tasks)
    assert sum(len(t.gold.actions) for t in tasks) / len(tasks) >= 6.5
    challenged = [t for t in tasks if refused_calls(t)]
    assert len(challenged) >= 10 and len({r for t in challenged for r in t.gold.reasons}) >= 3
    assert sum(bool(decision_branches(t)) for t in tasks) >= 0.2 * len(tasks)
    edges = set(domain.graph_edges)
    for task in tasks:
        names = [a.name for a in task.gold.actions]
        assert names[0] == "verify_identity" and set(zip(names, names[1:], strict=False)) <= edges, task.id
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


def test_a_repeat_payment_copies_the_callers_latest_payment_to_that_payee(domain):
    state, checked = domain.database.state(), 0
    # both committed splits: a test split of 58 may hold only two such requests
    for task in (*domain.tasks("test"), *domain.tasks("train")):
        for request in task.plan.requests:
            kind = request.kind
            goal = task.gold.actions[request.actions[-1]]
            if kind not in ("pay_same", "standing_order_same") or goal.name not in ("pay_payee", "create_standing_order"):
                continue  # another intent, or the caller's decision rule declined it
            payee = goal.arguments["payee_id"]
            customer = state["customers"].peek(state["payees"].peek(payee)["customer_id"])
            paid = [t for a in customer["account_ids"] for tid in state["accounts"].peek(a)["transaction_ids"]
                    if (t := state["transactions"].peek(tid)).get("payee_id") == payee]
            latest = max(paid, key=lambda t: t["sent_on"])
            assert [t["sent_on"] for t in paid].count(latest["sent_on"]) == 1, task.id
            assert (goal.arguments["amount"], goal.arguments["from_account_id"]) == \
                (-latest["amount"], latest["account_id"]), task.id
            checked += 1
    assert checked >= 3
