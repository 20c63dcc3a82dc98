"""Driver scripts of a module, found statically (the import chain), and the Python launch
configurations of ``.vscode/launch.json`` (comments, trailing commas, envFile)."""

from __future__ import annotations

from pathlib import Path

from kernel_lens.analysis.drivers import find_drivers, launch_configs, module_names, parse_jsonc


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_scripts_importing_the_module_directly_or_through_another_module(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "proj/model.py": "class GPT: ...\n",
            "proj/engine.py": "from proj.model import GPT\n\ndef make(): return GPT()\n",
            "bench.py": "import proj.model as m\n\nif __name__ == '__main__':\n    m.GPT()\n",
            "train.py": "from proj import engine\nengine.make()\n",
            "lib.py": "from proj.model import GPT\n",  # imports it, but is no script
            "other.py": "print('unrelated')\n",
            ".venv/lib/site.py": "from proj.model import GPT\nGPT()\n",
        },
    )
    found = find_drivers(str(tmp_path), str(tmp_path / "proj" / "model.py"))
    assert [(Path(d.path).name, d.label) for d in found] == [
        ("bench.py", "bench.py → model.py"),
        ("train.py", "train.py → engine.py → model.py"),
    ]


def test_a_sibling_import_names_the_module_by_its_own_folder(tmp_path: Path) -> None:
    assert module_names(str(tmp_path / "a" / "model.py"), str(tmp_path)) == {"a.model", "model"}
    _tree(tmp_path, {"a/model.py": "X = 1\n", "a/run.py": "from model import X\nprint(X)\n"})
    [driver] = find_drivers(str(tmp_path), str(tmp_path / "a" / "model.py"))
    assert driver.label == "run.py → model.py"


def test_launch_json_with_comments_trailing_commas_and_an_env_file(tmp_path: Path) -> None:
    assert parse_jsonc('{"a": "http://x", // c\n /* b */ "b": [1, 2,],}') == {
        "a": "http://x",
        "b": [1, 2],
    }
    _tree(
        tmp_path,
        {
            ".env": "# comment\nexport A=1\nB='two'\n",
            ".vscode/launch.json": """{
  // a Python extension user's file
  "configurations": [
    {"name": "Bench", "type": "debugpy", "request": "launch",
     "program": "${workspaceFolder}/bench.py", "args": ["--real_data=False"],
     "cwd": "${workspaceFolder}/runs", "envFile": "${workspaceFolder}/.env",
     "env": {"B": "three"},},
    {"name": "Here", "type": "debugpy", "request": "launch", "program": "${file}"},
    {"name": "Attach", "type": "debugpy", "request": "attach"},
    {"name": "Node", "type": "node", "request": "launch", "program": "x.js"},
  ],
}""",
        },
    )
    [config] = launch_configs(str(tmp_path))
    assert config.name == "Bench"
    assert config.program == str(tmp_path / "bench.py")
    assert config.args == ["--real_data=False"]
    assert config.cwd == str(tmp_path / "runs")
    assert config.env == {"A": "1", "B": "three"}


def test_no_launch_json_or_a_broken_one_gives_none(tmp_path: Path) -> None:
    assert launch_configs(str(tmp_path)) == []
    _tree(tmp_path, {".vscode/launch.json": "{ not json"})
    assert launch_configs(str(tmp_path)) == []
