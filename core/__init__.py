"""tau_emotion.core: the thin core of the harness. It knows no domain, no model vendor and no emotion."""

import pluggy

from tau_emotion.core.models import (
    Action,
    EmotionSpec,
    EpisodeResult,
    Gold,
    Message,
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
    "Database",
    "EmotionSpec",
    "EpisodeResult",
    "Gold",
    "Message",
    "PROJECT",
    "RunConfig",
    "State",
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
