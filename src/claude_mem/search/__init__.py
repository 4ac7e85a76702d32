"""Finding past work: full text, local embeddings and their fusion.

Heavy modules (numpy, onnxruntime) load only when embeddings are used; importing this package
costs nothing but one environment default: OpenBLAS gets one thread. A vector scan is a
matrix-vector product that is memory-bound, and on a 2-core machine a second BLAS thread only
competes with the full-text half of the same search and the ONNX query embedding running
beside it (compare `OPENBLAS_NUM_THREADS=2 bench/search_bench.py` with the default). It
must be set before numpy loads, and every numpy user in this project is under this package or
imports it first.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
