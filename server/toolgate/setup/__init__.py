"""Getting a person from nothing to a first run: what is there, what is missing, how to fix it.

`local_servers` finds model servers already running on this machine's usual ports,
`endpoint_check` asks an endpoint whether a run can use it (and how it calls tools),
`doctor` checks everything a run needs on one screen, and `model_install` installs the
embedded local model into the running Python. The terminal, the language server and the
editor all call these; none of them imports a front end.
"""
