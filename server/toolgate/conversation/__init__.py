"""Conversations: the session file on disk, the history a model reads, and the context budget."""
