"""Tools of the mock domain: look up accounts and owners, move money, freeze an account, hand over."""

from __future__ import annotations

from tau_emotion.core.state import State
from tau_emotion.core.tools import ToolError, tool


@tool
def find_owner(db: State, name: str) -> dict:
    """Find an account owner by full name.

    Args:
        name: The owner's full name, e.g. "Ada Park".
    """
    for owner_id, owner in db["owners"].scan():
        if owner["name"].lower() == name.lower():
            return {"owner_id": owner_id, **owner}
    raise ToolError(f"no owner named {name}")


@tool
def get_account(db: State, account_id: str) -> dict:
    """Get an account's owner, balance and status.

    Args:
        account_id: The account id, e.g. "acc-1".
    """
    if account_id not in db["accounts"]:
        raise ToolError(f"account {account_id} not found")
    return db["accounts"].peek(account_id)


@tool(writes=True)
def transfer(db: State, from_account: str, to_account: str, amount: float) -> dict:
    """Move money between two accounts.

    Args:
        from_account: Account id to take the money from.
        to_account: Account id to put the money into.
        amount: Amount in dollars; must be positive and not above the source balance.
    """
    accounts = db["accounts"]
    for acc in (from_account, to_account):
        if acc not in accounts:
            raise ToolError(f"account {acc} not found")
    if amount <= 0:
        raise ToolError("amount must be positive")
    source, target = accounts[from_account], accounts[to_account]
    if source["status"] != "open" or target["status"] != "open":
        raise ToolError("both accounts must be open")
    if source["balance"] < amount:
        raise ToolError(f"insufficient funds: balance is {source['balance']}")
    source["balance"] = round(source["balance"] - amount, 2)
    target["balance"] = round(target["balance"] + amount, 2)
    return {"from_balance": source["balance"], "to_balance": target["balance"]}


@tool(writes=True)
def freeze_account(db: State, account_id: str, reason: str) -> str:
    """Freeze an account so no money can move.

    Args:
        account_id: The account to freeze.
        reason: Why the customer wants it frozen.
    """
    if account_id not in db["accounts"]:
        raise ToolError(f"account {account_id} not found")
    account = db["accounts"][account_id]
    account["status"] = "frozen"
    account["freeze_reason"] = reason
    return "frozen"


@tool(terminal=True)
def transfer_to_human_agents(db: State, summary: str) -> str:
    """Hand the conversation to a human agent; ends the conversation.

    Args:
        summary: A short summary of the user's problem.
    """
    return "Transfer successful"
