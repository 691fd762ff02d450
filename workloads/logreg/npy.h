/* npy: writes arrays in NumPy's .npy format (version 1.0), so a peer (scikit-learn, PyTorch) can
 * train on exactly the data a workload generated. Written to a temporary file and renamed: no
 * partial file is ever left. */
#ifndef MLBENCH_WL_NPY_H
#define MLBENCH_WL_NPY_H

#include <stddef.h>

/* dtype: "<f4" (float), "<f8" (double), "<i4" (int32), "<i8" (int64). shape: ndim sizes
 * (ndim 1 or 2, C order). 0, or -1 with a message in err. */
int npy_write(const char *path, const char *dtype, const void *data, int ndim,
              const size_t *shape, char *err, size_t errlen);

#endif
