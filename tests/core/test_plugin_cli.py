"""The public CLI helper module: a fresh `tau` group per build, plugin options added by name, no env writes."""

import os
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from tau_emotion.core.cli import build_cli
from tau_emotion.core.errors import TauError
from tau_emotion.core.plugin_cli import insert_params, model_params, role_model_params, role_settings_from


def test_each_build_is_a_new_group_and_extending_a_command_changes_only_that_group():
    first, second = build_cli(), build_cli()
    assert first is not second and first.commands["show"] is not second.commands["show"]
    first.commands["show"].params.append(click.Option(["--extra-flag"]))
    assert "extra_flag" not in [p.name for p in second.commands["show"].params]
    assert "task_id" in [p.name for p in second.commands["show"].params]  # the report plugin's extension, each time


def test_plugin_options_go_in_front_of_store_by_name():
    names = [p.name for p in build_cli().commands["run"].params]
    plugin = [i for i, n in enumerate(names) if n.startswith("opt__")]
    assert plugin and max(plugin) + 1 == names.index("store") and names[-3:] == ["store", "db_path", "debug"]
    command = click.Command("c", params=[click.Option(["--a"])])
    with pytest.raises(TauError, match="command 'c' has no parameter 'zzz'"):
        insert_params(command, [click.Option(["--b"])], before="zzz")


def test_model_params_and_role_params_make_typed_options():
    from pydantic import BaseModel, Field

    class Opts(BaseModel):
        steps: int = Field(3, ge=1, description="How many.")
        loud: bool = False

    steps, loud = model_params(Opts, defaults=True)
    assert steps.default == 3 and isinstance(steps.type, click.IntRange) and loud.is_flag

    @click.command()
    @role_model_params("judge")
    def judged(**kw):
        settings = role_settings_from("judge", kw)
        click.echo(f"{settings.model} {settings.temperature} {settings.args} {sorted(kw)}")

    out = CliRunner().invoke(judged, ["--judge-model", "m", "--judge-temperature", "0.5",
                                                    "--judge-args", '{"max_tokens": 3}'])
    assert out.exit_code == 0 and out.output.strip() == "m 0.5 {'max_tokens': 3} []", out.output


@pytest.mark.slow
def test_importing_litellm_leaves_the_process_environment_as_it_was():
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    code = ("import os; from tau_emotion.plugins.litellm_client import import_litellm; import_litellm(); "
            "print(os.environ.get('LITELLM_LOCAL_MODEL_COST_MAP'))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "None"
