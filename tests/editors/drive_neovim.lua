-- Use Toolgate from Neovim's own LSP client, as a person would, headless.
--
-- The configuration from docs/EDITORS.md is the init file. TOOLGATE_TEST_SCENARIO says what the
-- person does:
--   "edit" (the default): open TOOLGATE_TEST_FILE, ask the agent, accept its proposal from the
--     code-action menu, save, then run the tests and read the diagnostics Neovim shows, and
--     have the model review the changes (`:ToolgateReview`) and read its comments there too;
--   "new_file": open TOOLGATE_TEST_NEW, a file not yet on disk, ask the agent, accept the new
--     file from that buffer's menu and save it; then, on TOOLGATE_TEST_FILE's buffer, accept
--     the next new file, TOOLGATE_TEST_NEXT, through the menu's "Review pending proposals (N)";
--   "new_test": open TOOLGATE_TEST_FILE, ask the agent, accept its edit from the menu, then open
--     the new test file TOOLGATE_TEST_TESTS (not yet on disk) and accept it from its own menu;
--     save nothing, and read the diagnostics the agent's test run leaves in its buffer;
--   "problems": with the person's own second language server (pylsp) on TOOLGATE_TEST_FILE, ask
--     the agent and accept its edit; the configuration tells the agent what pylsp reports.
-- What happened is written to TOOLGATE_TEST_OUT as JSON.

local seen = { menu = {}, notices = {} }
-- The menu entry the person picks: the first whose title matches.
local pick = '^Accept '

local function wait(what, predicate, ms)
  if not vim.wait(ms, predicate, 50) then
    error('timed out waiting for ' .. what)
  end
end

local function toolgate_client(buf)
  for _, client in pairs(vim.lsp.buf_get_clients(buf)) do
    if client.name == 'toolgate' and client.server_capabilities then
      return client
    end
  end
end

local function code_action_titles(buf)
  local params = vim.lsp.util.make_range_params()
  params.context = { diagnostics = {} }
  local titles = {}
  for _, response in pairs(vim.lsp.buf_request_sync(buf, 'textDocument/codeAction', params, 5000) or {}) do
    for _, action in ipairs(response.result or {}) do
      table.insert(titles, action.title)
    end
  end
  return titles
end

-- The person: reads the notices, and picks the "Accept" entry of the code-action menu.
local notify = vim.notify
vim.notify = function(message, level, opts)
  table.insert(seen.notices, message)
  return notify(message, level, opts)
end
vim.ui.select = function(items, opts, on_choice)
  local function format(item)
    return tostring((opts.format_item or tostring)(item)) -- one value: some return gsub's two
  end
  for _, item in ipairs(items) do
    table.insert(seen.menu, format(item))
  end
  for index, item in ipairs(items) do
    if format(item):match(pick) then
      return on_choice(item, index)
    end
  end
  on_choice(nil, nil)
end

local function buffer_text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n') .. '\n'
end

local function run_ended()
  for _, notice in ipairs(seen.notices) do
    if notice:match('^Toolgate run ') then
      return true
    end
  end
  return false
end

-- Wait until the code-action menu of `buf` offers an entry matching `pattern`.
local function offered(buf, pattern)
  wait('an entry ' .. pattern, function()
    for _, title in ipairs(code_action_titles(buf)) do
      if title:match(pattern) then
        return true
      end
    end
    return false
  end, 60000)
end

local scenarios = {}

function scenarios.edit()
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('TOOLGATE_TEST_FILE')))
  local buf = vim.api.nvim_get_current_buf()
  wait('the server', function() return toolgate_client(buf) ~= nil end, 60000)

  vim.cmd('ToolgateAsk Fix add')
  offered(buf, '^Accept')
  vim.lsp.buf.code_action()
  wait('the accepted edit', function() return buffer_text(buf):find('a - b', 1, true) == nil end, 30000)
  vim.cmd('write')
  seen.text = buffer_text(buf)
  wait('the end of the run', run_ended, 30000)

  -- Test failures come back as diagnostics on the failing line of the open test file.
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('TOOLGATE_TEST_TESTS')))
  local tests = vim.api.nvim_get_current_buf()
  wait('the test file attached', function() return toolgate_client(tests) ~= nil end, 60000)
  vim.cmd('ToolgateTests')
  wait('diagnostics', function() return #vim.diagnostic.get(tests) > 0 end, 60000)
  seen.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(tests)) do
    table.insert(seen.diagnostics, { line = d.lnum + 1, severity = d.severity, message = d.message })
  end

  -- The model reviews the changes: its comment is a diagnostic on the line it is about.
  vim.cmd('buffer ' .. buf)
  vim.cmd('ToolgateReview')
  local function reviewed()
    local found = {}
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.source == 'toolgate-review' then
        table.insert(found, { line = d.lnum + 1, severity = d.severity, message = d.message })
      end
    end
    return #found > 0 and found or nil
  end
  wait('the review', function() return reviewed() ~= nil end, 60000)
  seen.review = reviewed()
  -- The command's answer, as the configuration shows it.
  wait('the review\'s answer', function()
    for _, notice in ipairs(seen.notices) do
      if notice:match('approved = ') then
        seen.review_answer = notice
        return true
      end
    end
    return false
  end, 30000)
end

function scenarios.new_file()
  local new = os.getenv('TOOLGATE_TEST_NEW')
  vim.cmd('edit ' .. vim.fn.fnameescape(new))
  local buf = vim.api.nvim_get_current_buf()
  wait('the server', function() return toolgate_client(buf) ~= nil end, 60000)
  vim.cmd('ToolgateAsk Create the new files')
  offered(buf, '^Accept ')
  seen.existed_before_accept = vim.fn.filereadable(new) == 1
  vim.lsp.buf.code_action()
  wait('the new file in its buffer', function() return buffer_text(buf) ~= '\n' end, 30000)
  vim.cmd('write')
  seen.new_text = buffer_text(buf)

  -- The next new file, reviewed from a buffer that has nothing pending of its own.
  seen.own_menu, seen.menu = seen.menu, {}
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('TOOLGATE_TEST_FILE')))
  local other = vim.api.nvim_get_current_buf()
  wait('the other buffer attached', function() return toolgate_client(other) ~= nil end, 60000)
  -- Named, as the first file may still be listed for a moment while its edit lands.
  pick = '^Review pending proposals %(%d+%): accept write_file proposal: ' .. os.getenv('TOOLGATE_TEST_NEXT')
  offered(other, pick)
  vim.lsp.buf.code_action()
  wait('the end of the run', run_ended, 60000)
  vim.cmd('silent! wall')
end

function scenarios.new_test()
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('TOOLGATE_TEST_FILE')))
  local buf = vim.api.nvim_get_current_buf()
  wait('the server', function() return toolgate_client(buf) ~= nil end, 60000)
  if os.getenv('TOOLGATE_TEST_NO_SAVE') == '1' then
    -- A client that cannot save when the server asks (most cannot): the server must.
    toolgate_client(buf).handlers['toolgate/saveDocuments'] = nil
  end
  vim.cmd('ToolgateAsk Fix add and write a test for it')
  offered(buf, '^Accept ')
  vim.lsp.buf.code_action()
  wait('the accepted edit', function() return buffer_text(buf):find('a - b', 1, true) == nil end, 30000)
  -- The new test file, accepted from its own buffer before it exists; the person saves nothing.
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('TOOLGATE_TEST_TESTS')))
  local tests = vim.api.nvim_get_current_buf()
  wait('the test file attached', function() return toolgate_client(tests) ~= nil end, 60000)
  offered(tests, '^Accept ')
  vim.lsp.buf.code_action()
  wait('the end of the run', run_ended, 60000)
  wait('diagnostics in the new test file', function() return #vim.diagnostic.get(tests) > 0 end, 30000)
  seen.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(tests)) do
    table.insert(seen.diagnostics, { line = d.lnum + 1, severity = d.severity, message = d.message })
  end
  seen.new_text = buffer_text(tests)
  seen.modified = { calc = vim.bo[buf].modified, tests = vim.bo[tests].modified }
end

function scenarios.problems()
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('TOOLGATE_TEST_FILE')))
  local buf = vim.api.nvim_get_current_buf()
  wait('the server', function() return toolgate_client(buf) ~= nil end, 60000)
  -- The person's usual Python server, beside Toolgate, as their own configuration starts it.
  local pylsp = vim.lsp.start_client({ name = 'pylsp', cmd = { vim.fn.exepath('pylsp') }, root_dir = vim.fn.getcwd() })
  vim.lsp.buf_attach_client(buf, pylsp)
  local function pylsp_says()
    local said = {}
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.source == 'pyflakes' then
        table.insert(said, { line = d.lnum + 1, message = d.message })
      end
    end
    return said
  end
  wait('pylsp\'s first word on the file', function() return #pylsp_says() > 0 end, 60000)
  seen.before = pylsp_says()
  vim.cmd('ToolgateAsk Fix add')
  offered(buf, '^Accept ')
  vim.lsp.buf.code_action()
  wait('the end of the run', run_ended, 60000)
  seen.after = pylsp_says()
end

local ok, failure = pcall(scenarios[os.getenv('TOOLGATE_TEST_SCENARIO') or 'edit'])

if not ok then
  io.stderr:write('drive_neovim: ' .. tostring(failure) .. '\n')
  vim.cmd('cquit 1')
end
local out = assert(io.open(os.getenv('TOOLGATE_TEST_OUT'), 'w'))
out:write(vim.fn.json_encode(seen))
out:close()
vim.cmd('qall!')
