"""A plugin for the suites' tests: a suite of two packs where one lacks the `hand` split (mock) and one has it."""

from tau_emotion.core import hookimpl


@hookimpl
def tau_register_suites(register):
    register("mock-and-restaurant", ["emotion", "mock", "restaurant"])
