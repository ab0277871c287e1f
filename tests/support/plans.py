"""A plan the tests ask for: one step Toolgate's own tools cover, one no tool provides."""

from __future__ import annotations

# `docs.render` is provided by no built-in tool: the plan is partial, with one gap to scaffold.
PARTIAL_PLAN = {
    "goal": "Publish the README",
    "steps": [
        {"step_id": "read", "capability": "fs.read", "inputs": {"path": "README.md"}},
        {
            "step_id": "render",
            "capability": "docs.render",
            "inputs": {"markdown": "${steps.read.output.content}"},
            "capability_contract": {"required_outputs": ["html"]},
        },
    ],
}
