// BackwardTrace::to_html: the trace as one self-contained page. The graph is
// drawn by Graphviz (`dot -Tsvg`, Debian graphviz) with one SVG group per
// node (id "s<step>") and per leaf ("l<k>"); the trace itself is embedded as
// JSON; a few lines of JavaScript move a highlight through the steps and
// fill the panel. The page, its style and its script are
// inspect/trace_page.html, built into the library as detail::kTracePage
// (CMakeLists.txt); this file fills in its three markers. No network, no
// external files: it opens from file://.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>
#include <utility>

#include "base/io.h"
#include "inspect/trace.h"
#include "inspect/trace_page.h"

namespace ember::inspect {

namespace {

using json = nlohmann::ordered_json;

// DOT string escaping: quotes and backslashes.
std::string dot_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// The page's graph: nodes by step, leaves by first appearance, edges as sent.
std::string graph_dot(const std::vector<TraceStep>& steps, const std::map<const void*, std::string>& ids,
                      const std::map<const void*, std::string>& leaf_names) {
  std::ostringstream dot;
  dot << "digraph backward {\n  rankdir=TB;\n  bgcolor=\"transparent\";\n"
         "  node [fontname=\"Helvetica\", fontsize=11, style=filled];\n  edge [color=\"#888888\"];\n";
  for (const TraceStep& s : steps) {
    std::string label = "step " + std::to_string(s.step) + "\\n" + s.name;
    if (!s.label.empty()) label += "\\n" + dot_escape(s.label);
    dot << "  s" << s.step << " [id=\"s" << s.step << "\", shape=box, fillcolor=\"#dfe8f5\", label=\"" << label
        << "\"];\n";
  }
  for (const auto& [leaf, id] : ids) {
    if (id[0] != 'l') continue;
    dot << "  " << id << " [id=\"" << id << "\", shape=ellipse, fillcolor=\"#f5e6c8\", label=\""
        << dot_escape(leaf_names.at(leaf)) << "\"];\n";
  }
  for (const TraceStep& s : steps)
    for (const TraceEdge& e : s.sent) {
      auto it = ids.find(e.target);
      if (it == ids.end()) continue;
      dot << "  s" << s.step << " -> " << it->second << " [id=\"e" << s.step << "_" << e.input << "\"];\n";
    }
  dot << "}\n";
  return dot.str();
}

// Runs Graphviz: DOT in, SVG text out (through two temporary files).
std::string render_svg(const std::string& dot) {
  namespace fs = std::filesystem;
  const std::string base = (fs::temp_directory_path() / ("ember_trace_" + std::to_string(::getpid()))).string();
  const std::string dot_path = base + ".dot", svg_path = base + ".svg";
  {
    std::ofstream f(dot_path);
    f << dot;
    EMBER_CHECK(f.good(), "to_html", "cannot write " << dot_path);
  }
  const std::string cmd = "dot -Tsvg '" + dot_path + "' -o '" + svg_path + "' 2>/dev/null";
  const int status = std::system(cmd.c_str());
  std::ifstream in(svg_path);
  std::stringstream svg;
  svg << in.rdbuf();
  fs::remove(dot_path);
  fs::remove(svg_path);
  EMBER_CHECK(status == 0 && !svg.str().empty(), "to_html",
              "Graphviz's dot could not draw the graph (is the graphviz package installed?)");
  // Keep only the <svg> element: drop the XML prolog and DOCTYPE.
  std::string s = svg.str();
  const size_t at = s.find("<svg");
  return at == std::string::npos ? s : s.substr(at);
}

// Fills the page's markers, each once, in the order they appear.
std::string fill_page(std::string_view page, const std::vector<std::pair<std::string_view, std::string>>& parts) {
  std::string out;
  for (const auto& [marker, text] : parts) {
    const size_t at = page.find(marker);
    EMBER_CHECK(at != std::string_view::npos, "to_html", "the page template has no " << marker);
    out.append(page.substr(0, at)).append(text);
    page.remove_prefix(at + marker.size());
  }
  return out.append(page);
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

}  // namespace

void BackwardTrace::to_html(const std::string& path) const {
  EMBER_CHECK(!steps_.empty(), "to_html", "the trace is empty: run a backward() while the trace exists");
  // Ids: "s<step>" for nodes, "l<k>" for leaves.
  std::map<const void*, std::string> ids, leaf_names;
  auto id = [](char kind, int64_t k) { return std::string(1, kind).append(std::to_string(k)); };
  for (const TraceStep& s : steps_) ids[s.node] = id('s', s.step);
  int leaf_count = 0;
  for (const TraceStep& s : steps_)
    for (const TraceEdge& e : s.sent)
      if (e.to_leaf && !ids.count(e.target)) {
        ids[e.target] = id('l', leaf_count++);
        leaf_names[e.target] = e.target_name;
      }
  json data;
  data["steps"] = json::array();
  for (const TraceStep& s : steps_) {
    json step = {{"step", s.step},     {"name", s.name},   {"label", s.label},
                 {"grad_in", s.grad_in.text()}, {"ms", s.ms}, {"error", s.error},
                 {"forward", s.forward ? s.forward->text() : std::string()}};
    step["saved"] = json::array();
    for (const SavedUse& u : s.saved)
      step["saved"].push_back(u.name + ": " + dtype_name(u.dtype) + " " + shape_text(u.shape) + ", version " +
                              std::to_string(u.version_saved));
    step["sent"] = json::array();
    for (const TraceEdge& e : s.sent) {
      auto it = ids.find(e.target);
      step["sent"].push_back({{"input", e.input},
                              {"to", (e.to_leaf ? "leaf " : "") + e.target_name},
                              {"to_id", it == ids.end() ? "" : it->second},
                              {"grad", e.grad.text()}});
    }
    data["steps"].push_back(step);
  }
  data["leaves"] = json::array();
  for (const LeafGrad& l : leaves_) {
    auto it = ids.find(l.leaf);
    data["leaves"].push_back(
        {{"id", it == ids.end() ? "" : it->second}, {"name", l.name}, {"grad", l.total.text()}, {"after_step", l.after_step}});
  }
  const std::string svg = render_svg(graph_dot(steps_, ids, leaf_names));
  // "</" inside the JSON would end the <script> element early.
  std::string trace_json = data.dump();
  for (size_t at = 0; (at = trace_json.find("</", at)) != std::string::npos; at += 3) trace_json.replace(at, 2, "<\\/");

  const std::string summary = std::to_string(steps_.size()) + " nodes" + (complete_ ? "" : ", backward failed");
  const std::string text = fill_page(
      detail::kTracePage, {{"<!--graph-->", svg}, {"<!--summary-->", html_escape(summary)}, {"/*trace*/", trace_json}});
  write_file_atomically(path, {text}, "to_html");
}

}  // namespace ember::inspect
