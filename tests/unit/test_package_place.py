"""Where a file sits as Python imports it (issue 44): the package walk that every view on a
kernel's or a function's file starts from (``usercode.package_place``), and the import error
that names a missing module."""

from __future__ import annotations

import sys
from pathlib import Path

from kernel_lens.agent.usercode import import_failure, package_place


def _touch(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_file_in_nested_packages_is_named_from_the_top_package(tmp_path: Path) -> None:
    _touch(tmp_path / "lib" / "__init__.py")
    _touch(tmp_path / "lib" / "ops" / "__init__.py")
    kernel = _touch(tmp_path / "lib" / "ops" / "norm.py")
    place = package_place(str(kernel))
    assert (place.root, place.package, place.name) == (str(tmp_path), "lib.ops", "lib.ops.norm")
    init = package_place(str(tmp_path / "lib" / "ops" / "__init__.py"))
    assert init.name == "lib.ops" and init.package == "lib.ops"


def test_a_src_layout_has_src_as_its_root(tmp_path: Path) -> None:
    _touch(tmp_path / "src" / "pkg" / "__init__.py")
    place = package_place(str(_touch(tmp_path / "src" / "pkg" / "k.py")))
    assert place.root == str(tmp_path / "src") and place.name == "pkg.k"


def test_a_file_in_no_package_or_under_a_folder_python_cannot_import(tmp_path: Path) -> None:
    plain = package_place(str(_touch(tmp_path / "script.py")))
    assert (plain.root, plain.package, plain.name) == (str(tmp_path), "", "script")
    # "my-lib" is no identifier: the walk stops below it (it cannot be a package name).
    _touch(tmp_path / "my-lib" / "__init__.py")
    _touch(tmp_path / "my-lib" / "core" / "__init__.py")
    place = package_place(str(_touch(tmp_path / "my-lib" / "core" / "k.py")))
    assert place.root == str(tmp_path / "my-lib") and place.name == "core.k"


def test_a_missing_module_is_an_import_error_naming_it_and_the_interpreter(tmp_path: Path) -> None:
    kernel = _touch(tmp_path / "k.py")
    try:
        import kernel_lens_no_such_module  # type: ignore[import-not-found]  # noqa: F401
    except ImportError as exc:
        err = import_failure(exc, str(kernel), "loading the file")
    assert err is not None and err.kind == "import"
    assert "kernel_lens_no_such_module" in err.message and sys.executable in err.message
    assert import_failure(ValueError("x"), str(kernel), "loading the file") is None
