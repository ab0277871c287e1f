"""The model side: an OpenAI-compatible chat client, and the choice between native and text tools."""
