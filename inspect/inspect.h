/// @file
/// The instruments that watch ember work (library ember::inspect):
///   BackwardTrace   the backward pass node by node, with a step-through page
///                   and gradient provenance (inspect/trace.h)
///   Profiler        every op's time, work and share of the machine's peaks
///                   (inspect/profiler.h)
///   MemoryTimeline  live tensor memory by kind over time (inspect/memory.h)
/// Each starts watching when made and stops when destroyed; any of them can
/// run together. examples/inside_a_step runs all three over one training step.
#pragma once

#include "inspect/hub.h"
#include "inspect/memory.h"
#include "inspect/profiler.h"
#include "inspect/trace.h"
