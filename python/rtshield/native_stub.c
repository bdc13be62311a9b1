/* The shared library the Python package loads links libshield and the
 * simulator in whole; CMake needs one source of its own to build it. */
typedef int rts_native_translation_unit_is_not_empty;
