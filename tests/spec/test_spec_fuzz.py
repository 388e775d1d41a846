"""Fuzzed specs through every verb of the CLI: exit 0, 1 or 2 with a one-line message, never a
traceback (the contract and the mutations are in tests/spec/fuzz.py; scripts/fuzz_specs.py runs the
same fuzzer for minutes)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.spec import fuzz


@pytest.fixture(scope="module")
def fixture(tmp_path_factory):
    return fuzz.make_fixture(tmp_path_factory.mktemp("fuzz") / "base")


@pytest.mark.parametrize("verb", fuzz.VERBS)
def test_the_unmutated_generalization_spec_runs(fixture, verb):
    import yaml

    assert fuzz.run_example(fixture, verb, yaml.safe_dump(fuzz.GENERALIZATION)).code == 0


@pytest.mark.parametrize("catch_all", [False, True])
def test_a_crash_fails_the_harness_even_behind_a_catch_all(fixture, catch_all):
    """An exception that is not sqlanon's own fails the fuzzer, whether ``main`` lets it through or
    a catch-all in ``main`` turns it into exit 2."""
    from sqlanon.cli import main as cli

    run, main = cli.run, cli.main

    def crash(args):
        raise KeyError("")

    def catching_main(argv):
        try:
            return cli.run(cli.build_parser().parse_args(argv))
        except Exception:
            return 2

    cli.run = crash
    if catch_all:
        cli.main = catching_main
    try:
        with pytest.raises(fuzz.UnexpectedError, match="raised KeyError"):
            fuzz.run_cli(["check", "spec.yml"])
    finally:
        cli.run, cli.main = run, main


@settings(max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), verb=st.sampled_from(fuzz.VERBS))
def test_fuzzed_specs_exit_cleanly_through_every_verb(fixture, data, verb):
    fuzz.run_example(fixture, verb, fuzz.spec_text(data))


def test_reports_go_to_the_current_standard_output(fixture):
    """The CLI printed reports to the sys.stdout of the time it was imported (a closed stream when
    main runs in-process later): ValueError: I/O operation on closed file."""
    import yaml

    for _ in range(2):  # the first run may be the one that imports the CLI
        outcome = fuzz.run_example(fixture, "check", yaml.safe_dump(fuzz.GENERALIZATION))
        assert outcome.code == 0 and "anonymous: yes" in outcome.stdout
