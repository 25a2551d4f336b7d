"""The built-in generic plugins: agents, users, terminations, metrics, a results store, an executor,
a model client, the progress bar and the report commands (run metadata, show, analyze, report, compare, gate). Each module is one plugin, registered as an entry point."""

#: loaded by every run unless blocked with `no:NAME` (as pytest's default_plugins)
DEFAULT_PLUGINS = ("oracle", "tool_calling", "null", "asker", "hasty", "repeater", "scripted", "llm", "litellm", "openai",
                   "model_calls", "ray",
                   "stop", "metrics", "sqlite", "local", "progress", "report", "serve")
