// SPDX-License-Identifier: Apache-2.0
#include "client.hpp"

namespace relock::python {

void bind_synchronizers(py::module_& m) { (void)m; }

}  // namespace relock::python
