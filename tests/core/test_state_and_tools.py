import json
from typing import Literal

import pytest

from tau_emotion.core.errors import DataError
from tau_emotion.core.state import Database
from tau_emotion.core.tools import ToolError, Toolset, tool


def _db():
    return Database({"users": {"u1": {"name": "Ada", "tags": ["a"]}, "u2": {"name": "Ben", "tags": []}},
                     "orders": {"o1": {"user": "u1", "total": 10}}})


def test_state_is_copy_on_write_and_reset_is_free():
    db = _db()
    state = db.state()
    state["users"]["u1"]["tags"].append("b")
    state["orders"]["o2"] = {"user": "u2", "total": 3}
    del state["orders"]["o1"]
    assert db.tables["users"]["u1"]["tags"] == ["a"]
    assert "o1" in db.tables["orders"] and "o2" not in db.tables["orders"]
    assert sorted(state["orders"]) == ["o2"]
    assert state.changed() == {"users": {"u1": {"name": "Ada", "tags": ["a", "b"]}},
                               "orders": {"o1": None, "o2": {"user": "u2", "total": 3}}}
    fresh = db.state()
    assert fresh.content_hash == db.content_hash
    assert state.content_hash != db.content_hash


def test_hash_is_content_based_and_stable_under_key_order():
    a = Database({"t": {"x": {"a": 1, "b": [1, 2]}, "y": {"c": None}}})
    b = Database({"t": {"y": {"c": None}, "x": {"b": [1, 2], "a": 1}}})
    assert a.content_hash == b.content_hash
    state = a.state()
    state["t"]["x"]["a"] = 2
    state["t"]["x"]["a"] = 1  # changed and changed back: same content, same hash
    assert state.content_hash == a.content_hash
    other = a.state()
    row = other["t"]["x"]
    other["t"]["x"] = {"b": row["b"], "a": row["a"]}
    assert other.content_hash == a.content_hash
    moved = a.state()
    moved["t"]["z"] = moved["t"]["y"]
    del moved["t"]["y"]
    assert moved.content_hash != a.content_hash


def test_reads_do_not_change_the_hash_and_peek_does_not_copy():
    db = _db()
    state = db.state()
    _ = state["users"]["u1"]
    assert state.content_hash == db.content_hash
    assert state["users"].peek("u2") is db.tables["users"]["u2"]
    assert dict(state["users"].scan())["u2"]["name"] == "Ben"


def _user_of(row):
    return row["user"]


def test_where_gives_the_rows_a_filtered_scan_gives_with_the_episodes_changes():
    db = Database({"orders": {f"o{i}": {"user": f"u{i % 3}", "total": i} for i in range(9)}})
    state = db.state()
    state["orders"]["o0"]["user"] = "u2"  # moved out of u0's rows
    del state["orders"]["o3"]
    state["orders"]["o9"] = {"user": "u0", "total": 9}
    state["orders"]["o1"]["total"] = 100  # changed, still u1's
    for user in ("u0", "u1", "u2", "nobody"):
        expected = {k: dict(r) for k, r in state["orders"].scan() if r["user"] == user}
        assert {k: dict(r) for k, r in state["orders"].where(_user_of, user)} == expected
    assert sorted(k for k, _ in db.state()["orders"].where(_user_of, "u0")) == ["o0", "o3", "o6"]  # a fresh state
    with pytest.raises(ValueError):  # a row a write inside a failed savepoint touched is as before
        with state.atomic():
            state["orders"]["o6"]["user"] = "u1"
            raise ValueError
    assert sorted(k for k, _ in state["orders"].where(_user_of, "u0")) == ["o6", "o9"]


def test_database_from_json_errors_name_the_file(tmp_path):
    bad = tmp_path / "db.json"
    bad.write_text('{"users": {"u1": {"name": "x"},}}')
    with pytest.raises(DataError, match=r"db.json: invalid JSON at line 1"):
        Database.from_json(bad)
    bad.write_text('{"users": 3}')
    with pytest.raises(DataError, match=r"table 'users' must be an object or a list"):
        Database.from_json(bad)
    ok = tmp_path / "list.json"
    ok.write_text(json.dumps({"users": [{"id": "u1", "name": "x"}]}))
    assert Database.from_json(ok).tables["users"]["u1"]["name"] == "x"


@tool(writes=True)
def rename(db, user_id: str, name: str, mode: Literal["first", "full"] = "full", times: int = 1) -> dict:
    """Rename a user.

    Args:
        user_id: The user's id.
        name: The new name,
            possibly long.
        mode: Which part to change.
        times: How often.
    """
    if user_id not in db["users"]:
        raise ToolError(f"user {user_id} not found")
    db["users"][user_id]["name"] = name
    return {"ok": True}


@tool(terminal=True)
def hand_over(db, summary: str) -> str:
    """Hand over to a human.

    Args:
        summary: Why.
    """
    return "done"


def test_schema_is_derived_from_signature_and_docstring():
    ts = Toolset([rename, hand_over])
    schema = ts["rename"].schema["function"]
    assert schema["description"] == "Rename a user."
    params = schema["parameters"]
    assert params["required"] == ["user_id", "name"]
    assert params["properties"]["name"]["description"] == "The new name, possibly long."
    assert params["properties"]["mode"]["enum"] == ["first", "full"]
    assert params["properties"]["times"]["type"] == "integer"
    assert ts["rename"].writes and not ts["rename"].terminal
    assert ts.is_terminal("hand_over")


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("nope", {}, "unknown tool 'nope'. Available tools: hand_over, rename"),
        ("rename", '{"user_id": ', "not valid JSON"),
        ("rename", {"user_id": "u1"}, "name: Field required"),
        ("rename", {"user_id": "u1", "name": "x", "times": "many"}, "times: Input should be a valid integer"),
        ("rename", {"user_id": "u1", "name": "x", "color": "red"}, "color: Extra inputs are not permitted"),
        ("rename", {"user_id": "u9", "name": "x"}, "user u9 not found"),
        ("rename", "[1, 2]", "must be a JSON object"),
    ],
)
def test_bad_tool_calls_become_error_results(name, arguments, expected):
    ts = Toolset([rename, hand_over])
    state = _db().state()
    text, is_error = ts.call(state, name, arguments)
    assert is_error
    assert expected in text
    assert state.content_hash == state.database.content_hash


def test_tool_without_docstring_or_db_parameter_is_rejected():
    def nodoc(db, x: int):
        return x

    def nodb(x: int):
        """Doc."""

    with pytest.raises(DataError, match="no docstring"):
        Toolset([nodoc])
    with pytest.raises(DataError, match="first parameter"):
        Toolset([nodb])


def test_database_from_json_takes_a_str_a_path_and_names_a_bad_file(tmp_path):
    good = tmp_path / "db.json"
    good.write_text('{"owners": [{"id": "o1", "name": "Ada"}]}')
    assert Database.from_json(str(good)).tables["owners"]["o1"]["name"] == "Ada"
    assert Database.from_json(good).content_hash == Database.from_json(str(good)).content_hash
    latin = tmp_path / "latin.json"
    latin.write_bytes('{"owners": {"o1": {"name": "Zoë"}}}'.encode("latin-1"))
    with pytest.raises(DataError, match=r"latin.json: not UTF-8 text"):
        Database.from_json(str(latin))
    with pytest.raises(DataError, match=r"missing.json: cannot read"):
        Database.from_json(str(tmp_path / "missing.json"))


def _writes_then_fails():
    @tool(writes=True)
    def rename_then_fail(db, user_id: str, name: str, failure: str) -> str:
        """Rename a user and tag them, then fail as asked.

        Args:
            user_id: The user.
            name: The new name.
            failure: What to raise after the writes.
        """
        db["users"][user_id]["name"] = name
        db["users"][user_id]["tags"].append("renamed")
        db["orders"]["o9"] = {"user": user_id, "total": 1}
        del db["orders"]["o1"]
        db["users"].peek("u2")["tags"].append("peeked")  # a row this episode changed earlier: its own, still rolled back
        if failure == "refuse":
            raise ToolError("refused after writing")
        if failure == "crash":
            raise RuntimeError("a bug after writing")
        if failure == "hang":
            import time

            time.sleep(5)
        return "ok"

    return Toolset([rename_then_fail])


@pytest.mark.parametrize("failure", ["refuse", "crash", "hang"])
def test_a_call_that_raises_after_writing_leaves_the_state_as_before(failure):
    tools = _writes_then_fails()
    state = _db().state()
    state["users"]["u2"]["tags"].append("earlier")  # the episode's own row before the call
    before, rows = state.content_hash, json.dumps(state.to_dict(), sort_keys=True)
    if failure == "crash":
        with pytest.raises(RuntimeError, match="a bug after writing"):  # a bug keeps its traceback: the trial's error
            tools.call(state, "rename_then_fail", {"user_id": "u1", "name": "Eve", "failure": failure})
    else:
        text, is_error = tools.call(state, "rename_then_fail", {"user_id": "u1", "name": "Eve", "failure": failure},
                                    timeout=0.2)
        assert is_error and ("refused after writing" in text or "took longer" in text), text
    assert state.content_hash == before and json.dumps(state.to_dict(), sort_keys=True) == rows
    assert state.changed() == {"users": {"u2": {"name": "Ben", "tags": ["earlier"]}}}
    text, is_error = tools.call(state, "rename_then_fail", {"user_id": "u1", "name": "Eve", "failure": "none"})
    assert not is_error and state["users"].peek("u1")["name"] == "Eve" and "o1" not in state["orders"]


def test_savepoints_nest_and_an_inner_failure_keeps_the_outer_writes():
    state = _db().state()
    with state.atomic():
        state["users"]["u1"]["name"] = "outer"
        with pytest.raises(ValueError), state.atomic():
            state["users"]["u1"]["name"] = "inner"
            state["users"]["u2"]["name"] = "inner"
            raise ValueError
        assert state["users"].peek("u1")["name"] == "outer" and state["users"].peek("u2")["name"] == "Ben"
        with state.atomic():
            state["users"]["u2"]["name"] = "kept"
    assert {k: r["name"] for k, r in state.to_dict()["users"].items()} == {"u1": "outer", "u2": "kept"}
    with pytest.raises(KeyError), state.atomic():
        state["users"]["u1"]["name"] = "gone"
        with state.atomic():
            state["users"]["u2"]["name"] = "merged"
            state["orders"]["o2"] = {"user": "u2", "total": 2}
        raise KeyError("outer fails")
    # the outer savepoint took what the inner one kept: its writes go too
    assert {k: r["name"] for k, r in state.to_dict()["users"].items()} == {"u1": "outer", "u2": "kept"}
    assert "o2" not in state["orders"]
    assert state.content_hash == _rehash(state)


def _rehash(state):
    return Database(state.to_dict()).content_hash
