from typing import Tuple

import numpy

def dependency_preorder(heads: numpy.ndarray) -> Tuple[numpy.ndarray, numpy.ndarray]: ...
