"""Source ↔ assembly line maps, on PTX recorded on an H200 and on small hand-written IR."""

from pathlib import Path

from kernel_lens.analysis.asm_map import (
    llir_line_map,
    mlir_line_map,
    parse_ptxas_info,
    ptx_line_map,
    sass_line_map,
)

DATA = Path(__file__).parent.parent / "data" / "h200"
KERNEL_FILE = "/tmp/torchinductor_root/da/cda7omvjf4zbkx5b5hl444km2zx56drujdwamg3og2xg7phpwkym.py"


def test_h200_ptx_maps_loads_stores_and_inlined_helpers() -> None:
    ptx = (DATA / "inductor_poi_kernel.ptx").read_text()
    lines = ptx.splitlines()
    mapping = ptx_line_map(ptx, KERNEL_FILE).source_to_asm
    assert sorted(mapping) == [18, 20, 21, 24, 26, 28, 29]
    # Line 24 loads the input; line 29 stores the result.
    assert any("ld.global" in lines[i - 1] for i in mapping[24])
    ops29 = [lines[i - 1].strip().split()[0] for i in mapping[29]]
    assert ops29 == ["st.global.v4.b32", "st.global.v4.b32", "ret;"]
    # relu comes from triton_helpers.py (file 2), inlined at the kernel's line 26.
    assert any("setp.lt.f32" in lines[i - 1] for i in mapping[26])
    # No directive or label is mapped.
    for asm_lines in mapping.values():
        for i in asm_lines:
            assert not lines[i - 1].strip().startswith((".loc", "$L__", "//"))


def test_other_file_gives_no_lines() -> None:
    ptx = (DATA / "inductor_poi_kernel.ptx").read_text()
    assert ptx_line_map(ptx, "/somewhere/else.py").to_json() == []


MLIR = """module {
  tt.func public @k(%a: !tt.ptr<f32> loc("a"(#loc))) {
    %pid = tt.get_program_id x : i32 loc(#loc5)
    %x = tt.load %p : tensor<4x!tt.ptr<f32>> loc(#loc6)
    %y = math.exp %x : tensor<4xf32> loc(#loc7)
    tt.return loc(#loc8)
  } loc(#loc)
} loc(#loc)
#loc = loc("/w/k.py":3:0)
#loc2 = loc("/w/k.py":4:24)
#loc3 = loc("/w/k.py":5:20)
#loc4 = loc("/lib/standard.py":40:11)
#loc5 = loc("pid"(#loc2))
#loc6 = loc("x"(#loc3))
#loc7 = loc(callsite(#loc4 at #loc3))
#loc8 = loc(unknown)
"""


def test_mlir_resolves_named_and_callsite_locations() -> None:
    assert mlir_line_map(MLIR, "/w/k.py").to_json() == [
        {"source_line": 4, "asm_lines": [3]},
        {"source_line": 5, "asm_lines": [4, 5]},
    ]


LLIR = """define void @k(ptr %0) !dbg !4 {
  %2 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x(), !dbg !7
  %3 = load float, ptr %0, align 4, !dbg !8
  ret void, !dbg !9
}
!1 = !DIFile(filename: "k.py", directory: "/w")
!4 = distinct !DISubprogram(name: "k", scope: !1, file: !1, line: 3)
!7 = !DILocation(line: 4, column: 24, scope: !4)
!8 = !DILocation(line: 5, column: 20, scope: !4)
!9 = !DILocation(line: 6, column: 4, scope: !4)
"""


def test_llir_uses_dilocations() -> None:
    assert llir_line_map(LLIR, "/w/k.py").source_to_asm == {4: [2], 5: [3], 6: [4]}


SASS = """square_kernel:
\t//## File "/w/k.py", line 22
        /*0000*/                   LDC R1, c[0x0][0x28] ;
\t//## File "/w/k.py", line 26
        /*0010*/                   LDG.E R0, desc[UR4][R2.64] ;
        /*0020*/                   FMUL R0, R0, R0 ;
"""


def test_sass_uses_nvdisasm_line_comments() -> None:
    assert sass_line_map(SASS, "/w/k.py").source_to_asm == {22: [3], 26: [5, 6]}


def test_ptxas_verbose_output() -> None:
    text = (
        "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
        "ptxas info    : Function properties for k\n"
        "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
        "ptxas info    : Used 40 registers, used 1 barriers, 1024 bytes smem\n"
    )
    assert parse_ptxas_info(text) == {
        "registers": 40,
        "spill_stores": 4,
        "spill_loads": 4,
        "stack_bytes": 8,
        "shared_bytes": 1024,
    }
