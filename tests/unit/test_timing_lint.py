"""The timing lint on small sources: each rule found where the mistake is, and not where the
code is right (``analysis/timing_lint.py`` is pure: called directly, nothing runs)."""

from __future__ import annotations

import textwrap

from kernel_lens.analysis.timing_lint import TimingIssue, lint_timing

HEAD = "import time\nimport torch\n\n\ndef square(x):\n    return x * x\n\n\n"


def _lint(body: str, head: str = HEAD) -> list[TimingIssue]:
    return lint_timing(head + textwrap.dedent(body))


def _rules(body: str, head: str = HEAD) -> list[tuple[str, int]]:
    first = head.count("\n")
    return [(i.rule, i.line - first) for i in _lint(body, head)]


# no-sync ------------------------------------------------------------------------------------


def test_time_time_around_cuda_work_without_synchronize() -> None:
    issues = _lint(
        """
        x = torch.randn(10, device="cuda")
        square(x)
        t0 = time.time()
        y = square(x)
        t1 = time.time()
        print(t1 - t0)
        """
    )
    nosync = [i for i in issues if i.rule == "no-sync"]
    assert len(nosync) == 1
    assert nosync[0].line == HEAD.count("\n") + 6  # the second reading
    assert nosync[0].function == "square"
    assert "torch.cuda.synchronize()" in nosync[0].message


def test_from_time_import_perf_counter_is_a_clock_too() -> None:
    head = "from time import perf_counter as clock\nimport torch\n\n\ndef f(x):\n    return x\n\n\n"
    rules = _rules(
        """
        x = torch.ones(3).cuda()
        f(x)
        start = clock()
        f(x)
        print(clock() - start)
        """,
        head,
    )
    assert ("no-sync", 6) in rules


def test_synchronize_before_the_second_reading_is_right() -> None:
    rules = _rules(
        """
        x = torch.randn(10, device="cuda")
        square(x)
        t0 = time.perf_counter()
        y = square(x)
        torch.cuda.synchronize()
        t1 = time.perf_counter()
        print(t1 - t0)
        """
    )
    assert rules == []


def test_a_value_read_back_waits_for_the_gpu() -> None:
    rules = _rules(
        """
        x = torch.randn(10, device="cuda")
        square(x)
        t0 = time.perf_counter()
        total = square(x).sum().item()
        print(time.perf_counter() - t0)
        """
    )
    assert rules == []


def test_cpu_only_file_is_not_told_to_synchronize() -> None:
    rules = _rules(
        """
        x = torch.randn(10)
        square(x)
        t0 = time.perf_counter()
        square(x)
        print(time.perf_counter() - t0)
        """
    )
    assert [r for r, _ in rules if r == "no-sync"] == []


def test_two_unrelated_clock_readings_are_not_a_pair() -> None:
    # `stamp` is never subtracted from: not the start of a timed region.
    rules = _rules(
        """
        x = torch.randn(10, device="cuda")
        stamp = time.time()
        square(x)
        print("done at", time.time())
        """
    )
    assert rules == []


# elapsed-before-sync ------------------------------------------------------------------------


EVENTS = """
start = torch.cuda.Event(enable_timing=True)
end = torch.cuda.Event(enable_timing=True)
x = torch.randn(10, device="cuda")
square(x)
start.record()
square(x)
end.record()
{sync}
ms = start.elapsed_time(end)
"""


def test_elapsed_time_before_the_end_event_completes() -> None:
    issues = _lint(EVENTS.format(sync=""))
    assert [(i.rule, i.line - HEAD.count("\n")) for i in issues] == [("elapsed-before-sync", 10)]
    assert "end.synchronize()" in issues[0].message


def test_elapsed_time_after_end_synchronize_or_device_synchronize() -> None:
    assert _lint(EVENTS.format(sync="end.synchronize()")) == []
    assert _lint(EVENTS.format(sync="torch.cuda.synchronize()")) == []


def test_synchronizing_the_start_event_is_not_enough() -> None:
    rules = _rules(EVENTS.format(sync="start.synchronize()"))
    assert rules == [("elapsed-before-sync", 10)]


# no-warmup ----------------------------------------------------------------------------------


def test_single_timed_call_without_warm_up() -> None:
    issues = _lint(
        """
        x = torch.randn(10, device="cuda")
        t0 = time.perf_counter()
        square(x)
        torch.cuda.synchronize()
        print(time.perf_counter() - t0)
        """
    )
    assert [(i.rule, i.function) for i in issues] == [("no-warmup", "square")]
    assert issues[0].line == HEAD.count("\n") + 4
    assert "warm-up" in issues[0].message


def test_warm_up_before_or_repetitions_inside_are_right() -> None:
    warmed = """
        x = torch.randn(10, device="cuda")
        for _ in range(3):
            square(x)
        t0 = time.perf_counter()
        square(x)
        torch.cuda.synchronize()
        print(time.perf_counter() - t0)
        """
    repeated = """
        x = torch.randn(10, device="cuda")
        t0 = time.perf_counter()
        for _ in range(100):
            square(x)
        torch.cuda.synchronize()
        print(time.perf_counter() - t0)
        """
    assert _rules(warmed) == []
    assert _rules(repeated) == []


def test_the_timed_function_of_a_helper_is_named_from_its_call_site() -> None:
    issues = _lint(
        """
        def time_it(func, inp):
            start = time.perf_counter()
            func(inp)
            torch.cuda.synchronize()
            return time.perf_counter() - start


        time_it(square, torch.ones(3, device="cuda"))
        """
    )
    assert [(i.rule, i.function) for i in issues] == [("no-warmup", "square")]


# no-l2-flush --------------------------------------------------------------------------------


REPS = """
x = torch.randn(1 << 20, device="cuda")
square(x)
times = []
for _ in range(10):
    {flush}
    t0 = time.perf_counter()
    square({arg})
    torch.cuda.synchronize()
    times.append(time.perf_counter() - t0)
"""


def test_timed_repetitions_on_the_same_tensor_without_a_flush() -> None:
    issues = _lint(REPS.format(flush="pass", arg="x"))
    assert [(i.rule, i.line - HEAD.count("\n"), i.function) for i in issues] == [
        ("no-l2-flush", 8, "square")
    ]
    assert "L2" in issues[0].message


def test_a_flush_or_fresh_inputs_each_repetition_are_right() -> None:
    assert _rules(REPS.format(flush="cache.zero_()", arg="x")) == []
    assert _rules(REPS.format(flush="flush_l2()", arg="x")) == []
    assert _rules(REPS.format(flush="y = torch.randn_like(x)", arg="y")) == []


def test_cuda_event_repetitions_are_checked_too() -> None:
    rules = _rules(
        """
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        x = torch.randn(1 << 20, device="cuda")
        square(x)
        for _ in range(10):
            s.record()
            square(x)
            e.record()
            e.synchronize()
            print(s.elapsed_time(e))
        """
    )
    assert rules == [("no-l2-flush", 8)]


# the file as a whole ------------------------------------------------------------------------


def test_no_timing_code_and_syntax_errors_give_nothing() -> None:
    assert lint_timing(HEAD + "y = square(torch.ones(3))\n") == []
    assert lint_timing("def broken(:\n") == []


# the summary lens of an awaited / consumed function (issue 10 item 7) ----------------------


def test_summary_lens_says_awaited_or_consumed() -> None:
    from kernel_lens.analysis.lens_text import summary_lens_title

    base = {
        "timing": {"median_ms": 1.0, "spread_pct": 1.0, "warnings": []},
        "device": "CPU",
        "device_kind": "cpu",
        "lines": [],
    }
    assert summary_lens_title({**base, "call_style": "awaited"}).endswith("· CPU · awaited")
    assert summary_lens_title({**base, "call_style": "consumed"}).endswith("· CPU · consumed")
    assert summary_lens_title({**base, "call_style": "called"}).endswith("· CPU")


def test_a_plain_python_script_is_left_alone() -> None:
    source = textwrap.dedent(
        """
        import time


        def work():
            return sum(range(10))


        t0 = time.time()
        work()
        print(time.time() - t0)
        """
    )
    assert lint_timing(source) == []
