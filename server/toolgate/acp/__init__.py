"""`toolgate acp`: the Agent Client Protocol front end, a thin adapter over the session service.

Editors that speak ACP (Zed, JetBrains IDEs, Neovim and Emacs through plugins) start
`toolgate acp` as a child process and talk JSON-RPC over newline-delimited stdio. `server.py`
answers their requests through `SessionService`; `updates.py` turns run events into
`session/update` notifications; `reviewer.py` is the gate's Reviewer in ACP's
words (`session/request_permission`, `fs/write_text_file`); `convert.py` builds the ACP
records (tool kinds, titles, diff content); `options.py` holds the profile and approval
pickers; `framing.py` answers lines the SDK would drop silently.
"""

from toolgate.acp.server import serve

__all__ = ["serve"]
