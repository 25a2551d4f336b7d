"""`tau export-sft --mixture tracer-high|tracer-low`: the paper's training mixtures from stored collection runs.

A real collection (oracle agent, scripted user, the `emotion` plugin) on the four seen packs and an
ordinary run on mock are exported through the CLI; the checks read the JSONL rows and the card back."""

import json
from collections import Counter

import pytest
from click.testing import CliRunner

from tau_emotion.core.cli import build_cli
from tau_emotion.plugins.suites import SEEN, UNSEEN
from tau_emotion.tracer import export


def _cli(*args):
    result = CliRunner().invoke(build_cli(), list(args), catch_exceptions=False)
    return result


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A Tracer-Low collection (3 train tasks x 2 trials per seen domain, all kept) and a mock run (4 tasks)."""
    where = tmp_path_factory.mktemp("mixture")
    db = str(where / "runs.db")
    collected = _cli("tracer", "collect", "--preset", "low", "--tasks", "3", "--trials", "2", "--user", "scripted",
                     "--agent", "oracle", "--db", db, "-o", "no_progress=true")
    assert collected.exit_code == 0, collected.output
    mock = _cli("run", "--plugins", "emotion,mock", "--agent", "oracle", "--trials", "1", "--no-progress", "--db", db,
                "--summary-json", str(where / "s.json"))
    assert mock.exit_code == 0, mock.output
    collection = collected.output.split("tau export-sft ")[1].split()[0]
    return where, db, collection, json.loads((where / "s.json").read_text())["run_id"]


def _rows(out):
    return [json.loads(line) for split in ("train", "validation") for line in (out / f"{split}.jsonl").read_text().splitlines()]


def _balanced(available: Counter, kept: Counter) -> bool:
    """Round-robin over families: a family that kept less than it had is at most one behind any other."""
    return all(kept[g] <= kept[f] + 1 for f in available if kept[f] < available[f] for g in available)


@pytest.mark.slow
def test_tracer_low_keeps_the_seen_domains_caps_them_balancing_families_and_the_card_says_so(runs):
    where, db, collection, mock = runs
    out = where / "low"
    result = _cli("export-sft", collection, mock, "--out", str(out), "--db", db, "--mixture", "tracer-low",
                  "--cap", "4", "--cap", "airline=none")
    assert result.exit_code == 0, result.output
    assert "mixture tracer-low: airline 6, retail 4 of 6 (cap 4)" in result.output
    assert "left out rows of other domains: mock 4" in result.output
    rows = _rows(out)
    assert Counter(r["domain"] for r in rows) == {"airline": 6, "retail": 4, "telecom": 4, "telehealth": 4}
    everything = _rows_of(where, db, collection)
    for domain in ("retail", "telecom", "telehealth"):
        available = Counter(r["emotion_family"] for r in everything if r["domain"] == domain)
        kept = Counter(r["emotion_family"] for r in rows if r["domain"] == domain)
        assert _balanced(available, kept), (domain, available, kept)
    card = (out / "README.md").read_text()
    assert "`tau export-sft --format sft --mixture tracer-low`" in card and "## Mixture: tracer-low" in card
    assert "(default 4, airline none)" in card
    assert "| airline | 6 | - | 6 |" in card and "| retail | 6 | 4 | 4 |" in card
    assert "Left out (not domains of the mixture): mock 4 row(s)." in card
    assert "| airline | 6 | 33.3% |" in card  # the counts by domain, and by family below them
    families = Counter(r["emotion_family"] for r in rows)
    for family, n in families.items():
        assert f"| {family} | {n} | {n / len(rows):.1%} |" in card


def _rows_of(where, db, collection):
    out = where / "all"
    if not out.exists():
        assert _cli("export-sft", collection, "--out", str(out), "--db", db).exit_code == 0
    return _rows(out)


def test_tracer_high_caps_at_250_by_default_and_names_the_domains_it_has_nothing_from(runs):
    where, db, collection, _ = runs
    out = where / "high"
    result = _cli("export-sft", collection, "--out", str(out), "--db", db, "--mixture", "tracer-high")
    assert result.exit_code == 0, result.output
    rows = _rows(out)
    assert Counter(r["domain"] for r in rows) == dict.fromkeys(SEEN, 6)
    assert (f"no trajectories from {', '.join(UNSEEN)} (collect on their train split to include them)"
            in result.output)
    card = (out / "README.md").read_text()
    assert "(default 250)" in card and "| bank | 0 | 250 | 0 (none collected) |" in card
    assert "| retail | 6 | 250 | 6 |" in card


def test_the_cap_draw_repeats_with_its_seed_and_differs_across_seeds(runs):
    where, db, collection, _ = runs
    rows = _rows_of(where, db, collection)
    low = export.parse_caps(export.MIXTURES["tracer-low"], ["2"])
    keys = [sorted((r["task_id"], r["trial"]) for r in export.mix(rows, low, seed)[0]) for seed in range(6)]
    assert keys[0] == sorted((r["task_id"], r["trial"]) for r in export.mix(list(reversed(rows)), low, 0)[0])
    assert all(len(k) == 8 for k in keys) and len({tuple(k) for k in keys}) > 1


def test_bad_caps_and_a_mixture_with_nothing_of_its_domains_are_one_line_errors(runs):
    where, db, collection, mock = runs
    args = ("export-sft", collection, "--out", str(where / "x"), "--db", db)
    for extra, message in ((("--cap", "3"), "--cap needs --mixture (tracer-high or tracer-low)"),
                           (("--mixture", "tracer-low", "--cap", "bank=3"),
                            "'bank' is not a domain of mixture tracer-low (airline, retail, telecom, telehealth)"),
                           (("--mixture", "tracer-low", "--cap", "0"), "expected N, none, DOMAIN=N or DOMAIN=none")):
        result = _cli(*args, *extra)
        assert result.exit_code == 1 and message in result.output, result.output
    result = _cli("export-sft", mock, "--out", str(where / "y"), "--db", db, "--mixture", "tracer-low")
    assert result.exit_code == 1 and "nothing to export: no row of run(s)" in result.output
    assert not (where / "y").exists() and not (where / "x").exists()


def test_the_tracer_presets_name_the_packs_of_the_seen_and_unseen_suites():
    """The Tracer's paper compositions and the `suites` plugin's suites name the same packs (two plugins, one fact)."""
    from tau_emotion.plugins.suites import SUITES
    from tau_emotion.tracer.collect import SEEN, UNSEEN

    assert SUITES["tau-emotion-seen"] == ["emotion", *SEEN]
    assert SUITES["tau-emotion-unseen"] == ["emotion", *UNSEEN]
