"""The `mock` domain: a tiny bank of accounts for fast, deterministic tests of the harness."""

from tau_emotion.core import hookimpl
from tau_emotion.core.domain import Domain


@hookimpl
def tau_register_domains(register):
    register(Domain("mock", tools="tau_emotion.domain_packs.mock.tools", package=__name__,
                    description="A tiny account ledger used by the harness's own tests."))
