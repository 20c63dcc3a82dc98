"""A windowed Profile Script (skip/steps/after_s) is labelled as the window it profiled, not as
the script's one run (issue 41)."""

from kernel_lens.analysis.scripts import script_summary_title, window_text


def _result(window: dict | None) -> dict:
    script: dict = {"wall_s": 0.165}
    if window is not None:
        script["window"] = window
    return {"script": script, "lines": [], "device": "CPU", "device_kind": "cpu"}


def test_a_window_says_which_steps_it_profiled() -> None:
    window = {"skip": 2, "steps": 3, "after_s": None, "steps_seen": 5, "steps_profiled": 3}
    title = script_summary_title(_result(window))
    assert title.startswith("$(run-all) window: steps 3–5 of the run · 165")
    assert "one run" not in title
    assert window_text({**window, "steps_seen": 3, "steps_profiled": 1}) == (
        "window: step 3 of the run"
    )
    assert window_text({"after_s": 30.0, "steps_profiled": None}) == (
        "window: from 30 s into the run"
    )


def test_a_whole_run_is_still_the_scripts_one_run() -> None:
    assert "wall, one run" in script_summary_title(_result(None))
