import kernel_lens_not_installed_anywhere  # noqa: F401
