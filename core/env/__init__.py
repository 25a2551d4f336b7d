"""tau_emotion.env: a Gymnasium-style environment over the episode loop of `tau run`.

    from tau_emotion.env import make
    env = make("DOMAIN", split="test", user="scripted", seed=0)
    observation, info = env.reset()
    observation, reward, terminated, truncated, info = env.step({"role": "assistant", "content": "Hello"})

The episode is the runner's own (`run_one`: the core loop, the selected plugins' hooks, the user
simulator and the scorer); the agent is the caller. `make_async` is the asyncio form, `make_vec` steps
many episodes together, `Shaping` switches on optional reward terms. See docs/rl.md.

The package is core code (it names no domain, vendor or user condition and loads every plugin through
the plugin manager, as the runner does); it lives in `core/env/` and is installed as `tau_emotion.env`.
Import it by that name.
"""

if __name__ != "tau_emotion.env":  # the folder is core/env/: a second import under another name would copy it
    raise ImportError(f"import tau_emotion.env, not {__name__}")

from tau_emotion.env.bridge import AGENT, EnvError  # noqa: E402
from tau_emotion.env.environment import (  # noqa: E402
    AsyncTauEnv,
    TauEnv,
    TauVectorEnv,
    make,
    make_async,
    make_vec,
    to_message,
)
from tau_emotion.env.session import Session, prepare  # noqa: E402
from tau_emotion.env.shaping import Shaping  # noqa: E402

__all__ = ["AGENT", "AsyncTauEnv", "EnvError", "Session", "Shaping", "TauEnv", "TauVectorEnv", "make", "make_async",
           "make_vec", "prepare", "to_message"]
