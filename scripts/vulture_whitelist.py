"""Names the dead-code check cannot see used: they are reached by a framework, not a call."""

# ruff: noqa: B018, F821
# Each bare name below counts as a use for vulture; nothing here is run.

# Language server handlers: pygls calls them by the method or command they are registered for.
initialized
initialize
did_change_configuration
did_change
did_open
code_action
ask
fix_failure
edit_selection
accept_proposal
reject_proposal
accept_all
list_proposals
run_tests
set_approval_mode
report_diagnostics
run_plan
drop_plan
run_workflow
scaffold_tool
undo_run
review
apply_suggestion
review_loop
new_session
list_sessions
load_session
rename_session
delete_session
doctor
find_model_servers
check_endpoint
set_approval_mode
customization
run_command
# pygls' protocol registers its methods by their `lsp_method` name; cattrs reads this attribute.
lsp_shutdown
lsp_workspace__execute_command
detailed_validation
# pygls' server reads `_stop_event` and calls `report_server_error` and `_start_io_async`.
_stop_event
report_server_error
_start_io_async

# pytest calls its hooks by name (the plugin that reports a run to Toolgate, and the tests' own).
pytest_runtest_logreport
pytest_collectreport
pytest_sessionfinish
pytest_configure
pytest_runtest_makereport
pytest_exception_interact
session
pytestmark
_isolated_user_state
_print_tally  # tests/security and tests/faults: prints the counts when the module ends

# Context-manager arguments fixed by the protocol.
exc_type

# Run at interpreter exit through `atexit.register`.
_stop_all

# Read by scripts/install-local-model.sh.
LOCAL_REQUIREMENTS

# http.server calls these by name on the test's scripted model server.
protocol_version
log_message
do_GET
do_POST
daemon_threads
close_connection

# pytest-lsp calls the test client's handlers by the method they are registered for.
_resolved
_event
_session_changed

# ACP handlers: the SDK's router calls an agent's and a client's methods by the protocol's names.
on_connect
authenticate
read_text_file

# The MCP SDK's EventStore interface: its Streamable HTTP transport calls them.
store_event
replay_events_after

# The MCP SDK's TokenStorage (toolgate.mcp.oauth) and OAuth authorization server provider
# (tests/mcp/remote_server.py) interfaces: the SDK calls them.
get_tokens
set_tokens
get_client_info
set_client_info
get_client
register_client
authorize
load_authorization_code
exchange_authorization_code
load_refresh_token
exchange_refresh_token
load_access_token
revoke_token
