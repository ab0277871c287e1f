"""The peer benchmark: the same tasks, the same endpoint, Toolgate and the other agents.

`python -m benchmarks.peers` runs it end to end; see benchmarks/README.md ("Peers").
"""
