"""Real servers on loopback for the remote-agent tests: an sshd with throw-away keys, and a
single-node Slurm (munge + slurmctld + slurmd in the foreground, no cgroups), each started in a
temporary folder and stopped by the caller. Neither is a stand-in: they are the distribution's
daemons (``scripts/ci-apt.sh`` installs them); a test skips, saying why, when they are missing
or cannot start.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["UnavailableError", "free_port", "slurm", "sshd"]

SSHD = "/usr/sbin/sshd"
MUNGED = "/usr/sbin/munged"
SLURMCTLD = "/usr/sbin/slurmctld"
SLURMD = "/usr/sbin/slurmd"
_INSTALL = "scripts/ci-apt.sh installs slurm-wlm and munge"


class UnavailableError(Exception):
    """The server cannot run here (the message says why)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@contextlib.contextmanager
def sshd(home: Path) -> Iterator[list[str]]:
    """An sshd on 127.0.0.1 (a free port, a temporary host key, one authorized throw-away key);
    yields the ``ssh … localhost`` argv prefix that logs in with it."""
    if not os.path.exists(SSHD) or shutil.which("ssh-keygen") is None or not shutil.which("ssh"):
        raise UnavailableError(f"{SSHD}, ssh or ssh-keygen is missing (scripts/ci-apt.sh)")
    if os.geteuid() != 0:
        raise UnavailableError("sshd needs root here (privilege separation)")
    for key in ("host_key", "id"):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(home / key)], check=True
        )
    (home / "authorized_keys").write_text((home / "id.pub").read_text())
    port = free_port()
    config = home / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {home / 'host_key'}\n"
        f"AuthorizedKeysFile {home / 'authorized_keys'}\nPidFile {home / 'sshd.pid'}\n"
        "StrictModes no\nUsePAM no\nPasswordAuthentication no\nPermitRootLogin yes\n"
    )
    os.makedirs("/run/sshd", exist_ok=True)
    proc = subprocess.Popen(
        [SSHD, "-D", "-e", "-f", str(config)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    prefix = [
        "ssh", "-p", str(port), "-i", str(home / "id"),
        "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
        "-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "localhost",
    ]  # fmt: skip
    try:
        deadline = time.monotonic() + 15
        while True:
            probe = subprocess.run([*prefix, "true"], capture_output=True, text=True, timeout=20)
            if probe.returncode == 0:
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise UnavailableError(f"sshd did not start: {probe.stderr.strip()}")
            time.sleep(0.2)
        yield prefix
    finally:
        _stop(proc)


@contextlib.contextmanager
def slurm(folder: Path) -> Iterator[dict[str, str]]:
    """A one-node Slurm cluster on this machine (``NodeName=localhost CPUs=2``): munged,
    slurmctld and slurmd in the foreground, with ``proctrack/linuxproc``, ``task/none`` and no
    cgroups (a container has no systemd to delegate them). Yields the environment
    (``SLURM_CONF``) under which ``srun`` reaches it."""
    for daemon in (MUNGED, SLURMCTLD, SLURMD):
        if not os.path.exists(daemon):
            raise UnavailableError(f"{daemon} is missing ({_INSTALL})")
    if shutil.which("srun") is None or shutil.which("munge") is None:
        raise UnavailableError(f"srun or munge is missing ({_INSTALL})")
    if os.geteuid() != 0:
        raise UnavailableError("slurmd needs root here (it starts jobs as their user)")
    folder.chmod(0o755)
    for sub in ("state", "spool", "log"):
        (folder / sub).mkdir()
    key = folder / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    sock = folder / "munge.sock"
    ctld_port, d_port, srun_port = free_port(), free_port(), free_port()
    conf = folder / "slurm.conf"
    conf.write_text(
        f"""ClusterName=kltest
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sock}
StateSaveLocation={folder / "state"}
SlurmdSpoolDir={folder / "spool"}
SlurmctldPidFile={folder / "slurmctld.pid"}
SlurmdPidFile={folder / "slurmd.pid"}
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SrunPortRange={srun_port}-{srun_port + 20}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmctldLogFile={folder / "log" / "slurmctld.log"}
SlurmdLogFile={folder / "log" / "slurmd.log"}
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""
    )
    env = {**os.environ, "SLURM_CONF": str(conf)}
    procs: list[subprocess.Popen[bytes]] = []

    def start(argv: list[str]) -> None:
        log = open(folder / "log" / f"{os.path.basename(argv[0])}.out", "wb")  # noqa: SIM115
        procs.append(
            subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env)
        )
        log.close()

    try:
        start([
            MUNGED, "-F", "-f", f"--key-file={key}", f"--socket={sock}",
            f"--pid-file={folder / 'munged.pid'}", f"--log-file={folder / 'log' / 'munged.log'}",
            f"--seed-file={folder / 'munge.seed'}",
        ])  # fmt: skip
        deadline = time.monotonic() + 10
        while not sock.exists():
            if procs[0].poll() is not None or time.monotonic() > deadline:
                why = _tail(folder / "log" / "munged.out")
                raise UnavailableError(f"munged did not start: {why}")
            time.sleep(0.1)
        start([SLURMCTLD, "-D", "-i", "-f", str(conf)])
        start([SLURMD, "-D", "-N", "localhost", "-f", str(conf)])
        deadline = time.monotonic() + 30
        while True:
            probe = subprocess.run(
                ["srun", "-N1", "-n1", "--immediate=5", "true"],
                env=env,
                capture_output=True,
                text=True,
                timeout=30,
            )
            if probe.returncode == 0:
                break
            if any(p.poll() is not None for p in procs) or time.monotonic() > deadline:
                logs = " | ".join(
                    _tail(folder / "log" / name)
                    for name in ("slurmctld.log", "slurmd.log", "slurmd.out", "slurmctld.out")
                )
                raise UnavailableError(f"Slurm did not start: {probe.stderr.strip()} | {logs}")
            time.sleep(0.5)
        yield env
    finally:
        if procs and all(p.poll() is None for p in procs):
            # Whatever a failed test left running on the cluster ends before the daemons.
            with contextlib.suppress(Exception):
                subprocess.run(["scancel", "--full", "--user=root"], env=env, timeout=10)
                deadline = time.monotonic() + 15
                while time.monotonic() < deadline:
                    queue = subprocess.run(
                        ["squeue", "-h"], env=env, capture_output=True, text=True, timeout=10
                    )
                    if not queue.stdout.strip():
                        break
                    time.sleep(0.5)
        for proc in reversed(procs):
            _stop(proc)


def _tail(path: Path, chars: int = 400) -> str:
    try:
        return path.read_text(errors="replace")[-chars:].strip()
    except OSError:
        return f"({path.name}: no log)"
