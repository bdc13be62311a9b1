/* empty: cffi knows the standard integer types */
