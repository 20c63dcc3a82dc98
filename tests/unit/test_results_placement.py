"""Results follow their function when it moves, and are withdrawn when it changes."""

from kernel_lens.lsp.results import Record, place
from kernel_lens.lsp.settings import Settings
from kernel_lens.lsp.state import DocumentStore

SRC = "import torch\n\n\ndef f(x):\n    y = x * 2\n    return y\n\n\ndef g():\n    pass\n"


def _record() -> Record:
    return Record("f", "ok", ["def f(x):", "    y = x * 2", "    return y"], 4, result={})


def test_unchanged_function_keeps_its_lines() -> None:
    placed = place(_record(), SRC)
    assert placed is not None and not placed.outdated and placed.offset == 0
    assert placed.current_line(5) == 5


def test_lines_added_above_move_the_results() -> None:
    placed = place(_record(), "# one\n# two\n" + SRC)
    assert placed is not None and not placed.outdated
    assert placed.current_line(5) == 7


def test_an_edit_inside_outdates_and_a_removal_drops() -> None:
    placed = place(_record(), SRC.replace("x * 2", "x * 3"))
    assert placed is not None and placed.outdated
    assert place(_record(), SRC.replace("def f(x)", "def h(x)")) is None
    assert place(_record(), "def f(:\n") is None


def test_store_replaces_per_function() -> None:
    store = DocumentStore()
    store.put("file:///a.py", _record())
    store.put("file:///a.py", Record("f", "running", [], 4))
    assert [r.state for r in store.records("file:///a.py")] == ["running"]
    store.forget("file:///a.py")
    assert store.records("file:///a.py") == []


def test_settings_accept_options_and_reject_nonsense() -> None:
    s = Settings()
    s.update(
        {
            "agentCommand": ["ssh", "gpu", "python3"],
            "timeoutSeconds": 30,
            "workspaceTrusted": False,
            "timing": {"warmupMs": 10, "budgetMs": -5, "reps": "7"},
        }
    )
    assert s.agent_command == ["ssh", "gpu", "python3"]
    assert (s.timeout_seconds, s.workspace_trusted, s.warmup_ms, s.budget_ms, s.reps) == (
        30.0,
        False,
        10.0,
        500.0,
        7,
    )
    s.update({"agentCommand": [], "timeoutSeconds": "soon"})
    assert s.agent_command == ["ssh", "gpu", "python3"] and s.timeout_seconds == 30.0
    assert s.compile_timeout_seconds == 600.0
    s.update({"compileTimeoutSeconds": 900})
    s.update({"compileTimeoutSeconds": -1})
    assert s.compile_timeout_seconds == 900.0


def test_the_profile_memory_setting_reads_auto_on_off_and_the_old_booleans() -> None:
    settings = Settings()
    assert settings.profile_memory == "auto"  # on where it costs under 10%: CUDA runs
    for given, read in [(True, "on"), (False, "off"), ("auto", "auto"), ("on", "on")]:
        settings.update({"profileMemory": given})
        assert settings.profile_memory == read
    settings.update({"profileMemory": "yes"})  # invalid: kept as it was
    assert settings.profile_memory == "on"
