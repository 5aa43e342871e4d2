// This variant's entry in the table of CPU kernels (kernels.h).
#include "kernels.h"

namespace lltm::cpu::LLTM_ISA_NAMESPACE {

extern const Kernels kernels = {lltm_forward, lltm_backward, axpy, sgd_step, adam_step,
                                 lltm_sequence_forward, lltm_sequence_backward};

}  // namespace lltm::cpu::LLTM_ISA_NAMESPACE
