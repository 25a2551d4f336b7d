"""The roles contract: one typed set of model options per role that a model plays.

A role is a part a chat model plays: the core's `agent` and `user`, and any role a plugin adds
through `tau_register_roles` (a judge, a task refiner). Each role gets the same option set, made here
once: `--ROLE-model`, `--ROLE-api-base`, `--ROLE-api-key`, `--ROLE-temperature`, `--ROLE-client`
and `--ROLE-args`, stored in `config.options[ROLE]`, owned by the plugin that registered the role.
Every reader (an agent or user plugin, `serve`, the task builder, the report, `--resume`) goes through
this module: `role_options(config, role)` for the typed values, `role_settings(config, role)` for
the `ModelSettings` a model client is built from. No plugin writes another plugin's options: a
plugin that starts a model server for a role points the role at it with `point_role`, which this
run sees and its stored configuration does not. Keys are resolved here and only here: a key given
for the role, else `TAU_<ROLE>_API_KEY`, else `TAU_API_KEY`, else a placeholder for a self-hosted
endpoint.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, create_model, field_validator

from tau_emotion.core.errors import TauError
from tau_emotion.core.models import ModelSettings, defines_run

if TYPE_CHECKING:
    from tau_emotion.core.models import RunConfig

#: the key every role falls back to
API_KEY_ENV = "TAU_API_KEY"
#: the roles of every episode, registered by the core itself
CORE_ROLES = {"agent": "the agent", "user": "the simulated user"}


@dataclass(frozen=True)
class Role:
    """What `tau_register_roles` registers: `register("judge", Role("the judge of a run's failures"))`."""

    description: str


class RoleModel(BaseModel):
    """One role's model options, without the role prefix: what a role's reader gets."""

    model: str | None = None
    api_base: str | None = None
    api_key: str | None = None
    temperature: float = Field(0.0, ge=0, le=2)
    client: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)


FIELDS = tuple(RoleModel.model_fields)


def parse_json_object(value: Any) -> Any:
    """A `--ROLE-args` value: a JSON object given as text on the command line, or already a dict (a stored config)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise ValueError(f"not a JSON object: {exc}") from None
    if not isinstance(value, dict):
        raise ValueError("must be a JSON object, e.g. '{\"max_tokens\": 512}'")
    return value


@cache
def role_options_model(role: str, description: str = "") -> type[BaseModel]:
    """The option model of `role`: fields `ROLE_model`, `ROLE_api_base`, ... (flags `--ROLE-model`, ...).

    `ROLE_model` defines the run (a `--resume` may not change it); endpoints, keys and arguments may change.
    """
    who = description or f"the {role}"
    fields: dict[str, Any] = {
        f"{role}_model": (str | None, Field(None, description=f"Model name for {who}, e.g. PROVIDER/NAME.",
                                            json_schema_extra=defines_run())),
        f"{role}_api_base": (str | None, Field(None, description=f"Chat-completions endpoint for {who}'s model (a self-hosted server's /v1 URL).")),
        f"{role}_api_key": (str | None, Field(None, description=f"Key for {who}'s endpoint (default: "
                                              f"TAU_{role.upper()}_API_KEY, then {API_KEY_ENV}).")),
        f"{role}_temperature": (float, Field(0.0, ge=0, le=2, description=f"Sampling temperature of {who}'s model.")),
        f"{role}_client": (str | None, Field(None, description=f"Model client plugin for {who} (default: the "
                                             "client that serves the model).")),
        f"{role}_args": (dict[str, Any], Field(default_factory=dict, description=f"JSON object of extra request "
                                               f"arguments for {who}'s model, e.g. '{{\"max_tokens\": 512}}'.")),
    }
    validators = {"parse_args": field_validator(f"{role}_args", mode="before")(parse_json_object)}
    name = "".join(part.capitalize() for part in role.replace("-", "_").split("_")) + "ModelOptions"
    return create_model(name, __validators__=validators, **fields)  # type: ignore[call-overload]


def role_options(config: RunConfig | None, role: str) -> RoleModel:
    """The typed model options of `role` in this run (validated), with any `point_role` applied."""
    values = (config.options.get(role, {}) if config is not None else {})
    parsed = role_options_model(role).model_validate(values)
    typed = RoleModel(**{name: getattr(parsed, f"{role}_{name}") for name in FIELDS})
    pointed = config.role_endpoints.get(role) if config is not None else None
    if pointed is not None:
        typed = typed.model_copy(update={"model": pointed[0], "api_base": pointed[1]})
    return typed


def role_settings(config: RunConfig | None, role: str) -> ModelSettings:
    """The `ModelSettings` of `role` in this run; a role with no model is an error saying which flag to pass."""
    o = role_options(config, role)
    return settings_for(role, o.model, o.api_base, o.api_key, o.temperature, o.client, o.args)


def settings_for(role: str, model: str | None, api_base: str | None = None, api_key: str | None = None,
                 temperature: float = 0.0, client: str | None = None,
                 args: dict[str, Any] | None = None) -> ModelSettings:
    """Settings for one role's model from values a command took itself (`tau analyze --judge-model`)."""
    if not model:
        raise TauError(f"the {role} needs a model: pass --{role}-model (with --{role}-api-base for a self-hosted "
                       "endpoint)")
    return ModelSettings(model=model, api_base=api_base, api_key=api_key or env_api_key(role) or (
        "EMPTY" if api_base else None), temperature=temperature, client=client, args=dict(args or {}))


def env_api_key(role: str) -> str | None:
    """The key the environment holds for `role`: `TAU_<ROLE>_API_KEY`, else `TAU_API_KEY`."""
    return os.environ.get(f"TAU_{role.upper()}_API_KEY") or os.environ.get(API_KEY_ENV) or None


def point_role(config: RunConfig, role: str, model: str, api_base: str) -> None:
    """Point `role` at a model and endpoint for this run only (a server a plugin started for it); the stored
    configuration keeps what the user gave, so a resumed run starts its server afresh."""
    config.role_endpoints[role] = (model, api_base)


def defining_changes(model: type[BaseModel], stored: dict[str, Any], given: dict[str, Any]) -> list[str]:
    """`--flag old -> new` for each field of `model` that its owner marked as defining the run and `given` changes."""
    out = []
    for name, value in given.items():
        info = model.model_fields.get(name)
        extra = info.json_schema_extra if info is not None else None
        if isinstance(extra, dict) and extra.get("defines_run") and value != stored.get(name):
            out.append(f"--{name.replace('_', '-')} {stored.get(name)!r} -> {value!r}")
    return out
