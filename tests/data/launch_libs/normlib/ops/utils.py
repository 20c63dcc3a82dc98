import triton
import triton.language as tl

try:  # where libdevice lives moved between Triton versions
    from triton.language.extra.libdevice import rsqrt as _rsqrt
except ImportError:  # pragma: no cover - older triton
    from triton.language.extra.cuda.libdevice import rsqrt as _rsqrt

rsqrt = _rsqrt
#: A constexpr global the kernels read.
ROWS_PER_PROGRAM: tl.constexpr = tl.constexpr(1)


@triton.jit
def scale(x, factor):
    return x * factor


def rows_block(n_cols):
    return triton.next_power_of_2(n_cols)
