// BackwardTrace::to_html: the trace as one self-contained page. The graph is
// drawn by Graphviz (`dot -Tsvg`, Debian graphviz) with one SVG group per
// node (id "s<step>") and per leaf ("l<k>"); the trace itself is embedded as
// JSON; a few lines of JavaScript move a highlight through the steps and
// fill the panel. No network, no external files: it opens from file://.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "inspect/trace.h"
#include "tensor/io.h"

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

const char* kStyle = R"(
body { font-family: Helvetica, Arial, sans-serif; margin: 0; display: flex; height: 100vh; color: #222; }
#graph { flex: 3; overflow: auto; border-right: 1px solid #ccc; padding: 8px; }
#graph svg { display: block; height: auto; }
#note { background: #fff3cd; border: 1px solid #e0c060; padding: 4px 8px; margin-bottom: 8px; }
#note:empty { display: none; }
.legend span.swatch { display: inline-block; width: 12px; height: 12px; border: 1px solid #999; margin: 0 4px 0 10px; vertical-align: -1px; }
.legend span.swatch.round { border-radius: 6px; }
#side { flex: 2; overflow: auto; padding: 12px 16px; font-size: 14px; }
#controls button { font-size: 14px; margin-right: 6px; padding: 4px 10px; }
#controls { margin-bottom: 10px; }
h1 { font-size: 18px; margin: 4px 0 8px; }
h2 { font-size: 16px; margin: 12px 0 6px; }
.mono { font-family: Menlo, Consolas, monospace; font-size: 12px; white-space: pre-wrap; }
li { margin-bottom: 4px; }
.error { color: #b00; font-weight: bold; }
g.node.done polygon, g.node.done ellipse { fill: #e8e8e8; }
g.node.active polygon { fill: #ffd54f; stroke: #e65100; stroke-width: 3px; }
g.node.receiving polygon, g.node.receiving ellipse { fill: #ffe0b2; }
g.node.filled ellipse { fill: #c5e1a5; }
g.edge.active path { stroke: #e65100; stroke-width: 2.5px; }
g.edge.active polygon { fill: #e65100; stroke: #e65100; }
)";

// Reads the trace (JSON), highlights step k, fills the panel. ?step=N opens at N.
const char* kScript = R"(
const steps = TRACE.steps, leaves = TRACE.leaves;
let current = 0, timer = null;
function el(id) { return document.getElementById(id); }
function text(id, t) { el(id).textContent = t; }
function show(k) {
  k = Math.max(0, Math.min(steps.length - 1, k));
  current = k;
  const s = steps[k];
  document.querySelectorAll('g.node, g.edge').forEach(g => g.classList.remove('active', 'done', 'receiving', 'filled'));
  for (let j = 0; j < k; ++j) { const g = el('s' + steps[j].step); if (g) g.classList.add('done'); }
  const g = el('s' + s.step);
  if (g) { g.classList.add('active'); g.scrollIntoView({block: 'center', inline: 'center'}); }
  s.sent.forEach(e => {
    const edge = el('e' + s.step + '_' + e.input); if (edge) edge.classList.add('active');
    const to = el(e.to_id); if (to) to.classList.add('receiving');
  });
  leaves.forEach(l => { if (l.after_step <= k + 1 && k === steps.length - 1) { const n = el(l.id); if (n) n.classList.add('filled'); } });
  document.body.dataset.step = k;
  document.body.dataset.activeNode = s.name;
  text('step-title', 'Step ' + s.step + ' of ' + (steps.length - 1) + ': ' + s.name);
  text('label', s.label ? 'recorded at ' + s.label : 'recorded outside a traced forward');
  text('grad-in', s.grad_in);
  text('forward', s.forward ? 'its output in the forward pass: ' + s.forward : '');
  text('time', s.ms.toFixed(3) + ' ms');
  el('saved').innerHTML = '';
  s.saved.forEach(t => { const li = document.createElement('li'); li.className = 'mono'; li.textContent = t; el('saved').appendChild(li); });
  if (!s.saved.length) el('saved').innerHTML = '<li>nothing</li>';
  el('sent').innerHTML = '';
  s.sent.forEach(e => {
    const li = document.createElement('li');
    li.className = 'mono';
    li.dataset.to = e.to;
    li.textContent = 'input ' + e.input + ' -> ' + e.to + ': ' + e.grad;
    el('sent').appendChild(li);
  });
  if (!s.sent.length) el('sent').innerHTML = '<li>nothing (no input needs a gradient)</li>';
  text('error', s.error ? 'backward failed here: ' + s.error : '');
  el('leaves').innerHTML = '';
  if (k < steps.length - 1) {
    // A leaf's parts are summed first: .grad changes once, after the last node.
    const li = document.createElement('li');
    li.textContent = leaves.length + ' leaves receive their .grad after the last step (go to step ' + (steps.length - 1) + ')';
    el('leaves').appendChild(li);
  } else {
    leaves.forEach(l => {
      const li = document.createElement('li');
      li.className = 'mono';
      li.textContent = l.name + ' .grad += ' + l.grad;
      el('leaves').appendChild(li);
    });
  }
}
// Zoom: "fit" scales the graph to its pane's width; + and - from there.
const svg = document.querySelector('#graph svg');
const natural_width = svg.viewBox.baseVal.width * 4 / 3;  // Graphviz sizes in points: 1 pt = 4/3 px
let scale = null;  // null: fit
function zoom(how) {
  const pane = el('graph').clientWidth - 16;
  const now = scale === null ? pane / natural_width : scale;
  scale = how === 'fit' ? null : Math.max(0.1, Math.min(4, now * (how === 'in' ? 1.25 : 0.8)));
  const width = scale === null ? Math.min(pane, natural_width) : natural_width * scale;
  svg.setAttribute('width', width + 'px');
  svg.removeAttribute('height');
  document.body.dataset.zoom = scale === null ? 'fit' : scale.toFixed(2);
  const g = el('s' + steps[current].step);
  if (g) g.scrollIntoView({block: 'center', inline: 'center'});
}
function play() {
  if (timer) { clearInterval(timer); timer = null; text('play', 'Play'); return; }
  text('play', 'Pause');
  timer = setInterval(() => { if (current >= steps.length - 1) { play(); return; } show(current + 1); }, 900);
}
el('prev').onclick = () => { text('note', ''); show(current - 1); };
el('next').onclick = () => { text('note', ''); show(current + 1); };
el('play').onclick = play;
el('fit').onclick = () => zoom('fit');
el('zoom-in').onclick = () => zoom('in');
el('zoom-out').onclick = () => zoom('out');
document.addEventListener('keydown', e => {
  if (e.key === 'ArrowRight') { text('note', ''); show(current + 1); }
  if (e.key === 'ArrowLeft') { text('note', ''); show(current - 1); }
  if (e.key === ' ') { e.preventDefault(); play(); }
  if (e.key === '+' || e.key === '=') zoom('in');
  if (e.key === '-') zoom('out');
  if (e.key === '0') zoom('fit');
});
const asked = parseInt(new URLSearchParams(location.search).get('step'));
const last = steps.length - 1;
if (!isNaN(asked) && (asked < 0 || asked > last))
  text('note', '?step=' + asked + ' is outside this trace (steps 0 to ' + last + '): showing step ' + (asked < 0 ? 0 : last) + '.');
zoom('fit');
show(isNaN(asked) ? 0 : asked);
)";

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

  std::ostringstream page;
  page << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>ember backward trace</title>\n<style>"
       << kStyle << "</style></head>\n<body>\n<div id=\"graph\">" << svg << "</div>\n<div id=\"side\">\n"
       << "<h1>Backward pass, step by step</h1>\n"
       << "<div id=\"controls\"><button id=\"prev\">&larr; Prev</button><button id=\"next\">Next &rarr;</button>"
       << "<button id=\"play\">Play</button> <small>(arrow keys, space)</small> "
       << "<button id=\"fit\">Fit</button><button id=\"zoom-out\">&minus;</button><button id=\"zoom-in\">+</button>"
       << " <small>(0, &minus;, +)</small></div>\n<div id=\"note\"></div>\n"
       << "<h2 id=\"step-title\"></h2>\n<div id=\"label\"></div><div>time in the node: <span id=\"time\"></span></div>\n"
       << "<div class=\"error\" id=\"error\"></div>\n"
       << "<h2>Gradient that arrived for its output</h2>\n<div class=\"mono\" id=\"grad-in\"></div>\n"
       << "<div class=\"mono\" id=\"forward\"></div>\n"
       << "<h2>Saved tensors its rule read</h2>\n<ul id=\"saved\"></ul>\n"
       << "<h2>What it sent to each input</h2>\n<ul id=\"sent\"></ul>\n"
       << "<h2>Leaves</h2>\n<ul id=\"leaves\"></ul>\n"
       << "<p><small>" << html_escape(std::to_string(steps_.size()) + " nodes" + (complete_ ? "" : ", backward failed"))
       << ".</small></p>\n<p class=\"legend\"><small>"
       << "<span class=\"swatch\" style=\"background:#dfe8f5\"></span>a node not run yet"
       << "<span class=\"swatch\" style=\"background:#ffd54f\"></span>the node running at this step"
       << "<span class=\"swatch\" style=\"background:#ffe0b2\"></span>what receives its gradients"
       << "<span class=\"swatch\" style=\"background:#e8e8e8\"></span>already run<br>"
       << "<span class=\"swatch round\" style=\"background:#f5e6c8\"></span>a leaf"
       << "<span class=\"swatch round\" style=\"background:#c5e1a5\"></span>a leaf whose .grad is written: "
          "they turn green at the last step, because the engine adds up each leaf's parts once the whole graph "
          "has run</small></p>\n"
       << "</div>\n<script>\nconst TRACE = " << trace_json << ";\n" << kScript << "</script>\n</body></html>\n";
  const std::string text = page.str();
  write_file_atomically(path, {text}, "to_html");
}

}  // namespace ember::inspect
