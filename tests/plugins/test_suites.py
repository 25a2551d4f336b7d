
"""The ten-domain suites: `tau suites` lists each with its tasks per split and names the packs that lack a
split; `tau run --suite` refuses such a suite in one line naming them, or runs the rest with --skip-missing."""

import json

import pytest

from tau_emotion.plugins.suites import SEEN, SUITES, UNSEEN


def test_the_ten_domain_suites_are_the_seen_and_unseen_halves():
    assert SUITES["tau-emotion"] == ["emotion", *SEEN, *UNSEEN]
    assert SUITES["tau-emotion-seen"] == ["emotion", *SEEN] and SUITES["tau-emotion-unseen"] == ["emotion", *UNSEEN]
    assert len(set(SEEN) | set(UNSEEN)) == 10 and not set(SEEN) & set(UNSEEN)


@pytest.mark.slow
def test_tau_suites_lists_task_counts_per_split_and_names_packs_without_one(tau):
    from tau_emotion.core.manager import load_all_plugins

    catalog = load_all_plugins().catalog("domains")
    test_counts = {d: len(catalog.get(d).tasks("test")) for d in (*SEEN, *UNSEEN)}
    listing = json.loads(tau("suites", "--json").output)
    suites = {s["name"]: s for s in listing}
    assert suites["tau-emotion-seen"]["tasks"]["test"] == {d: 58 for d in SEEN}
    assert suites["tau-emotion"]["tasks"]["test"] == test_counts
    assert suites["tau-emotion-unseen"]["tasks"]["test"] == {d: test_counts[d] for d in UNSEEN}
    assert suites["tau-emotion-unseen"]["tasks"]["hand"] == {d: len(catalog.get(d).tasks("hand")) for d in UNSEEN}

    text = tau("suites")
    assert text.exit_code == 0, text.output
    lines = text.output.splitlines()
    block = lines[lines.index(next(x for x in lines if x.startswith("tau-emotion-seen "))):]
    assert block[2].split()[:2] == ["test", "232"]
    unseen = lines[lines.index(next(x for x in lines if x.startswith("tau-emotion-unseen "))) + 1:]
    test_line = next(x for x in unseen if x.split()[0] == "test")
    missing = [d for d in UNSEEN if not test_counts[d]]
    assert test_line.split()[1] == str(sum(test_counts[d] for d in UNSEEN))
    if missing:  # until the unseen packs' Tracer splits are built
        assert test_line.endswith(f"no 'test' split: {', '.join(missing)}")


def test_a_suite_with_a_pack_lacking_the_split_is_refused_naming_it_or_run_without_it(tau):
    args = ("run", "--suite", "mock-and-restaurant", "--plugins", "tests.plugins.mixed_suite", "--split", "hand",
            "--agent", "oracle", "--user", "scripted", "--trials", "1", "--no-progress")
    refused = tau(*args)
    assert refused.exit_code == 1
    assert refused.output.strip() == ("Error: 1 of 2 domain(s) of suite 'mock-and-restaurant' have no 'hand' split: "
                                      "mock (`tau suites` lists the splits); pass --skip-missing to run the others")
    ran = tau(*args, "--skip-missing", "--summary-json", "s.json")
    assert ran.exit_code == 0, ran.output
    assert "running the other 1 (--skip-missing)" in ran.output
    summary = json.load(open("s.json"))
    assert summary["n_tasks"] == 5 and summary["avg_at_k"] == 1.0 and set(summary["by_domain"]) == {"restaurant"}


def test_a_suite_where_no_pack_has_the_split_is_refused_even_with_skip_missing(tau):
    result = tau("run", "--suite", "mock-and-restaurant", "--plugins", "tests.plugins.mixed_suite", "--split", "dev",
                 "--skip-missing", "--no-progress")
    assert result.exit_code == 1
    assert "2 of 2 domain(s) of suite 'mock-and-restaurant' have no 'dev' split: mock, restaurant" in result.output
