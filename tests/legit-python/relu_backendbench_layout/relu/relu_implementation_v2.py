# Never loaded: relu_implementation_v1.py sorts first (BackendBench's DirectoryBackend rule).
raise RuntimeError("relu_implementation_v2.py must not be loaded")
