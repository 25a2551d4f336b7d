"""`tau train NAME`: one subcommand per entry of the trainers catalog.

The subcommands are made when click asks for them, from each trainer's `options` model (a field
becomes `--field-name`; required fields are required options), so a trainer a third-party plugin
registers gets its own `tau train NAME` with its own flags. `-o KEY=VALUE` passes any other field of
the trainer's config through.
"""

from __future__ import annotations

import json
from typing import Any

import click
from pydantic import BaseModel, ValidationError

from tau_emotion.core.errors import TauError
from tau_emotion.core.plugin_cli import command_pm, debug_option, guarded, model_params


def _trainers() -> Any:
    return command_pm().catalog("trainers")


def _value(text: str) -> Any:
    """`-o` values: JSON when they parse (numbers, booleans, lists), else the string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def trainer_command(name: str, entry: Any) -> click.Command:
    trainer_cls = entry.load()
    options_model: type[BaseModel] = trainer_cls.options

    @guarded
    def run(data: str, out: str, raw_options: tuple[str, ...], **values: Any) -> None:
        extra = {}
        for item in raw_options:
            key, sep, value = item.partition("=")
            if not sep:
                raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint="--option")
            extra[key.strip()] = _value(value)
        values = {k: v for k, v in values.items() if v is not None}
        try:
            options = options_model.model_validate({**values, "extra": extra}).model_dump()
        except ValidationError as exc:
            raise TauError(f"tau train {name}: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}") from None
        record = trainer_cls().train(data, out, **options)
        losses = record.get("losses") or []
        trend = f"loss {losses[0]:.4f} -> {losses[-1]:.4f}" if losses else "no loss logged"
        dropped = record.get("dropped_rows") or 0
        click.echo(f"{name}: {record.get('global_step')} step(s) on {record.get('train_rows')} row(s), {trend} "
                   f"({record.get('device')}); model saved to {out}"
                   + (f"; {dropped} row(s) dropped: nothing to learn from within --max-length" if dropped else ""))

    data_help = getattr(trainer_cls, "data_help", "An exported dataset folder (tau export-sft).")
    params = [click.Option(["--data"], required=True, help=data_help),
              click.Option(["--out"], required=True, help="Folder for the fine-tuned model."),
              *model_params(options_model, defaults=True, skip=("extra",)),
              click.Option(["--option", "-o", "raw_options"], multiple=True,
                           help="Another TRL config field as KEY=VALUE (repeatable)."),
              ]
    command = click.Command(name, callback=run, params=params,
                            help=f"{(trainer_cls.__doc__ or '').strip()} (plugin '{entry.owner}')")
    return debug_option(command)


class TrainGroup(click.Group):
    """Subcommands from the trainers catalog, made on demand."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_trainers().names())

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        trainers = _trainers()
        if cmd_name not in trainers.names():
            return None
        return trainer_command(cmd_name, trainers.entry(cmd_name))


@click.group("train", cls=TrainGroup)
def train_group() -> None:
    """Fine-tune a model on exported trajectories (needs the [train] extra)."""
