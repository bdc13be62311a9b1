"""Build step: the cffi module of rtshield's native library, parsed once.

    python3 python/build_ffi.py CDEF_H OUT_PY

``CDEF_H`` is ``rtshield_cdef.h`` (the public headers run through the
preprocessor, as CMakeLists.txt makes it). ``OUT_PY`` becomes
``_rtshield_ffi.py``: cffi's out-of-line ABI module, the declarations
already parsed, so no process pays pycparser's parse of the headers at
start-up (``rtshield._native.load``). It records the SHA-256 of the
declarations it was made from; ``load`` uses it only while they match.
"""

import hashlib
import sys
from pathlib import Path


def main(cdef_path: str, out_path: str) -> int:
    try:
        import cffi
    except ImportError as e:
        print(f"build_ffi: cffi is needed to build rtshield ({e})", file=sys.stderr)
        return 1
    text = Path(cdef_path).read_text()
    ffi = cffi.FFI()
    ffi.cdef(text)
    ffi.set_source("_rtshield_ffi", None)
    out = Path(out_path)
    tmp = out.with_suffix(".tmp")
    ffi.emit_python_code(str(tmp))
    digest = hashlib.sha256(text.encode()).hexdigest()
    with tmp.open("a") as f:
        f.write("\n# SHA-256 of the rtshield_cdef.h this module was made from\n")
        f.write(f"CDEF_SHA256 = {digest!r}\n")
    tmp.replace(out)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
