"""The model side: an OpenAI-compatible client, and native versus text tool calling."""
