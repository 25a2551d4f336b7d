"""`tau plugins` and a mock run must not import heavy libraries (nor litellm, which costs seconds)."""

import subprocess
import sys

import pytest

HEAVY = ["torch", "transformers", "trl", "datasets", "vllm", "ray", "litellm"]

SCRIPT = """
import sys
from click.testing import CliRunner
from tau_emotion.core.cli import build_cli
cli = build_cli()
runner = CliRunner()
for args in (["plugins"], ["domains"], ["run", "--plugins", "mock", "--trials", "1", "--no-progress", "--db", sys.argv[1]]):
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, (args, result.output)
print(",".join(m for m in %r if m in sys.modules))
"""


@pytest.mark.slow
def test_cli_and_mock_run_stay_light(tmp_path):
    out = subprocess.run([sys.executable, "-c", SCRIPT % HEAVY, str(tmp_path / "r.sqlite")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"heavy modules imported: {out.stdout.strip()}"
