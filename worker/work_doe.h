// SPDX-License-Identifier: MIT
// The worker side of drop-out expansion books (kind = doe): a unit is a leaf, sent in the
// WORK as its position; every legal move's child is scored by a fixed-depth search from a
// cleared engine (games/bookgen's verification: the score depends on the position alone, so
// any rank gives the same), and the children go back as one BOOK message, one candidate per
// move in move generation order.
#pragma once

#include "worker.h"

/// The worker kind of DOE jobs; its plan is a BookgenConfig (the scoring search) that rank 0's
/// DOE kind reads too.
extern const WorkerKindDef work_doe_def;
