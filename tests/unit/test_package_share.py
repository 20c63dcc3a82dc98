"""The share of a line's time inside installed packages (issue 48), from the tracer's ranges:
``pkg:<name>`` ranges given to the innermost line range around them, on their own thread."""

from __future__ import annotations

from typing import Any

from kernel_lens.analysis.line_attribution import FILE_STRIDE
from kernel_lens.analysis.package_share import package_shares, suggestion


def _range(name: str, ts: float, dur: float, tid: int = 1) -> dict[str, Any]:
    return {"ph": "X", "cat": "user_annotation", "name": name, "ts": ts, "dur": dur,
            "pid": 1, "tid": tid}  # fmt: skip


def test_a_package_range_belongs_to_the_innermost_line_around_it() -> None:
    events = [
        _range("src:7", 0, 100),  # out = model(x): 100 µs
        _range("pkg:transformers", 2, 90),
        _range("pkg:accelerate", 10, 20),  # nested in transformers: counted for both
        _range("src:2:11", 150, 10),  # a line of the 2nd file
        _range("pkg:timm", 151, 5),
        _range("src:9", 200, 50),  # a line that never entered a package
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 3, "dur": 5, "pid": 1, "tid": 1},
    ]
    shares = package_shares(events)
    assert shares[7] == [
        {"package": "transformers", "cpu_us": 90.0, "share": 0.9},
        {"package": "accelerate", "cpu_us": 20.0, "share": 0.2},
    ]
    assert shares[2 * FILE_STRIDE + 11] == [{"package": "timm", "cpu_us": 5.0, "share": 0.5}]
    assert 9 not in shares


def test_a_loop_line_sums_its_passes_and_a_range_on_another_thread_is_not_its() -> None:
    events = [
        _range("src:5", 0, 10),
        _range("pkg:timm", 1, 8),
        _range("src:5", 20, 10),
        _range("pkg:timm", 21, 8),
        _range("pkg:timm", 1, 50, tid=2),  # another thread: no line around it
    ]
    assert package_shares(events) == {5: [{"package": "timm", "cpu_us": 16.0, "share": 0.8}]}


def test_one_preempted_call_does_not_hide_the_package() -> None:
    # Recorded on this 2-core machine beside the editor tests (e2e scenario 70 failed on it):
    # `out = model(x)` is ~90% inside tinymodel on each call; the third call was preempted for
    # 7 ms after the model returned, and the sum over the calls read 17% inside: no offer.
    events = [
        _range("src:8", 0, 2654.7),
        _range("pkg:tinymodel", 73.0, 2563.2),
        _range("src:8", 3593.5, 402.4),
        _range("pkg:tinymodel", 3628.3, 354.5),
        _range("src:8", 4925.1, 7467.2),  # preempted outside the package
        _range("pkg:tinymodel", 4959.9, 350.9),
    ]
    (row,) = package_shares(events)[8]
    assert row["package"] == "tinymodel" and row["cpu_us"] == 3268.6
    # outside: 91.5, 47.9, 7116.3 µs -> the median, 91.5, on each of the 3 calls
    assert row["share"] == round(3268.6 / (3268.6 + 3 * 91.5), 4)
    assert suggestion([row]) == row


def test_a_line_that_enters_the_package_on_some_calls_keeps_their_part() -> None:
    # A loop's line: nine cheap passes outside any package, one that runs the model.
    events = [_range("src:4", 100 * i, 10) for i in range(9)]
    events += [_range("src:4", 1000, 1000), _range("pkg:timm", 1005, 990)]
    assert package_shares(events) == {
        4: [{"package": "timm", "cpu_us": 990.0, "share": round(990 / (990 + 10 * 10), 4)}]
    }


def test_the_suggestion_is_the_first_package_with_half_the_line_not_yet_named() -> None:
    inside = [
        {"package": "transformers", "cpu_us": 90.0, "share": 0.9},
        {"package": "kernels", "cpu_us": 60.0, "share": 0.6},
    ]
    assert suggestion(inside) == inside[0]
    assert suggestion(inside, ["transformers"]) == inside[1]
    assert suggestion([{"package": "timm", "cpu_us": 1.0, "share": 0.3}]) is None
    assert suggestion(None) is None


def test_a_backward_pass_on_another_files_lines_says_so() -> None:
    from kernel_lens.analysis.lens_text import backward_pass_text

    line = {"backward_pass": {"device_us": 0.0, "cpu_us": 900.0, "lines": [], "other_files": 1}}
    text = backward_pass_text(line, cuda=False)
    assert text is not None and text.endswith("spread over another file's lines"), text
    line["backward_pass"].update(lines=[7], other_files=2)
    text = backward_pass_text(line, cuda=False)
    assert text is not None and text.endswith("spread over line 7 and other files' lines"), text
