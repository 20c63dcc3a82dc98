"""The Kernel Lens language server (pygls 2). It never runs user code: jobs go to the agent."""

# The agent's analysis needs pandas in the same interpreter. Importing it here makes the
# extension's start-up check (`import kernel_lens.lsp`) fail where it is missing, so the user is
# offered the install instead of meeting the error at the first profile.
import pandas  # noqa: F401
