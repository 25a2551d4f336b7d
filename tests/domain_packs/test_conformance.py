"""One conformance suite for every installed domain: what a third-party pack must also pass.

The checks live in `tau_emotion.domain_packs.conformance` so a pack's own tests run the same ones
(`tau new-pack` writes such a test); here each check runs against every installed domain.
"""

import pytest

from tau_emotion.core.manager import load_all_plugins
from tau_emotion.domain_packs.conformance import CHECKS

_PM = load_all_plugins()
DOMAINS = _PM.catalog("domains")


@pytest.mark.parametrize("check", list(CHECKS))
@pytest.mark.parametrize("name", [pytest.param(name, marks=[] if name == "mock" else [pytest.mark.slow])
                                  for name in DOMAINS.names()])  # the quick loop checks the mock pack
def test_domain_conforms(name, check):
    problems = CHECKS[check](DOMAINS.get(name))
    assert not problems, f"{name}: " + "; ".join(problems[:5])
