/* Fixture of lint.boundary.detects: four functions of a C API. */
LCI_API LCI_error_t LCI_guarded(int x) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_unguarded(int x) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_tail(int x) LCI_NOEXCEPT;
LCI_API size_t LCI_missing(void) LCI_NOEXCEPT;
