"""The Kernel Lens language server (pygls 2). It never runs user code: jobs go to the agent."""
