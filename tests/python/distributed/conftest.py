"""Multi-process tests: real processes over loopback (ctest entry distributed_tests)."""
