"""The tool dependency graph: nodes are tools, an edge A -> B when B may legally follow A.

Edges come from three places, kept apart in each edge's `sources`:

- `declared`: the pack's own edges (`data/graph.json` or `Domain(graph_edges=...)`);
- `dataflow`: inferred by running the tools on the domain's real database: A -> B when a field of
  A's output feeds a parameter of B by name (`reservation_id` out of a user profile into
  `get_reservation_details`), confirmed by calling B with that value when B's other parameters can
  be filled from the same record (`via` names the fields);
- `policy`: successions the pack's hints say the written policy implies.

Edges out of a terminal tool are removed (nothing follows a handover), as are edges the hints
forbid. A domain that declares no edges gets only inferred ones, with a warning.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import networkx as nx

from tau_emotion.core.facts import singular
from tau_emotion.tracer.hints import TracerHints, load_hints

if TYPE_CHECKING:
    from tau_emotion.core.domain import Domain
    from tau_emotion.core.tools import Tool

SCALARS = (str, int, float, bool)
_RECORDS_PER_TABLE = 25
_PROBES_PER_TOOL = 4


@dataclass
class ToolGraph:
    """A domain's dependency graph and what was learned while building it."""

    domain: str
    graph: nx.DiGraph
    entry_tools: list[str]
    warnings: list[str] = field(default_factory=list)

    @property
    def density(self) -> float:
        return nx.density(self.graph)

    def has_edge(self, a: str, b: str) -> bool:
        return self.graph.has_edge(a, b)

    def successors(self, node: str) -> list[str]:
        return list(self.graph.successors(node))

    def edges(self) -> list[tuple[str, str]]:
        return sorted(self.graph.edges())

    def source_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for _, _, data in self.graph.edges(data=True):
            for source in data["sources"]:
                counts[source] = counts.get(source, 0) + 1
        return dict(sorted(counts.items()))

    def to_json(self) -> dict[str, Any]:
        nodes = [{"name": n, **{k: v for k, v in data.items()}} for n, data in self.graph.nodes(data=True)]
        edges = [{"from": a, "to": b, "sources": data["sources"], "via": data["via"]}
                 for a, b, data in sorted(self.graph.edges(data=True), key=lambda e: (e[0], e[1]))]
        return {"domain": self.domain, "tools": len(nodes), "n_edges": len(edges), "density": round(self.density, 4),
                "entry_tools": self.entry_tools, "nodes": nodes, "edges": edges}

    def to_dot(self) -> str:
        lines = [f'digraph "{self.domain}" {{', "  rankdir=LR;", "  node [shape=box, fontname=Helvetica];"]
        for name, data in self.graph.nodes(data=True):
            shape = "doubleoctagon" if data["terminal"] else ("box" if data["writes"] else "ellipse")
            lines.append(f'  "{name}" [shape={shape}];')
        for a, b, data in sorted(self.graph.edges(data=True), key=lambda e: (e[0], e[1])):
            style = "solid" if "declared" in data["sources"] else ("dashed" if "dataflow" in data["sources"] else "dotted")
            label = f' label="{",".join(data["via"])}"' if data["via"] else ""
            lines.append(f'  "{a}" -> "{b}" [style={style}{label}];')
        lines.append("}")
        return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- what tools consume and produce


def consumed_fields(tool: Tool) -> dict[str, str]:
    """Field name -> the parameter it feeds: required scalar parameters and required fields of object parameters."""
    schema = tool.parameters
    defs = schema.get("$defs", {})
    out: dict[str, str] = {}
    for name in schema.get("required", []):
        prop = schema["properties"].get(name, {})
        target = prop.get("items", prop)
        ref = target.get("$ref", "")
        if ref.startswith("#/$defs/"):
            sub = defs.get(ref.rsplit("/", 1)[1], {})
            for inner in sub.get("required", []):
                out.setdefault(inner, name)
        elif prop.get("type") in ("string", "integer", "number", "boolean") or "enum" in prop:
            out[name] = name
    return out


def records(value: Any) -> Iterator[dict[str, Any]]:
    """Every dict inside a JSON-like value, outermost first."""
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from records(v)
    elif isinstance(value, list):
        for v in value:
            yield from records(v)


def scalar_fields(value: Any) -> dict[str, list[Any]]:
    """Field name -> the scalar values found under that key anywhere in `value` (first seen first)."""
    out: dict[str, list[Any]] = {}
    for record in records(value):
        for key, v in record.items():
            if isinstance(v, SCALARS):
                seen = out.setdefault(key, [])
                if v not in seen and len(seen) < 20:
                    seen.append(v)
    return out


def _db_records(domain: Domain) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for rows in domain.database.tables.values():
        for i, row in enumerate(rows.values()):
            if i >= _RECORDS_PER_TABLE:
                break
            found.extend(records(row))
    return found


def _placeholder(spec: dict[str, Any]) -> Any:
    """A harmless value for a parameter nothing in the database names (a free-text reason, an amount)."""
    if "enum" in spec:
        return spec["enum"][0]
    return {"string": "test", "integer": 1, "number": 1, "boolean": True}.get(spec.get("type", ""), None)


def _arguments_from(record: dict[str, Any], tool: Tool, pool: dict[str, list[Any]],
                    fixed: dict[str, Any] | None = None, fill: bool = False) -> dict[str, Any] | None:
    """Arguments for `tool`: `fixed` first, then the record's own fields, then the first pooled value, then
    (with `fill`) a placeholder; None if a required one is still missing."""
    schema = tool.parameters
    args: dict[str, Any] = {}
    for name in schema.get("required", []):
        if fixed and name in fixed:
            args[name] = fixed[name]
        elif name in record:
            args[name] = record[name]
        elif pool.get(name):
            args[name] = pool[name][0]
        elif fill and (value := _placeholder(schema["properties"].get(name, {}))) is not None:
            args[name] = value
        else:
            return None
    return args


def referenced_tables(domain: Domain, pool: dict[str, list[Any]]) -> dict[str, list[str]]:
    """Parameter or field name -> tables whose row keys it holds.

    By value (every value seen under the name is a key of the table) or by name (`account_id`,
    `from_account` and `account` refer to a table `accounts`).
    """
    tables = domain.database.tables
    names = set(pool)
    for tool in domain.toolset.tools.values():
        names.update(consumed_fields(tool))
    out: dict[str, list[str]] = {}
    for name in sorted(names):
        found = []
        for table, rows in tables.items():
            single = singular(table)
            values = pool.get(name, [])
            by_value = bool(values) and all(isinstance(v, str) and v in rows for v in values)
            by_name = name in (single, f"{single}_id") or name.endswith(f"_{single}") or name.endswith(f"_{single}_id")
            if by_value or by_name:
                found.append(table)
        if found:
            out[name] = found
    return out


def _call(domain: Domain, name: str, args: dict[str, Any], state: Any = None) -> Any | None:
    """Run one tool (on a scratch state unless one is given); the parsed result, or None on an error."""
    text, is_error = domain.toolset.call(state if state is not None else domain.database.state(), name, args)
    if is_error:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def probe_outputs(domain: Domain, hints: TracerHints) -> dict[str, list[tuple[dict[str, Any], Any]]]:
    """Tool name -> (arguments, result) of a few successful calls with arguments taken from database records."""
    db_records = _db_records(domain)
    results: dict[str, list[tuple[dict[str, Any], Any]]] = {}
    for name, tool in domain.toolset.tools.items():
        if tool.terminal:
            continue
        tried: list[dict[str, Any]] = list(hints.probe_arguments.get(name, []))
        for record in db_records:
            if len(tried) >= 40:
                break
            args = _arguments_from(record, tool, {})
            if args is not None and args not in tried:
                tried.append(args)
        if not tool.parameters.get("required"):
            tried.insert(0, {})
        outputs = []
        for args in tried:
            result = _call(domain, name, args)
            if result is not None:
                outputs.append((args, result))
                if len(outputs) >= _PROBES_PER_TOOL:
                    break
        if outputs:
            results[name] = outputs
    return results


def _feeds(domain: Domain, producer: str, probes: list[tuple[dict[str, Any], Any]], consumer: Tool,
           pool: dict[str, list[Any]], refs: dict[str, list[str]]) -> tuple[list[str], bool]:
    """Fields of the producer's outputs that feed the consumer, and whether a call with them succeeded.

    A field feeds a parameter of the same name, and any value that is a row key of a table feeds a
    parameter referring to that table (a list of reservation ids feeds `reservation_id`). The
    consumer is called on the state the producer's call left behind, so a write's effect counts
    (nothing can be changed on a reservation that was just cancelled).
    """
    wanted = consumed_fields(consumer)
    tables = domain.database.tables
    via: list[str] = []
    confirmed = False
    for producer_args, output in probes:
        for record in records(output):
            for key, value in record.items():
                items = value if isinstance(value, list) else [value]
                for field_name, param in wanted.items():
                    by_name = key == field_name
                    by_key = any(isinstance(v, str) and any(v in tables[t] for t in refs.get(field_name, []))
                                 for v in items)
                    if not (by_name or by_key) or not all(isinstance(v, SCALARS) for v in items):
                        continue
                    if key not in via:
                        via.append(key)
                    if confirmed or field_name != param:
                        continue
                    args = _arguments_from(record, consumer, pool, {param: items[0]}, fill=True)
                    if args is None:
                        continue
                    state = domain.database.state()
                    domain.toolset.call(state, producer, producer_args)
                    if _call(domain, consumer.name, args, state) is not None:
                        confirmed = True
    return sorted(via), confirmed


def build_graph(domain: Domain, hints: TracerHints | None = None) -> ToolGraph:
    """The dependency graph of `domain` with `hints`' policy and forbidden edges (default: the hints its pack gives,
    `load_hints(domain)`). Built afresh each call: the caller keeps it for as long as it needs it."""
    hints = hints if hints is not None else load_hints(domain)
    tools = domain.toolset.tools
    graph = nx.DiGraph(name=domain.name)
    for name, tool in tools.items():
        graph.add_node(name, writes=tool.writes, terminal=tool.terminal,
                       params=sorted(tool.parameters.get("properties", {})),
                       required=list(tool.parameters.get("required", [])))
    warnings: list[str] = []

    def add(a: str, b: str, source: str, via: list[str] | None = None) -> None:
        if a not in tools or b not in tools:
            return
        if not graph.has_edge(a, b):
            graph.add_edge(a, b, sources=[], via=[])
        data = graph.edges[a, b]
        if source not in data["sources"]:
            data["sources"] = sorted([*data["sources"], source])
        data["via"] = sorted(set(data["via"]) | set(via or []))

    declared = domain.graph_edges
    unknown = sorted({n for edge in declared or [] for n in edge if n not in tools})
    if unknown:
        warnings.append(f"domain '{domain.name}': declared edges name unknown tools ({', '.join(unknown)}); ignored")
    for a, b in declared or []:
        add(a, b, "declared")
    if not declared:
        warnings.append(f"domain '{domain.name}' declares no tool graph; all edges are inferred from tool "
                        f"signatures and behaviour on its database")

    outputs = probe_outputs(domain, hints)
    pool = scalar_fields(_db_records(domain))
    refs = referenced_tables(domain, pool)
    for a in sorted(outputs):
        produced = scalar_fields([result for _, result in outputs[a]])
        graph.nodes[a]["produces"] = sorted(produced)
        for b, tool in tools.items():
            via, confirmed = _feeds(domain, a, outputs[a], tool, pool, refs)
            if via and confirmed:
                add(a, b, "dataflow", via)
    for name in tools:
        graph.nodes[name].setdefault("produces", [])

    for a, b in hints.policy_edges:
        add(a, b, "policy")
    for a, b in hints.forbidden_edges:
        if graph.has_edge(a, b):
            graph.remove_edge(a, b)
    for name, tool in tools.items():
        if tool.terminal:
            graph.remove_edges_from(list(graph.out_edges(name)))

    entry = [t for t in (hints.entry_tools or []) if t in tools]
    if not entry:
        entry = [n for n in graph.nodes if not any(p != n for p in graph.predecessors(n))
                 and not graph.nodes[n]["terminal"] and graph.out_degree(n)]
    if not entry:
        entry = [n for n in graph.nodes if not graph.nodes[n]["writes"] and not graph.nodes[n]["terminal"]]
    return ToolGraph(domain=domain.name, graph=graph, entry_tools=entry, warnings=warnings)
