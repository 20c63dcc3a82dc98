-- Kernel Lens in Neovim without a plugin: the configuration the README's "Other editors" shows,
-- driven headless by tests/editors/test_neovim.py (Neovim 0.7 and later).
--
-- Environment: KL_FILE (the Python file to open), KL_ROOT (its project folder), KL_CMD (the
-- server's command, JSON), KL_OUT (where the results go, JSON), KL_ACTION (the code action's
-- title to pick).

local M = {}

--- The client's configuration: the same table for vim.lsp.start (0.8+) and start_client (0.7).
function M.config(cmd, root)
  return {
    name = "kernel-lens",
    cmd = cmd,
    root_dir = root,
    -- Other editors have no workspace trust of their own: say whether this folder may run.
    init_options = { workspaceTrusted = true },
  }
end

--- Start (or reuse) the server for a buffer: vim.lsp.start where there is one (0.8+), else
--- start_client + buf_attach_client (0.7).
function M.start(bufnr, cmd, root)
  local config = M.config(cmd, root)
  if vim.lsp.start then
    return vim.lsp.start(config, { bufnr = bufnr })
  end
  local id = vim.lsp.start_client(config)
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

local function lenses_of(bufnr)
  local out = {}
  for _, lens in ipairs(vim.lsp.codelens.get(bufnr) or {}) do
    if lens.command then
      table.insert(out, {
        line = lens.range.start.line,
        title = lens.command.title,
        command = lens.command.command,
      })
    end
  end
  return out
end

--- The test: open the file, pick the code action, wait for the per-line lenses, write them.
function M.run()
  local results = { steps = {} }
  local function finish(ok, why)
    results.ok = ok
    results.why = why
    vim.fn.writefile({ vim.fn.json_encode(results) }, os.getenv("KL_OUT"))
    vim.cmd("qall!")
  end
  local ok, err = pcall(function()
    vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("KL_FILE")))
    vim.bo.filetype = "python"
    local bufnr = vim.api.nvim_get_current_buf()
    local id = M.start(bufnr, vim.fn.json_decode(os.getenv("KL_CMD")), os.getenv("KL_ROOT"))
    local client
    local ready = vim.wait(60000, function()
      client = vim.lsp.get_client_by_id(id)
      return client ~= nil
        and client.server_capabilities ~= nil
        and client.server_capabilities.codeActionProvider ~= nil
        and vim.lsp.buf_is_attached(bufnr, id)
    end, 100)
    if not ready then
      return finish(false, "the server did not start")
    end
    results.version = tostring(vim.version().major) .. "." .. tostring(vim.version().minor)
    table.insert(results.steps, "started")
    -- The cursor on the function's def line: its code actions are the function's.
    local def = vim.fn.search("^def ", "w")
    vim.api.nvim_win_set_cursor(0, { def, 4 })
    local offered = {}
    local picked = false
    -- Neovim lists code actions with vim.ui.select: pick the one asked for, by its title.
    vim.ui.select = function(items, opts, on_choice)
      for _, item in ipairs(items) do
        local title = opts.format_item and opts.format_item(item) or tostring(item)
        table.insert(offered, title)
      end
      for i, item in ipairs(items) do
        local title = opts.format_item and opts.format_item(item) or tostring(item)
        if title == os.getenv("KL_ACTION") then
          picked = true
          return on_choice(item, i)
        end
      end
      on_choice(nil, nil)
    end
    vim.lsp.buf.code_action()
    vim.wait(20000, function()
      return #offered > 0
    end, 100)
    results.offered = offered
    if not picked then
      return finish(false, "the code action was not offered")
    end
    table.insert(results.steps, "picked")
    -- Neovim does not implement workspace/codeLens/refresh: it asks for the lenses again.
    local measured = vim.wait(180000, function()
      vim.lsp.codelens.refresh()
      vim.wait(500)
      for _, lens in ipairs(lenses_of(bufnr)) do
        if lens.line > def - 1 and lens.title:find("%d") then
          return true
        end
      end
      return false
    end, 1000)
    results.lenses = lenses_of(bufnr)
    results.commands = client.server_capabilities.executeCommandProvider.commands
    if not measured then
      return finish(false, "no per-line result appeared")
    end
    finish(true, nil)
  end)
  if not ok then
    finish(false, tostring(err))
  end
end

return M
