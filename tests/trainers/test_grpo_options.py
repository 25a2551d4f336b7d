"""`tau train grpo`'s options and --data, without the [train] extra: the command is built from the catalog and
importing the trainer imports no heavy library."""

import subprocess
import sys

import pytest

from tau_emotion.trainers.grpo import GRPOOptions, parse_data
from tau_emotion.trainers.trl_trainers import TrainError


def test_data_is_a_domain_and_an_optional_split():
    assert parse_data("airline") == ("airline", "train")
    assert parse_data("mock:test") == ("mock", "test")
    with pytest.raises(TrainError, match="DOMAIN or DOMAIN:SPLIT"):
        parse_data(":test")


def test_env_options_are_a_json_object_and_shaping_is_off_by_default():
    opts = GRPOOptions(model="m", env_options='{"agent_temperature": 0.5}')
    assert opts.env_options == {"agent_temperature": 0.5} and opts.emotion == "random"
    assert opts.weights() == {"negative_end": 0.0, "unanswered": 0.0, "balance": 0.0}
    with pytest.raises(ValueError, match="not a JSON object"):
        GRPOOptions(model="m", env_options="{oops")
    with pytest.raises(ValueError):
        GRPOOptions(model="m", shaping_balance=-1)


@pytest.mark.slow
def test_help_lists_the_options_and_imports_nothing_heavy():
    script = ("import sys\nfrom click.testing import CliRunner\nfrom tau_emotion.core.cli import build_cli\n"
              "r = CliRunner().invoke(build_cli(), ['train', 'grpo', '--help'])\nprint(r.exit_code)\nprint(r.output)\n"
              "print('HEAVY:' + ','.join(m for m in ('torch', 'transformers', 'trl', 'datasets') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("0\n") and "HEAVY:\n" in out.stdout + "\n"
    for flag in ("--data", "--num-generations", "--max-turn-tokens", "--episode-steps", "--emotion", "--user",
                 "--shaping-negative-end", "--shaping-unanswered", "--shaping-balance", "--use-vllm", "--env-options"):
        assert flag in out.stdout, flag
    assert "DOMAIN or DOMAIN:SPLIT" in out.stdout and "PydanticUndefined" not in out.stdout
