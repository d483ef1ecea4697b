"""Runs the Python module's tests with pytest, or exits 77 (ctest's skip) naming what is missing."""
import sys

try:
    import pytest
except ImportError:
    print("SKIP: pytest is not installed for this Python (Debian: apt-get install python3-pytest)")
    sys.exit(77)
try:
    import numpy  # noqa: F401
except ImportError:
    print("SKIP: numpy is not installed for this Python (Debian: apt-get install python3-numpy)")
    sys.exit(77)
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", *sys.argv[1:]]))
