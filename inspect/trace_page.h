/// @file
/// The step-through page of BackwardTrace::to_html: inspect/trace_page.html,
/// made one string at build time (CMakeLists.txt writes its definition). Its
/// markers <!--graph-->, <!--summary--> and /*trace*/ are where the SVG, the
/// summary line and the trace's JSON go.
#pragma once

namespace ember::inspect::detail {

extern const char* const kTracePage;

}  // namespace ember::inspect::detail
