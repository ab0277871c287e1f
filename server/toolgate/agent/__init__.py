"""The agent: its loop, the gate and policy, events, metrics and the run log."""
