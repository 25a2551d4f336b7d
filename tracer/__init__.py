"""Tracer: builds a domain's benchmark and training tasks from its tools and database.

Dependency graph (`graph`) -> seeded workflow sampling (`sampling`) -> grounding on the real
database (`grounding`) -> reverse refinement into a user instruction (`refine`) -> feelings and an
emotion condition (`feelings`) -> validation (`validate`); `build` runs the pipeline. `collect`
keeps an agent's +1 trajectories against the emotional user and `export` turns them into SFT/DPO
datasets; `plugin` adds the `tau tracer` commands and `tau export-sft`. Nothing here names a
domain: domain knowledge comes from the pack's graph edges, policy rules and tracer hints (`hints`).
"""
