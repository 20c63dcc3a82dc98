#!/usr/bin/env bash
# System packages some tests need (CI runs as root): an sshd (openssh-server) for the remote-agent
# tests (tests/lsp/test_clean_agent_ssh.py, tests/lsp/test_remote_agent.py), a one-node Slurm
# (slurm-wlm: slurmctld, slurmd, srun; munge) for the srun test, and Neovim for the headless
# editor test (tests/editors/test_neovim.py; Debian's 0.7, ~30 MB). The tests skip with the
# reason when they are missing.
set -euo pipefail
missing=()
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
[ -x /usr/sbin/slurmd ] && [ -x /usr/sbin/slurmctld ] || missing+=(slurm-wlm)
[ -x /usr/sbin/munged ] || missing+=(munge)
command -v nvim >/dev/null || missing+=(neovim)
if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
