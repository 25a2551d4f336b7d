"""tau_emotion.core.env: a Gymnasium-style environment over the episode loop of `tau run`.

    from tau_emotion.core.env import make
    env = make("DOMAIN", split="test", user="scripted", seed=0)
    observation, info = env.reset()
    observation, reward, terminated, truncated, info = env.step({"role": "assistant", "content": "Hello"})

The episode is the runner's own (`run_one`: the core loop, the selected plugins' hooks, the user
simulator and the scorer); the agent is the caller. `make_async` is the asyncio form, `make_vec` steps
many episodes together, `Shaping` switches on optional reward terms. See docs/rl.md.

The package is core code (it names no domain, vendor or user condition and loads every plugin through
the plugin manager, as the runner does): its folder is `core/env/` and its import name `tau_emotion.core.env`.
"""

from tau_emotion.core.env.bridge import AGENT, EnvError
from tau_emotion.core.env.environment import (
    AsyncTauEnv,
    TauEnv,
    TauVectorEnv,
    make,
    make_async,
    make_vec,
    to_message,
)
from tau_emotion.core.env.session import Session, prepare
from tau_emotion.core.env.shaping import Shaping

__all__ = ["AGENT", "AsyncTauEnv", "EnvError", "Session", "Shaping", "TauEnv", "TauVectorEnv", "make", "make_async",
           "make_vec", "prepare", "to_message"]
