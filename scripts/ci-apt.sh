#!/usr/bin/env bash
# System packages some tests need (CI runs as root). Today: an sshd for the remote-agent tests
# (tests/lsp/test_clean_agent_ssh.py), which skip with the reason when it is missing.
set -euo pipefail
if [ ! -x /usr/sbin/sshd ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server >/dev/null
fi
