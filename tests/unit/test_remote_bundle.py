"""What a job to another machine carries and brings back (client/remote.py, agent/remote.py):
the workspace modules a file imports, found statically; the bootstrap that receives the agent's
code on stdin; the host named in errors; a dropped connection told from a crash; files back.

The end-to-end checks through a real sshd and a real Slurm are tests/lsp/test_remote_agent.py.
"""

from __future__ import annotations

import base64
import os
import shlex
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from kernel_lens.client.remote import (
    bootstrap_argv,
    dropped_connection,
    package_payload,
    remote_name,
    rewrite_paths,
    save_returned_file,
    workspace_bundle,
)

SERVER = Path(__file__).resolve().parents[2] / "server"


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_the_bundle_follows_workspace_imports_and_nothing_else(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _tree(
        ws,
        {
            "app/main.py": "",
            "app/local_mod.py": "import os\n",
            "pkg/__init__.py": "",
            "pkg/sub/__init__.py": "from . import deep\n",
            "pkg/sub/deep.py": "from ..util import helper\n",
            "pkg/util.py": "def helper(): pass\n",
            "pkg/unused.py": "",
            "nsp/mod.py": "import app.local_mod\n",
            "lazy.py": "",
            "not_imported.py": "",
        },
    )
    main = ws / "app" / "main.py"
    text = (
        "import torch, json\nimport local_mod\nfrom pkg.sub import deep\nimport nsp.mod\n"
        "def f():\n    import lazy\n"
    )
    files, notes = workspace_bundle(str(main), text, [str(ws)])
    got = {os.path.relpath(f["path"], ws): os.path.relpath(f["root"], ws) for f in files}
    assert got == {
        "app/main.py": "app",  # the file's folder first, as for ``python FILE``
        "app/local_mod.py": "app",
        "pkg/__init__.py": ".",
        "pkg/sub/__init__.py": ".",
        "pkg/sub/deep.py": ".",
        "pkg/util.py": ".",  # a relative import two levels up
        "nsp/mod.py": ".",  # a namespace package (no __init__)
        "lazy.py": ".",  # an import inside a function
    }
    assert notes == []
    # The buffer's text, not the file's, travels for the file itself.
    assert files[0]["text"] == text


def test_the_bundle_is_bounded_and_says_what_it_left(tmp_path: Path) -> None:
    _tree(tmp_path, {f"m{i}.py": "x = 1\n" * 10 for i in range(5)})
    text = "".join(f"import m{i}\n" for i in range(5))
    files, notes = workspace_bundle(str(tmp_path / "main.py"), text, [], max_files=3)
    assert len(files) == 3 and len(notes) == 3
    assert "not carried" in notes[0]


def test_an_unparsable_file_still_travels_without_followers(tmp_path: Path) -> None:
    files, _ = workspace_bundle(str(tmp_path / "bad.py"), "def (:\n", [])
    assert [f["text"] for f in files] == ["def (:\n"]


@pytest.mark.parametrize(
    ("prefix", "name"),
    [
        (["ssh", "gpu-box", "python3"], "gpu-box"),
        (["ssh", "-p", "2222", "-o", "BatchMode=yes", "me@gpu-box", "python3"], "gpu-box"),
        (["/usr/bin/ssh", "-tt", "-i", "key", "host.example", "srun", "python3"], "host.example"),
        (["srun", "--gres=gpu:1", "python3"], "the Slurm allocation (srun)"),
        (["docker", "exec", "-i", "box", "python3"], "docker"),
    ],
)
def test_the_remote_is_named_as_the_user_wrote_it(prefix: list[str], name: str) -> None:
    assert remote_name(prefix) == name


def test_a_dropped_connection_is_told_from_a_crash() -> None:
    ssh = ["ssh", "gpu-box", "python3"]
    assert dropped_connection(ssh, 255, [])
    assert dropped_connection(ssh, None, ["Connection to gpu-box closed by remote host."])
    assert dropped_connection(["srun", "python3"], 1, ["srun: Force Terminated job 12"])
    assert not dropped_connection(ssh, -11, ["Fatal Python error: Segmentation fault"])
    assert not dropped_connection(["srun", "python3"], 255, [])


def test_the_bootstrap_receives_the_package_on_stdin_and_keeps_the_rest_for_the_protocol(
    tmp_path: Path,
) -> None:
    """The bootstrap's code as ssh's remote shell gets it (quoted) and as srun gets it (one
    argument); a python that cannot import kernel_lens (``-S``, cwd elsewhere) runs our agent
    from the zip, which lands in its cache."""
    argv = bootstrap_argv([sys.executable])
    assert len(argv) == 3 and "\n" not in argv[2]
    quoted = bootstrap_argv(["ssh", "h", "python3"])[-1]
    assert shlex.split(quoted) == [argv[2]]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin"),
        "HOME": str(tmp_path),
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if "site-packages" in p),
    }
    # The agent answers a ping; then its input ends, and so does it.
    proc = subprocess.Popen(
        [sys.executable, "-S", "-c", argv[2]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(package_payload() + b'{"id": 7, "method": "ping"}\n')
        proc.stdin.flush()
        lines: list[str] = []
        while len(lines) < 2:  # past the warm-up's phases ("warming" lines before "ready")
            line = proc.stdout.readline().decode().strip()
            if not line:
                break
            if '"event":"warming"' not in line:
                lines.append(line)
    finally:
        proc.stdin.close()
        proc.wait(60)
    assert '"event":"ready"' in lines[0], proc.stderr.read().decode()[-2000:] if proc.stderr else ""
    assert lines[1] == '{"id":7,"result":{"pong":true}}'
    kept = list((tmp_path / ".cache" / "kernel-lens" / "agent").glob("*.zip"))
    assert len(kept) == 1


def test_a_damaged_package_is_refused(tmp_path: Path) -> None:
    payload = bytearray(package_payload())
    payload[-10] ^= 0xFF
    out = subprocess.run(
        [sys.executable, "-S", "-c", bootstrap_argv([sys.executable])[2]],
        input=bytes(payload),
        capture_output=True,
        timeout=60,
        env={"HOME": str(tmp_path)},
    )
    assert out.returncode != 0 and b"arrived damaged" in out.stderr


def test_returned_files_land_in_the_local_cache_and_the_result_names_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KERNEL_LENS_CACHE", str(tmp_path / "cache"))
    data = b'{"traceEvents": []}'
    item = {
        "path": "/remote/home/.cache/kernel-lens/traces/box_1.json",
        "rel": "traces/box_1.json",
        "data": base64.b64encode(zlib.compress(data)).decode(),
    }
    local = save_returned_file(item)  # type: ignore[arg-type]
    assert local == str(tmp_path / "cache" / "traces" / "box_1.json")
    assert Path(local).read_bytes() == data
    # --trace-dir of this machine: the trace goes there.
    other = save_returned_file(item, str(tmp_path / "mine"))  # type: ignore[arg-type]
    assert other == str(tmp_path / "mine" / "box_1.json")
    # A relative path that climbs out stays inside the cache.
    climbing = {**item, "rel": "../../etc/x.json"}
    assert save_returned_file(climbing).startswith(str(tmp_path / "cache"))  # type: ignore[arg-type]
    result = {"trace_path": item["path"], "parts": [{"p": item["path"]}], "n": 1}
    assert rewrite_paths(result, {item["path"]: local}) == {
        "trace_path": local,
        "parts": [{"p": local}],
        "n": 1,
    }


AGENT_SIDE = """
import json, os, sys, traceback
from kernel_lens.agent import remote
from kernel_lens.agent.usercode import read_source
ws = sys.argv[1]
remote.install_bundle([
    {"path": ws + "/pkg/__init__.py", "root": ws, "text": ""},
    {"path": ws + "/pkg/mod.py", "root": ws, "text": "def boom():\\n    raise ValueError('x')\\n"},
    {"path": ws + "/main.py", "root": ws, "text": "BUFFER = 1\\n"},
])
import pkg.mod
try:
    pkg.mod.boom()
except ValueError as exc:
    frame = traceback.extract_tb(exc.__traceback__)[-1]
folder = remote._STATE.folder
print(json.dumps({
    "co_filename": pkg.mod.boom.__code__.co_filename,
    "frame": [frame.filename, frame.lineno, frame.line],
    "file_exists": os.path.isfile(pkg.mod.__file__),
    "buffer": read_source(ws + "/main.py"),
    "cwd_copy": remote.local_folder(ws + "/pkg"),
    "on_pythonpath": os.environ["PYTHONPATH"].split(os.pathsep)[0].startswith(folder),
}))
remote.cleanup()
print(os.path.exists(folder))
"""


def test_the_agent_runs_the_bundle_under_the_editors_paths(tmp_path: Path) -> None:
    """Carried modules import from a private copy, but their code, tracebacks and source are
    under the paths of the editor's machine (which do not exist here); the copy is removed."""
    import json

    ws = "/nonexistent/kl-workspace"
    out = subprocess.run(
        [sys.executable, "-c", AGENT_SIDE, ws],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(SERVER), "TMPDIR": str(tmp_path)},
    )
    assert out.returncode == 0, out.stderr
    first, gone = out.stdout.splitlines()
    got = json.loads(first)
    assert got["co_filename"] == f"{ws}/pkg/mod.py"
    assert got["frame"] == [f"{ws}/pkg/mod.py", 2, "raise ValueError('x')"]
    assert got["file_exists"] and got["on_pythonpath"]
    assert got["buffer"] == "BUFFER = 1\n"
    assert got["cwd_copy"].startswith(str(tmp_path)) and got["cwd_copy"].endswith("/pkg")
    assert gone == "False"


async def test_a_host_that_cannot_be_reached_is_named() -> None:
    """A real ssh client against a closed port on loopback: the error names the host and what
    ssh said, not "the agent exited at start"."""
    import shutil
    import socket

    from kernel_lens.client import AgentClient
    from kernel_lens.wire.errors import ProfileError

    if shutil.which("ssh") is None:
        pytest.skip("no ssh client (scripts/ci-apt.sh installs openssh-server, which brings it)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    prefix = ["ssh", "-p", str(port), "-o", "BatchMode=yes", "127.0.0.1", "python3"]
    client = AgentClient(prefix, [].append, local=False, spare=False)
    try:
        with pytest.raises(ProfileError) as info:
            await client.run({"path": "/nowhere/x.py", "function": "f"}, timeout=30)
    finally:
        await client.close()
    assert info.value.kind == "crash"
    assert info.value.message.startswith("cannot reach 127.0.0.1 (kernelLens.agentCommand): ")
    assert "Connection refused" in info.value.message
