"""Arguments of any script (issue 41 item 1): which reader a script's text uses (argparse,
click, fire, nanoGPT's configurator.py, hydra, plain sys.argv), which reader a real SystemExit
came out of, the CPU arguments in the script's own form, and the per-workspace store every run
reads them from (the editor's *Arguments…*, a launch configuration, the CLI)."""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path

import click
import fire
import pytest

from kernel_lens import run_choices
from kernel_lens.analysis.script_args import argv_reader, cpu_arguments, exit_reader, reader_form
from kernel_lens.run_choices import DriverChoice, RunChoices

#: nanoGPT's bench.py head, as it is (github.com/karpathy/nanoGPT): globals, then configurator.py.
NANOGPT_BENCH = """\
import os
import torch
from model import GPTConfig, GPT
batch_size = 12
block_size = 1024
real_data = True
device = 'cuda' # examples: 'cpu', 'cuda', 'cuda:0', 'cuda:1', etc.
compile = True # use PyTorch 2.0 to compile the model to be faster
profile = False
exec(open('configurator.py').read()) # overrides from command line or config file
"""

ARGPARSE = """\
import argparse
p = argparse.ArgumentParser()
p.add_argument("--width", type=int, required=True)
p.add_argument("--device", default="cuda")
args = p.parse_args()
"""

CLICK = """\
import click

@click.command()
@click.option("--steps", type=int, required=True)
@click.option("--device", default="cuda")
def main(steps, device):
    pass

if __name__ == "__main__":
    main()
"""

FIRE = """\
import fire

def train(width, device="cuda"):
    pass

if __name__ == "__main__":
    fire.Fire(train)
"""

HYDRA = """\
import hydra

@hydra.main(config_path="conf", config_name="config")
def main(cfg):
    print(cfg.device)
"""

SYS_ARGV = """\
import sys
n = int(sys.argv[1])
"""


@pytest.mark.parametrize(
    ("text", "reader"),
    [
        (NANOGPT_BENCH, "configurator.py"),
        (ARGPARSE, "argparse"),
        (CLICK, "click"),
        (FIRE, "fire"),
        (HYDRA, "hydra"),
        (SYS_ARGV, "sys.argv"),
        ("import torch\nx = torch.ones(3)\n", None),
    ],
)
def test_the_reader_of_a_scripts_arguments_is_read_from_its_text(
    text: str, reader: str | None
) -> None:
    assert argv_reader(text) == reader


def test_each_reader_says_its_form() -> None:
    assert reader_form("configurator.py") == "--key=value"
    assert reader_form("fire") == "--key=value"
    assert reader_form("hydra") == "key=value"
    assert reader_form("argparse") == "--option value"


def _exit_files(run: object) -> list[str]:
    """The files of the traceback of the SystemExit ``run()`` raises."""
    with pytest.raises(SystemExit) as caught:
        run()  # type: ignore[operator]
    return [f.filename for f in traceback.extract_tb(caught.value.__traceback__)]


def test_a_real_argparse_exit_is_argparses(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--width", type=int, required=True)
    assert exit_reader(_exit_files(lambda: parser.parse_args([]))) == "argparse"


def test_a_real_click_exit_is_clicks(capsys: pytest.CaptureFixture[str]) -> None:
    @click.command()
    @click.option("--steps", type=int, required=True)
    def main(steps: int) -> None:
        raise AssertionError("not reached")

    files = _exit_files(lambda: main.main(args=[], prog_name="train.py"))
    assert exit_reader(files) == "click"
    assert "Missing option" in capsys.readouterr().err


def test_a_real_fire_exit_is_fires(capsys: pytest.CaptureFixture[str]) -> None:
    def train(width: int, device: str = "cuda") -> None:
        raise AssertionError("not reached")

    files = _exit_files(lambda: fire.Fire(train, command=[], name="train.py"))
    assert exit_reader(files) == "fire"


def test_a_scripts_own_exit_is_no_readers() -> None:
    assert exit_reader(_exit_files(lambda: sys.exit(3))) is None


def test_nanogpt_is_put_on_the_cpu_in_its_own_form_and_its_compile_turned_off() -> None:
    assert cpu_arguments(NANOGPT_BENCH) == ["--device=cpu", "--compile=False"]
    # the arguments given are kept; a device given is replaced
    given = ["--batch_size=2", "--device=cuda:1"]
    assert cpu_arguments(NANOGPT_BENCH, given) == [
        "--batch_size=2",
        "--device=cpu",
        "--compile=False",
    ]


def test_each_reader_gets_the_cpu_in_its_form() -> None:
    assert cpu_arguments(ARGPARSE, ["--width", "64", "--device", "cuda"]) == [
        "--width",
        "64",
        "--device",
        "cpu",
    ]
    assert cpu_arguments(CLICK, ["--steps", "3"]) == ["--steps", "3", "--device", "cpu"]
    assert cpu_arguments(FIRE, ["--width=8"]) == ["--width=8", "--device=cpu"]
    assert cpu_arguments(HYDRA) == ["device=cpu"]  # its config's key, read as cfg.device
    assert cpu_arguments(HYDRA.replace("cfg.device", "cfg.lr")) is None
    assert cpu_arguments(SYS_ARGV) is None  # nothing to set: the GPU machine is the way
    assert cpu_arguments("import torch\n") is None


def test_arguments_and_drivers_are_kept_in_one_file_read_again_by_each_reader(
    tmp_path: Path,
) -> None:
    store = RunChoices(str(tmp_path / "choices.json"))
    train, model = str(tmp_path / "train.py"), str(tmp_path / "model.py")
    assert store.script_args(train) is None
    store.set_script_args(train, ["--width", "64"])
    assert RunChoices(store.file).script_args(train) == ["--width", "64"]
    store.set_script_args(train, [])
    assert RunChoices(store.file).script_args(train) == []  # set to none, not forgotten
    store.set_driver(model, "Block.forward", DriverChoice("script", train))
    assert RunChoices(store.file).driver(model, "Block.forward") == DriverChoice("script", train)
    assert list(RunChoices(store.file).drivers_of(model)) == ["Block.forward"]
    store.set_driver(model, "Block.forward", None)
    assert RunChoices(store.file).driver(model, "Block.forward") is None
    store.set_script_args(train, None)
    assert store.script_args(train) is None


def test_a_damaged_store_reads_as_empty_and_is_written_whole_again(tmp_path: Path) -> None:
    file = tmp_path / "choices.json"
    file.write_text("{not json")
    store = RunChoices(str(file))
    assert store.script_args("/x/train.py") is None
    store.set_script_args("/x/train.py", ["--a=1"])
    assert json.loads(file.read_text())["scripts"] == {"/x/train.py": ["--a=1"]}


def _launch_json(ws: Path, configs: list[dict[str, object]]) -> None:
    (ws / ".vscode").mkdir(exist_ok=True)
    body = {"version": "0.2.0", "configurations": configs}
    (ws / ".vscode" / "launch.json").write_text("// comment\n" + json.dumps(body))


def test_a_driver_script_runs_with_its_arguments_as_they_are_set_at_each_run(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    train, model = ws / "train.py", ws / "model.py"
    train.write_text(ARGPARSE)
    model.write_text("def f(x):\n    return x\n")
    roots = [str(ws)]
    # no arguments set: a launch configuration of the script gives them
    _launch_json(
        ws,
        [
            {
                "name": "Train CPU",
                "type": "debugpy",
                "request": "launch",
                "program": "${workspaceFolder}/train.py",
                "args": ["--width", "8"],
            }
        ],
    )
    assert run_choices.script_arguments(str(train), roots) == (
        ["--width", "8"],
        "launch configuration “Train CPU”",
    )
    RunChoices.for_path(str(model), roots).set_driver(
        str(model), "f", DriverChoice("script", str(train))
    )
    fields = run_choices.driver_fields(str(model), "f", roots)
    assert fields["driver"] == str(train) and fields["argv"] == ["--width", "8"]
    # the Arguments… of train.py, set once, are used by the driver's next run
    RunChoices.for_path(str(train), roots).set_script_args(str(train), ["--width", "64"])
    assert run_choices.driver_fields(str(model), "f", roots)["argv"] == ["--width", "64"]
    assert run_choices.driver_label(run_choices.driver_fields(str(model), "f", roots)) == (
        "train.py --width 64"
    )


def test_a_launch_configuration_driver_is_read_again_from_launch_json(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    bench, model = ws / "bench.py", ws / "model.py"
    bench.write_text(NANOGPT_BENCH)
    model.write_text("def f(x):\n    return x\n")
    config = {
        "name": "Bench",
        "type": "debugpy",
        "request": "launch",
        "program": "${workspaceFolder}/bench.py",
        "args": ["--device=cuda"],
    }
    _launch_json(ws, [config])
    roots = [str(ws)]
    choice = DriverChoice("launch", str(bench), ("--device=cuda",), "Bench")
    RunChoices.for_path(str(model), roots).set_driver(str(model), "f", choice)
    assert run_choices.driver_fields(str(model), "f", roots)["argv"] == ["--device=cuda"]
    _launch_json(ws, [{**config, "args": ["--device=cpu", "--compile=False"]}])
    fields = run_choices.driver_fields(str(model), "f", roots)
    assert fields["argv"] == ["--device=cpu", "--compile=False"]
    assert (
        run_choices.driver_label(fields, choice)
        == "“Bench” (bench.py --device=cpu --compile=False)"
    )


def test_a_workspace_with_a_kernel_lens_folder_keeps_its_own_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KERNEL_LENS_RUN_CHOICES")
    ws = tmp_path / "ws"
    (ws / ".kernel-lens").mkdir(parents=True)
    assert run_choices.choices_file(str(ws / "a.py"), [str(ws)]) == str(
        ws / ".kernel-lens" / "run-choices.json"
    )
    monkeypatch.setenv("KERNEL_LENS_CACHE", str(tmp_path / "cache"))
    assert run_choices.choices_file(str(tmp_path / "b.py"), [str(ws)]) == str(
        tmp_path / "cache" / "run-choices.json"
    )
