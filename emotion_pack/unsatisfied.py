"""The `unsatisfied` plugin: a user may end the conversation fed up with ###UNSATISFIED###.

The episode ends at once with a negative termination: reward -1 unless the task had already
succeeded at that moment (database at the gold state and outputs told), in which case the
success stands. Blocking the plugin (`--plugins emotion,no:unsatisfied`) ablates the ending:
the token is then just text and the conversation goes on.
"""

from __future__ import annotations

from tau_emotion.core import hookimpl
from tau_emotion.core.models import Termination
from tau_emotion.core.protocols import GIVE_UP

UNSATISFIED_TOKEN = "###UNSATISFIED###"


@hookimpl
def tau_register_end_tokens(register):
    """Users that give up end with this token (`view.end_tokens.give_up`) while this plugin is loaded."""
    register(GIVE_UP, UNSATISFIED_TOKEN)


@hookimpl
def tau_check_termination(episode, message):
    if message.role == "user" and message.content and UNSATISFIED_TOKEN in message.content:
        return Termination(reason="unsatisfied", by="unsatisfied", negative=True)
    return None
