"""The timing lint at its edges (found by mutation testing, docs/testing.md): every kind of
statement a timed region can sit in, how the file's imports decide what is GPU work and what is
a clock, each rule's boundaries, the exact findings (span, message, function, order)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from kernel_lens.analysis.timing_lint import TimingIssue, lint_timing

HEAD = "import time\nimport torch\n\n\ndef square(x):\n    return x * x\n\n\n"
FIRST = HEAD.count("\n")  # lines of HEAD: a body's line n is FIRST + n


def _lint(body: str, head: str = HEAD) -> list[TimingIssue]:
    source = head + textwrap.dedent(body)
    ast.parse(source)  # a source that does not parse has no finding: none here is meant to
    return lint_timing(source)


def _found(body: str, head: str = HEAD) -> list[tuple[str, int, str | None]]:
    """(rule, line in the body, function) of each finding, in the lint's order."""
    first = head.count("\n")
    return [(i.rule, i.line - first, i.function) for i in _lint(body, head)]


# The exact findings -----------------------------------------------------------------------

NO_SYNC = (
    "`time.perf_counter()` is read while the GPU may still be running the work above: kernels "
    "launch asynchronously, so this times the launches, not the kernels. Call "
    "`torch.cuda.synchronize()` before reading the clock (or use CUDA events)."
)
NO_WARMUP = (
    "a single timed call of `square` with no warm-up: the first call pays for compilation "
    "(Triton, torch.compile), autotuning, memory allocation and library set-up. Call it a few "
    "times before timing, and time many calls."
)
ELAPSED = (
    "`elapsed_time` is read before `end` has completed: the event is only recorded in the "
    "stream's queue. Call `end.synchronize()` (or `torch.cuda.synchronize()`) first."
)
L2 = (
    "each repetition times `square` on the same tensor (`x`) with no L2 flush in between: from "
    "the second repetition on its data is served from the L2 cache (tens of MB), so small "
    "kernels look faster than on cold data. Write a large buffer (for example `cache.zero_()` "
    "of 256 MB) before each timed call."
)


def test_findings_exactly_spans_messages_functions_and_order() -> None:
    issues = _lint(
        """
        x = torch.randn(10, device="cuda")
        t0 = time.perf_counter()
        y = square(
            x)
        t1 = time.perf_counter()
        print(t1 - t0)
        """
    )
    # no-sync is found first but sorts after no-warmup, which is on an earlier line; a call over
    # two lines keeps its end.
    assert issues == [
        TimingIssue("no-warmup", FIRST + 4, 4, FIRST + 5, 6, NO_WARMUP, "square"),
        TimingIssue("no-sync", FIRST + 6, 5, FIRST + 6, 24, NO_SYNC, "square"),
    ]


def test_elapsed_and_l2_messages_exactly() -> None:
    issues = _lint(
        """
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        x = torch.randn(1 << 20, device="cuda")
        square(x)
        for _ in range(10):
            start.record()
            square(x)
            end.record()
            print(start.elapsed_time(end))
        """
    )
    assert issues == [
        TimingIssue("no-l2-flush", FIRST + 8, 4, FIRST + 8, 13, L2, "square"),
        TimingIssue("elapsed-before-sync", FIRST + 10, 10, FIRST + 10, 33, ELAPSED, None),
    ]


# Every kind of statement ----------------------------------------------------------------------

REGION = """\
t0 = time.perf_counter()
square(x)
torch.cuda.synchronize()
print(time.perf_counter() - t0)
"""


def _in_range_loop(wrapper: str) -> str:
    """``wrapper`` (with ``{region}`` placeholders at its indentation) inside a range loop."""
    lines = ["x = torch.randn(1 << 20, device='cuda')", "square(x)", "for _ in range(10):"]
    for line in textwrap.dedent(wrapper).splitlines():
        indent = line[: len(line) - len(line.lstrip())]
        if line.strip() == "{region}":
            lines += ["    " + indent + r for r in REGION.splitlines()]
        else:
            lines.append("    " + line)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "wrapper, regions",
    [
        ("if len(x):\n    {region}\nelse:\n    {region}\n", 2),
        ("with torch.no_grad():\n    {region}\n", 1),
        (
            "try:\n    {region}\nexcept ValueError:\n    {region}\nelse:\n    {region}\n"
            "finally:\n    {region}\n",
            4,
        ),
        ("for y in [len(x)]:\n    len(y)\nelse:\n    {region}\n", 1),
        ("while len(x) < 0:\n    len(x)\nelse:\n    {region}\n", 1),
    ],
    ids=["if-else", "with", "try-except-else-finally", "for-else", "while-else"],
)
def test_a_timed_region_in_any_statement_of_a_range_loop(wrapper: str, regions: int) -> None:
    # Each region times `square(x)` on the same tensor at each repetition: one no-l2-flush each,
    # whatever statement (and its test, its context manager) holds it.
    source = _in_range_loop(wrapper)
    issues = lint_timing(HEAD + source)
    lines = source.splitlines()
    timed = [n + 1 for n, text in enumerate(lines) if text.strip() == "square(x)"][1:]
    assert len(timed) == regions
    assert [(i.rule, i.line - FIRST, i.function) for i in issues] == [
        ("no-l2-flush", n, "square") for n in timed
    ]


def test_a_region_in_a_while_loop_is_repetitions_but_not_a_range_loop() -> None:
    found = _found(
        """
        x = torch.randn(10, device="cuda")
        n = 0
        while n < 10:
            t0 = time.perf_counter()
            square(x)
            torch.cuda.synchronize()
            print(time.perf_counter() - t0)
            n = n + 1
        """
    )
    # Not a single call (no no-warmup), and a while loop is not checked for a flush.
    assert found == []


def test_a_region_that_ends_in_a_while_test_is_not_a_repetition_of_the_range_loop() -> None:
    # A busy wait: the second reading is in the while test, inside the range loop.
    found = _found(
        """
        x = torch.randn(10, device="cuda")
        square(x)
        for _ in range(10):
            t0 = time.perf_counter()
            square(x)
            while time.perf_counter() - t0 < 0.001:
                pass
        """
    )
    assert found == [("no-sync", 7, "square")]


# Imports: what is GPU work, what reads a clock ----------------------------------------------


def test_timeit_default_timer_is_a_clock() -> None:
    for head in (
        "import timeit\n" + HEAD[len("import time\n") :],
        "from timeit import default_timer\n" + HEAD[len("import time\n") :],
    ):
        clock = "timeit.default_timer" if head.startswith("import") else "default_timer"
        issues = _lint(
            f"""
            x = torch.randn(10, device="cuda")
            square(x)
            t0 = {clock}()
            square(x)
            print({clock}() - t0)
            """,
            head,
        )
        assert [(i.rule, i.line - 8) for i in issues] == [("no-sync", 6)]
        assert issues[0].message.startswith(f"`{clock}()` is read")


def test_other_functions_of_time_are_not_clocks() -> None:
    # `time.sleep` and `from time import sleep` are no readings: the region runs to the second
    # perf_counter.
    for head, sleep in (
        (HEAD, "time.sleep"),
        ("from time import perf_counter, sleep\n" + HEAD[len("import time\n") :], "sleep"),
    ):
        clock = "time.perf_counter" if sleep == "time.sleep" else "perf_counter"
        found = _found(
            f"""
            x = torch.randn(10, device="cuda")
            square(x)
            t0 = {clock}()
            {sleep}(0.1)
            square(x)
            print({clock}() - t0)
            """,
            head.replace("import time\n", "import time\n" if sleep == "time.sleep" else ""),
        )
        assert found == [("no-sync", 7, "square")]


TRITON = """
x = make_input()
kernel[(1,)](x)
t0 = time.perf_counter()
kernel[(1,)](x)
print(time.perf_counter() - t0)
"""


@pytest.mark.parametrize("imports", ["import triton", "import triton.language as tl"])
def test_a_triton_file_is_gpu_code_without_the_word_cuda(imports: str) -> None:
    found = _found(TRITON, f"import time\n{imports}\n\n\n")
    assert found == [("no-sync", 6, None)]


@pytest.mark.parametrize("imports", ["from triton import jit", "from triton.language import x"])
def test_from_triton_imports_make_gpu_code_too(imports: str) -> None:
    found = _found(TRITON, f"import time\n{imports}\n\n\n")
    assert found == [("no-sync", 6, None)]


@pytest.mark.parametrize(
    "imports, found",
    [
        # torch without the word cuda: a CPU file; its single timed call still wants a warm-up.
        ("from torch import nn", [("no-warmup", 4, "work")]),
        ("from torch.utils import benchmark", [("no-warmup", 4, "work")]),
        ("import torch.nn", [("no-warmup", 4, "work")]),
        ("from triton import jit", [("no-warmup", 4, "work"), ("no-sync", 5, "work")]),
        ("import triton", [("no-warmup", 4, "work"), ("no-sync", 5, "work")]),
        # A relative import of a module named torch (or triton) is the user's own package.
        ("from .torch import nn", []),
        ("from .triton import jit", []),
        ("import numpy", []),
    ],
)
def test_which_imports_make_a_torch_or_triton_file(
    imports: str, found: list[tuple[str, int, str]]
) -> None:
    head = f"import time\n{imports}\n\n\ndef work(x):\n    return x\n\n\n"
    body = """
        x = 3
        t0 = time.perf_counter()
        work(x)
        print(time.perf_counter() - t0)
        """
    assert _found(body, head) == found


# no-sync's boundaries ---------------------------------------------------------------------


def test_a_region_with_no_work_and_work_right_before_it() -> None:
    # Timing a print (no GPU work) after an untimed call: nothing to say.
    found = _found(
        """
        x = torch.randn(10, device="cuda")
        square(x)
        t0 = time.perf_counter()
        print("timing", len(x))
        print(time.perf_counter() - t0)
        """
    )
    assert found == []


def test_a_synchronize_before_the_work_does_not_cover_it() -> None:
    found = _found(
        """
        x = torch.randn(10, device="cuda")
        square(x)
        t0 = time.perf_counter()
        torch.cuda.synchronize()
        square(x)
        print(time.perf_counter() - t0)
        """
    )
    assert found == [("no-sync", 7, "square")]


def test_a_later_region_is_checked_after_an_empty_or_a_right_one() -> None:
    found = _found(
        """
        x = torch.randn(10, device="cuda")
        square(x)
        t0 = time.perf_counter()
        print("nothing timed")
        print(time.perf_counter() - t0)
        t0 = time.perf_counter()
        square(x)
        torch.cuda.synchronize()
        print(time.perf_counter() - t0)
        t0 = time.perf_counter()
        square(x)
        print(time.perf_counter() - t0)
        """
    )
    assert found == [("no-sync", 13, "square")]


def test_a_clock_read_for_a_log_first_then_a_region() -> None:
    found = _found(
        """
        x = torch.randn(10, device="cuda")
        square(x)
        print("started at", time.time())
        t0 = time.perf_counter()
        square(x)
        print(time.perf_counter() - t0)
        """
    )
    assert found == [("no-sync", 7, "square")]


def test_two_adjacent_readings_are_a_region_of_their_own() -> None:
    # The clock's own overhead: t0 → t1 times nothing; the later reading is no region's end.
    found = _found(
        """
        x = torch.randn(10, device="cuda")
        t0 = time.perf_counter()
        t1 = time.perf_counter()
        overhead = t1 - t0
        square(x)
        t2 = time.perf_counter()
        """
    )
    assert found == []


def test_a_start_never_followed_by_a_reading() -> None:
    found = _found(
        """
        x = torch.randn(10, device="cuda")
        square(x)
        t0 = time.perf_counter()
        square(x)
        torch.cuda.synchronize()
        print(time.perf_counter() - t0)
        t0 = time.perf_counter()
        """
    )
    assert found == []


def test_an_annotated_start() -> None:
    found = _found(
        """
        x = torch.randn(10, device="cuda")
        square(x)
        t0: float = time.perf_counter()
        square(x)
        print(time.perf_counter() - t0)
        """
    )
    assert found == [("no-sync", 6, "square")]


def test_a_value_read_back_at_the_end_of_a_statement_over_two_lines() -> None:
    # The calls of one statement in the order they run: `.item()` ends last, on the second line,
    # at a column left of where the `square` calls end on the first.
    found = _found(
        """
        x = torch.randn(10, device="cuda")
        square(x)
        t0 = time.perf_counter()
        total = torch.stack([square(x), square(x)],
                            dim=0).sum().item()
        print(time.perf_counter() - t0)
        """
    )
    assert found == []


# elapsed-before-sync's boundaries ---------------------------------------------------------


def test_events_held_in_attributes() -> None:
    issues = _lint(
        """
        class Timer:
            def run(self, x):
                self.start.record()
                square(x)
                self.end.record()
                return self.start.elapsed_time(self.end)
        """
    )
    assert [(i.rule, i.line - FIRST) for i in issues] == [
        ("no-warmup", 5),
        ("elapsed-before-sync", 7),
    ]
    assert "Call `self.end.synchronize()`" in issues[1].message


def test_a_synchronize_before_the_end_is_recorded_is_not_enough() -> None:
    found = _found(
        """
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        x = torch.randn(10, device="cuda")
        square(x)
        start.record()
        square(x)
        torch.cuda.synchronize()
        end.record()
        print(start.elapsed_time(end))
        """
    )
    assert found == [("elapsed-before-sync", 10, None)]


def test_an_event_passed_to_a_call_is_not_read() -> None:
    # `ends.append(end)` takes the event as an argument: no elapsed time read there.
    found = _found(
        """
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        ends = []
        x = torch.randn(10, device="cuda")
        square(x)
        start.record()
        square(x)
        end.record()
        ends.append(end)
        torch.cuda.synchronize()
        print(start.elapsed_time(end))
        """
    )
    assert found == []


def test_unknown_events_then_a_region_without_warm_up_or_sync() -> None:
    found = _found(
        """
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        x = torch.randn(10, device="cuda")
        print(a.elapsed_time(b))
        start.record()
        square(x)
        end.record()
        print(start.elapsed_time(end))
        """
    )
    assert found == [("no-warmup", 7, "square"), ("elapsed-before-sync", 9, None)]


def test_the_first_event_of_a_function_is_a_start() -> None:
    found = _found(
        """
        def bench(start, end, x):
            start.record()
            square(x)
            end.record()
            end.synchronize()
            return start.elapsed_time(end)
        """
    )
    assert found == [("no-warmup", 4, "square")]


def test_elapsed_read_before_the_end_is_recorded_is_not_this_rule() -> None:
    found = _found(
        """
        def bench(start, end, x):
            square(x)
            start.record()
            square(x)
            ms = start.elapsed_time(end)
            end.record()
        """
    )
    assert found == []


def test_elapsed_time_without_arguments_half_typed() -> None:
    found = _found(
        """
        def bench(start, end, x):
            start.record()
            square(x)
            end.record()
            return start.elapsed_time()
        """
    )
    assert found == []


# no-warmup's boundaries -------------------------------------------------------------------


def test_no_warmup_is_checked_past_repetitions_empty_and_warmed_regions() -> None:
    found = _found(
        """
        x = torch.randn(10, device="cuda")
        for _ in range(3):
            t0 = time.perf_counter()
            torch.cuda.synchronize()
            print(time.perf_counter() - t0)
        t0 = time.perf_counter()
        print("nothing")
        print(time.perf_counter() - t0)
        square(x)
        t0 = time.perf_counter()
        square(x)
        torch.cuda.synchronize()
        print(time.perf_counter() - t0)
        t0 = time.perf_counter()
        x.relu()
        torch.cuda.synchronize()
        print(time.perf_counter() - t0)
        """
    )
    assert found == [("no-warmup", 16, None)]
    # The same method call alone, on a CPU tensor: no warm-up is still said (not no-sync).
    cpu = "x = torch.ones(3)\nt0 = time.time()\nx.relu()\nprint(time.time() - t0)\n"
    assert _found(cpu) == [("no-warmup", 3, None)]


def test_the_timed_call_is_the_first_work_not_a_builtin_or_a_flush() -> None:
    issues = _lint(
        """
        def flush_l2():
            pass


        x = torch.randn(10, device="cuda")
        t0 = time.perf_counter()
        flush_l2()
        n = len(x)
        (x + 1).relu()
        square(x)
        torch.cuda.synchronize()
        print(time.perf_counter() - t0)
        """
    )
    assert [(i.rule, i.line - FIRST, i.function) for i in issues] == [("no-warmup", 10, "square")]
    assert issues[0].message.startswith("a single timed call of `(x + 1).relu` with no")


def test_a_model_object_is_not_a_function_of_the_file() -> None:
    found = _found(
        """
        model = torch.nn.Linear(3, 3)
        x = torch.randn(3)
        t0 = time.perf_counter()
        model(x)
        print(time.perf_counter() - t0)
        """
    )
    assert found == [("no-warmup", 5, None)]


# The function a helper times ----------------------------------------------------------------

HELPER = """
def time_it(fn, x):
    start = time.perf_counter()
    fn(x)
    torch.cuda.synchronize()
    return time.perf_counter() - start


model = torch.nn.Linear(3, 3).cuda()
"""


@pytest.mark.parametrize(
    "calls, function",
    [
        ("time_it(fn=square, x=torch.ones(3))", "square"),
        ("time_it(x=torch.ones(3), fn=square)", "square"),
        ("time_it(model, torch.ones(3))\ntime_it(square, torch.ones(3))", "square"),
        ("time_it(model, torch.ones(3))", None),
    ],
)
def test_the_helpers_function_by_keyword_or_position(calls: str, function: str | None) -> None:
    found = _found(HELPER + calls + "\n")
    assert found == [("no-warmup", 4, function)]


# no-l2-flush's boundaries -----------------------------------------------------------------


def test_l2_is_checked_past_regions_outside_loops_in_while_loops_and_flushed_loops() -> None:
    found = _found(
        """
        x = torch.randn(1 << 20, device="cuda")
        square(x)
        t0 = time.perf_counter()
        square(x)
        torch.cuda.synchronize()
        print(time.perf_counter() - t0)
        n = 0
        while n < 3:
            t0 = time.perf_counter()
            square(x)
            torch.cuda.synchronize()
            print(time.perf_counter() - t0)
            n = n + 1
        for _ in range(10):
            cache.zero_()
            t0 = time.perf_counter()
            square(x)
            torch.cuda.synchronize()
            print(time.perf_counter() - t0)
        for _ in range(10):
            t0 = time.perf_counter()
            len(x)
            torch.cuda.synchronize()
            make_inputs()
            square(x)
            torch.cuda.synchronize()
            print(time.perf_counter() - t0)
        """
    )
    assert found == [("no-l2-flush", 26, "square")]


def test_the_inner_of_two_range_loops_is_the_repetition() -> None:
    found = _found(
        """
        x = torch.randn(1 << 20, device="cuda")
        square(x)
        for size in range(3):
            for _ in range(10):
                t0 = time.perf_counter()
                square(x)
                torch.cuda.synchronize()
                print(time.perf_counter() - t0)
        """
    )
    assert found == [("no-l2-flush", 7, "square")]


@pytest.mark.parametrize("loop", ["for batch in batches:", "for batch in load(batches):"])
def test_a_loop_over_other_inputs_is_not_checked_for_l2(loop: str) -> None:
    found = _found(
        f"""
        x = torch.randn(1 << 20, device="cuda")
        square(x)
        {loop}
            t0 = time.perf_counter()
            square(x)
            torch.cuda.synchronize()
            print(time.perf_counter() - t0)
        """
    )
    assert found == []


@pytest.mark.parametrize(
    "rebind",
    [
        "pass",  # rebinds nothing: the same tensor
        "x += 1",
        "x: object = make(x)",
        "for x in pool:\n                pass",
        "print(x := make(x))",
    ],
)
def test_a_tensor_the_loop_rebinds_is_fresh_each_repetition(rebind: str) -> None:
    found = _found(
        f"""
        x = torch.randn(1 << 20, device="cuda")
        square(x)
        for i in range(10):
            {rebind}
            t0 = time.perf_counter()
            square(x)
            square(i)
            torch.cuda.synchronize()
            print(time.perf_counter() - t0)
        """
    )
    assert found == ([("no-l2-flush", 7, "square")] if rebind == "pass" else [])
