"""tau_emotion.core: the thin core of the harness. It knows no domain, no model vendor, no user
condition and no result store: those are plugins, found through the `tau_emotion` entry points."""

import pluggy

from tau_emotion.core.errors import DataError, TauError
from tau_emotion.core.models import (
    Action,
    EpisodeResult,
    Gold,
    Message,
    ModelSettings,
    RunConfig,
    Task,
    Termination,
    ToolCall,
    Turn,
    UserSpec,
)
from tau_emotion.core.state import Database, State
from tau_emotion.core.tools import ToolError, Toolset, tool

__version__ = "0.1.0"

PROJECT = "tau_emotion"
hookimpl = pluggy.HookimplMarker(PROJECT)

__all__ = [
    "Action",
    "DataError",
    "Database",
    "EpisodeResult",
    "Gold",
    "Message",
    "ModelSettings",
    "PROJECT",
    "RunConfig",
    "State",
    "TauError",
    "Task",
    "Termination",
    "ToolCall",
    "ToolError",
    "Toolset",
    "Turn",
    "UserSpec",
    "__version__",
    "hookimpl",
    "tool",
]
