"""Tracer: builds a domain's benchmark and training tasks from its tools and database.

Dependency graph (`graph`) -> seeded workflow sampling (`sampling`) -> grounding on the real
database (`grounding`) -> reverse refinement into a user instruction (`refine`) -> feelings and an
emotion condition (`feelings`) -> validation (`validate`); `build` runs the pipeline and `plugin`
adds the `tau tracer` commands. Nothing here names a domain: domain knowledge comes from the pack's
graph edges, policy rules and tracer hints (`hints`).
"""
