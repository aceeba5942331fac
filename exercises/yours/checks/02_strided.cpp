// Checks stage 2 (docs/book/build_your_own/02_strided.md): mini::Tensor
// against ember's tensors (tensor/views.cpp). The layout of a new tensor,
// position() on views made by hand, each view alone, then random chains of
// views applied to both side by side, on random shapes with dims of size 1
// and 0: after every view the shapes, the strides, the offsets (both count in
// elements) and every element must agree, and a view must share its storage.
//
// Every number is exact here (positions are integers, elements are copied,
// never computed), so the comparisons are exact. Two things are compared
// only where they mean something: the stride of a dim of size 1 (it is never
// multiplied by anything but 0) and, in a tensor with no elements, the
// strides and the offset (nothing is ever read through them).
#include "exercises/yours/checks/yours.h"
#include "mini/tensor.h"

namespace {

using check::fail;
using check::show;

// ---- layouts ----

struct Layout {
  ember::Shape shape, strides;
  int64_t offset = 0;
};

int64_t count(const ember::Shape& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

// The checker's own row-major index of element k.
ember::Shape index_of(int64_t k, const ember::Shape& shape) {
  ember::Shape index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = k % shape[d];
    k /= shape[d];
  }
  return index;
}

Layout layout(const mini::Tensor& t) { return {t.shape(), t.strides(), t.offset()}; }
Layout layout(const ember::Tensor& t) { return {t.shape(), t.stride(), t.storage_offset()}; }

// The strides that matter: those of dims of size > 1, in a tensor with elements.
bool same_strides(const Layout& got, const Layout& want) {
  if (got.strides.size() != want.shape.size()) return false;
  if (count(want.shape) == 0) return true;
  for (size_t d = 0; d < want.shape.size(); ++d)
    if (want.shape[d] > 1 && got.strides[d] != want.strides[d]) return false;
  return true;
}

// Whether `got` is the layout `want` (shape, strides that matter, and, with
// elements, the offset relative to each one's input).
bool same_layout(const Layout& got, int64_t got_base, const Layout& want, int64_t want_base) {
  return got.shape == want.shape && same_strides(got, want) &&
         (count(want.shape) == 0 || got.offset - got_base == want.offset - want_base);
}

// {1, 2}, as the index is written in a call; [1, 2], as an element is named.
std::string braces(const ember::Shape& s) { return "{" + show(s).substr(1, show(s).size() - 2) + "}"; }
std::string brackets(const ember::Shape& s) { return "[" + show(s).substr(1, show(s).size() - 2) + "]"; }

std::string describe(const Layout& l) {
  return "shape " + show(l.shape) + ", strides " + show(l.strides) + ", offset " + std::to_string(l.offset);
}

// ---- the first steps: numbers of a shape, a new tensor, position() ----

ember::Shape random_shape(ember::Generator& gen, int max_dims = 4) {
  const int64_t sizes[] = {0, 1, 1, 1, 2, 2, 3, 3, 4, 4, 2, 3, 4, 2, 3, 4, 2, 3, 1, 2};
  ember::Shape s(gen.next_below(static_cast<uint64_t>(max_dims) + 1));
  for (int64_t& v : s) v = sizes[gen.next_below(20)];
  return s;
}

std::string strides_hint(const ember::Shape& shape, const ember::Shape& got) {
  ember::Shape column(shape.size()), bytes(shape.size()), own(shape.size());
  int64_t step = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    column[d] = step;
    step *= shape[d];
  }
  step = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    bytes[d] = 8 * step;
    step *= shape[d];
    own[d] = step;
  }
  const Layout g{shape, got, 0};
  if (same_strides(g, {shape, column, 0}))
    return "these are column-major strides (the first dim steps by 1): mini is row-major, the last dim steps by 1 "
           "and each dim before it by the number of elements after it";
  if (same_strides(g, {shape, bytes, 0})) return "these strides count bytes (8 a double): mini's count elements";
  if (same_strides(g, {shape, own, 0}))
    return "each stride counts its own dim's size too: one step along a dim skips the elements after it, not "
           "those of the dim itself";
  return "one step along the last dim moves to the next element; along the dim before it, past a whole row";
}

void shape_numbers() {
  ember::Generator gen(1);
  for (int trial = 0; trial < 200; ++trial) {
    const ember::Shape shape = random_shape(gen);
    const ember::Tensor t = ember::zeros(shape, ember::kFloat64);
    check::expect(mini::numel(shape) == t.numel(), "numel(" + show(shape) + ") is " +
                                                       std::to_string(mini::numel(shape)) + ", but should be " +
                                                       std::to_string(t.numel()),
                  shape.empty() ? "the shape () is a single number: 1 element" : "the product of the sizes");
    const ember::Shape got = mini::contiguous_strides(shape);
    if (!same_strides({shape, got, 0}, layout(t)))
      fail("contiguous_strides(" + show(shape) + ") is " + show(got) + ", but should be " + show(t.stride()),
           strides_hint(shape, got));
    for (int64_t k = 0; k < t.numel(); ++k) {
      const ember::Shape want = index_of(k, shape), index = mini::unravel(k, shape);
      if (index == want) continue;
      ember::Shape reversed(shape.rbegin(), shape.rend());
      ember::Shape first_fastest = index_of(k, reversed);
      std::reverse(first_fastest.begin(), first_fastest.end());
      fail("unravel(" + std::to_string(k) + ", " + show(shape) + ") is " + show(index) + ", but should be " + show(want),
           index == first_fastest ? "this counts with the first dim fastest: in row-major order the last dim counts "
                                    "fastest, like the digits of a number"
                                  : "count k = 0, 1, 2, ... through the indices as through the digits of a number "
                                    "whose digit d runs over shape[d]");
    }
  }
}

void new_tensor() {
  ember::Generator gen(2);
  for (int trial = 0; trial < 100; ++trial) {
    const ember::Shape shape = random_shape(gen);
    std::vector<double> values(static_cast<size_t>(count(shape)));
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
    const mini::Tensor x(values, shape);
    const ember::Tensor e = ember::tensor(values, shape);
    const std::string what = "a new tensor of shape " + show(shape);
    check::expect(x.shape() == shape, what + " has shape " + show(x.shape()));
    check::expect(x.storage() && static_cast<int64_t>(x.storage()->size()) == count(shape),
                  what + " has a storage of " + std::to_string(x.storage() ? x.storage()->size() : 0) +
                      " elements, not " + std::to_string(count(shape)));
    if (!same_strides(layout(x), layout(e)))
      fail(what + " has strides " + show(x.strides()) + ", but should have " + show(e.stride()),
           strides_hint(shape, x.strides()));
    check::expect(x.offset() == 0, what + " has offset " + std::to_string(x.offset()) + ", not 0",
                  "a new tensor starts at the start of its own storage");
    for (int64_t k = 0; k < count(shape); ++k) {
      const ember::Shape index = index_of(k, shape);
      const int64_t p = x.position(index);
      check::expect(p == k, what + ": position(" + braces(index) + ") is " + std::to_string(p) + ", but should be " +
                                std::to_string(k),
                    "the position is the offset plus, for each dim, the index times the stride");
      check::expect(x.at(index) == static_cast<double>(k), what + ": at(" + braces(index) + ") is " +
                                                             check::num(x.at(index)) + ", not " + std::to_string(k),
                    "at() reads the storage at position(index)");
    }
  }
}

// position() and at() on layouts made by hand (with the view constructor):
// any strides, 0 among them, and an offset, checked against ember's as_strided.
void position_by_hand() {
  ember::Generator gen(3);
  for (int trial = 0; trial < 200; ++trial) {
    const ember::Shape shape = random_shape(gen);
    ember::Shape strides(shape.size());
    for (int64_t& s : strides) s = static_cast<int64_t>(gen.next_below(7));
    const int64_t offset = static_cast<int64_t>(gen.next_below(6));
    int64_t last = offset;
    for (size_t d = 0; d < shape.size(); ++d) last += std::max<int64_t>(shape[d] - 1, 0) * strides[d];
    std::vector<double> storage(static_cast<size_t>(last + 1));
    for (size_t i = 0; i < storage.size(); ++i) storage[i] = static_cast<double>(i);
    const ember::Tensor base = ember::tensor(storage, {static_cast<int64_t>(storage.size())});
    const ember::Tensor e = ember::kernel::as_strided(base, shape, strides, offset, "as_strided");
    const std::vector<double> want = e.contiguous().to_vector<double>();
    const mini::Tensor x(std::make_shared<std::vector<double>>(storage), shape, strides, offset);
    // The learner's positions, and those of the typical mistakes, for every element.
    const ember::Shape cs = ember::zeros(shape).stride();
    bool forgets_offset = true, contiguous_strides = true, neither = true;
    int64_t wrong = -1;
    for (int64_t k = 0; k < count(shape); ++k) {
      const ember::Shape index = index_of(k, shape);
      const int64_t p = x.position(index);
      int64_t contiguous = 0, plain = 0;
      for (size_t d = 0; d < shape.size(); ++d) {
        contiguous += index[d] * cs[d];
        plain += index[d] * strides[d];
      }
      forgets_offset = forgets_offset && p == plain;
      contiguous_strides = contiguous_strides && p == offset + contiguous;
      neither = neither && p == contiguous;
      if (wrong < 0 && p != static_cast<int64_t>(want[static_cast<size_t>(k)])) wrong = k;
    }
    if (wrong < 0) continue;
    std::string hint = "the position is the offset plus, for each dim, the index times that dim's stride";
    if (neither) hint = "position() uses neither the view's strides nor its offset, only its shape";
    if (contiguous_strides)
      hint = "position() uses the strides of a contiguous tensor of this shape; a view's own strides say how far each "
             "index moves";
    if (forgets_offset) hint = "position() forgets the offset: element [0, 0, ...] of a view lives at its offset";
    const ember::Shape index = index_of(wrong, shape);
    fail("a tensor of " + describe({shape, strides, offset}) + ": position(" + braces(index) + ") is " +
             std::to_string(x.position(index)) + ", but should be " + check::num(want[static_cast<size_t>(wrong)]),
         hint);
  }
}

// ---- the views ----

enum class Kind { Transpose, Permute, Slice, Expand, View, Contiguous };

struct ViewOp {
  Kind kind;
  ember::Shape args;  // transpose: d0, d1; slice: d, start, stop, step; the others: a shape or dims

  std::string text() const {
    const std::string list = show(args).substr(1, show(args).size() - 2);
    switch (kind) {
      case Kind::Transpose: return "transpose(" + list + ")";
      case Kind::Permute: return "permute(" + braces(args) + ")";
      case Kind::Slice: return "slice(" + list + ")";
      case Kind::Expand: return "expand(" + braces(args) + ")";
      case Kind::View: return "view(" + braces(args) + ")";
      case Kind::Contiguous: return "contiguous()";
    }
    return "";
  }
  mini::Tensor apply(const mini::Tensor& t) const {
    switch (kind) {
      case Kind::Transpose: return t.transpose(args[0], args[1]);
      case Kind::Permute: return t.permute(args);
      case Kind::Slice: return t.slice(args[0], args[1], args[2], args[3]);
      case Kind::Expand: return t.expand(args);
      case Kind::View: return t.view(args);
      case Kind::Contiguous: return t.contiguous();
    }
    return t;
  }
  ember::Tensor apply(const ember::Tensor& t) const {
    switch (kind) {
      case Kind::Transpose: return t.transpose(args[0], args[1]);
      case Kind::Permute: return t.permute(args);
      case Kind::Slice: return t.slice(args[0], args[1], args[2], args[3]);
      case Kind::Expand: return t.expand(args);
      case Kind::View: return t.view(args);
      case Kind::Contiguous: return t.contiguous();
    }
    return t;
  }
};

// The typical wrong layouts of `op` on a tensor laid out as `in`, and what
// each mistake is; the hint names the one `got` is.
std::string view_hint(const ViewOp& op, const Layout& in, const Layout& got, const Layout& want) {
  std::vector<std::pair<Layout, std::string>> wrong;
  const ember::Shape& a = op.args;
  switch (op.kind) {
    case Kind::Transpose: {
      Layout sizes_only = in, strides_only = in;
      std::swap(sizes_only.shape[a[0]], sizes_only.shape[a[1]]);
      std::swap(strides_only.strides[a[0]], strides_only.strides[a[1]]);
      wrong.push_back({sizes_only, "transpose swapped the sizes but not the strides: a step along the new dim "
                                   + std::to_string(a[0]) + " moves as a step along the old dim " + std::to_string(a[1])});
      wrong.push_back({strides_only, "transpose swapped the strides but not the sizes"});
      break;
    }
    case Kind::Permute: {
      Layout inverse = in, sizes_only = in;
      for (size_t i = 0; i < a.size(); ++i) {
        inverse.shape[a[i]] = in.shape[i];
        inverse.strides[a[i]] = in.strides[i];
        sizes_only.shape[i] = in.shape[a[i]];
      }
      wrong.push_back({inverse, "permute put dim i of the tensor at place dims[i]; it is the other way round: dim i of "
                                "the result is dim dims[i] of the tensor"});
      wrong.push_back({sizes_only, "permute moved the sizes but not the strides"});
      break;
    }
    case Kind::Slice: {
      const size_t d = static_cast<size_t>(a[0]);
      Layout unmoved = want, no_step = want, floor = want, no_count = want;
      unmoved.offset = in.offset;
      no_step.strides[d] = in.strides[d];
      floor.shape[d] = (a[2] - a[1]) / a[3];
      no_count.shape[d] = a[2] - a[1];
      wrong.push_back({unmoved, "slice did not move the offset: the view's first element is the one at position "
                                "start along the sliced dim"});
      wrong.push_back({no_step, "the step is missing from the sliced dim's stride: one step of the view moves "
                                "`step` steps of the tensor"});
      wrong.push_back({floor, "start, start + step, ... below stop: that is (stop - start) / step rounded up, not down"});
      wrong.push_back({no_count, "the slice's size counts every position from start to stop, ignoring the step"});
      break;
    }
    case Kind::Expand: {
      Layout kept = want;
      const size_t lead = a.size() - in.shape.size();
      for (size_t d = 0; d < a.size(); ++d) kept.strides[d] = d < lead ? 1 : in.strides[d - lead];
      wrong.push_back({kept, "an expanded dim (a size 1 made larger, or a new leading dim) must have stride 0: every "
                             "index along it reads the same element"});
      break;
    }
    case Kind::View: {
      Layout old_strides = want, no_offset = want;
      old_strides.strides = in.strides;
      no_offset.offset = 0;
      wrong.push_back({old_strides, "view kept the tensor's strides: the new shape needs its own, those of a "
                                    "contiguous tensor of that shape"});
      wrong.push_back({no_offset, "view dropped the offset: a view of a tensor that starts further in its storage "
                                  "starts there too"});
      break;
    }
    case Kind::Contiguous: break;
  }
  for (const auto& [layout, mistake] : wrong)
    if (same_layout(got, in.offset, layout, in.offset)) return mistake;
  if (got.shape != want.shape) return "which size does each dim of the result have? mini/tensor.h says, beside " + op.text();
  return "work the view out by hand on this tensor: which storage position must element [0, 0, ...] read, and how "
         "far must one step along each dim move?";
}

// Compares mini's y = op(x) with ember's ey = op(ex), where x and ex agree.
// `chain` says how x was made.
void compare_view(const ViewOp& op, const mini::Tensor& x, const mini::Tensor& y, const ember::Tensor& ex,
                  const ember::Tensor& ey, const std::string& chain) {
  const Layout in = layout(x), got = layout(y), want = layout(ey);
  const std::string where = "\n  x: " + describe(in) + "\n  x came from: " + chain;
  const std::string what = "x." + op.text();
  const bool copies = op.kind == Kind::Contiguous;
  if (got.shape != want.shape)
    fail(what + " has shape " + show(got.shape) + ", but should have " + show(want.shape) + where,
         view_hint(op, in, got, want));
  if (!same_strides(got, copies ? Layout{want.shape, ember::zeros(want.shape).stride(), 0} : want))
    fail(what + " has strides " + show(got.strides) + ", but should have " + show(want.strides) + where,
         copies ? "contiguous() gives a contiguous tensor: the strides of a new tensor of its shape"
                : view_hint(op, in, got, want));
  if (!copies && count(want.shape) > 0 && got.offset - in.offset != want.offset - ex.storage_offset())
    fail(what + " has offset " + std::to_string(got.offset) + ", but should have " +
             std::to_string(in.offset + want.offset - ex.storage_offset()) + where,
         view_hint(op, in, got, want));
  if (!copies)
    check::expect(y.storage() == x.storage(), what + " has a storage of its own; a view shares x's" + where,
                  op.text().substr(0, op.text().find('(')) +
                      " copied: a view is a new (shape, strides, offset) on the same storage, the same shared_ptr");
  const std::vector<double> want_values = ey.contiguous().to_vector<double>();
  const int64_t size = static_cast<int64_t>(y.storage() ? y.storage()->size() : 0);
  for (int64_t k = 0; k < count(want.shape); ++k) {
    const ember::Shape index = index_of(k, want.shape);
    const int64_t p = y.position(index);
    if (p < 0 || p >= size)
      fail(what + ": position(" + braces(index) + ") is " + std::to_string(p) + ", outside its storage of " +
               std::to_string(size) + " elements" + where);
    if (y.at(index) == want_values[static_cast<size_t>(k)]) continue;
    std::string hint = "the layout is right, the element is not: does at() read the storage at position(index)?";
    if (copies) {
      const std::vector<double>& storage = *x.storage();
      bool as_lying = true;
      for (int64_t j = 0; j < count(want.shape) && as_lying; ++j) {
        const size_t from = static_cast<size_t>(in.offset + j);
        as_lying = from < storage.size() && y.at(index_of(j, want.shape)) == storage[from];
      }
      hint = as_lying ? "contiguous() copied the storage as it lies; it must copy the elements in the row-major "
                        "order of their index"
                      : "contiguous() copies element [i, j, ...] of x to element [i, j, ...] of the copy";
    }
    fail(what + ": element " + brackets(index) + " is " + check::num(y.at(index)) + ", but should be " +
             check::num(want_values[static_cast<size_t>(k)]) + where,
         hint);
  }
}

// ---- random views ----

// A random shape of n elements: n's prime factors spread over 1-4 dims, with
// dims of size 1 between them (n = 0: a 0 among sizes 0-3).
ember::Shape shape_of(int64_t n, ember::Generator& gen) {
  ember::Shape s(1 + gen.next_below(3), 1);
  if (n == 0) {
    for (int64_t& v : s) v = static_cast<int64_t>(gen.next_below(4));
    s[gen.next_below(s.size())] = 0;
    return s;
  }
  for (int64_t p = 2; n > 1; ++p)
    while (n % p == 0) {
      s[gen.next_below(s.size())] *= p;
      n /= p;
    }
  if (gen.next_below(3) == 0) s.insert(s.begin() + static_cast<int64_t>(gen.next_below(s.size() + 1)), 1);
  if (s.size() == 1 && s[0] == 1 && gen.next_below(2) == 0) s.clear();  // the shape ()
  return s;
}

ViewOp random_view(const ember::Tensor& t, ember::Generator& gen) {
  const int64_t dims = t.dim();
  for (;;) {
    const Kind kind = static_cast<Kind>(gen.next_below(6));
    if (dims == 0 && (kind == Kind::Transpose || kind == Kind::Slice)) continue;
    switch (kind) {
      case Kind::Transpose:
        return {kind, {static_cast<int64_t>(gen.next_below(static_cast<uint64_t>(dims))),
                       static_cast<int64_t>(gen.next_below(static_cast<uint64_t>(dims)))}};
      case Kind::Permute: {
        ember::Shape p(static_cast<size_t>(dims));
        for (int64_t i = 0; i < dims; ++i) p[static_cast<size_t>(i)] = i;
        for (size_t i = p.size(); i > 1; --i) std::swap(p[i - 1], p[gen.next_below(i)]);
        return {kind, p};
      }
      case Kind::Slice: {
        const int64_t d = static_cast<int64_t>(gen.next_below(static_cast<uint64_t>(dims)));
        const int64_t n = t.size(d);
        const int64_t start = static_cast<int64_t>(gen.next_below(static_cast<uint64_t>(n) + 1));
        const int64_t stop = start + static_cast<int64_t>(gen.next_below(static_cast<uint64_t>(n - start) + 1));
        return {kind, {d, start, stop, 1 + static_cast<int64_t>(gen.next_below(3))}};
      }
      case Kind::Expand: {
        ember::Shape target = t.shape();
        for (int64_t& v : target)
          if (v == 1) v = static_cast<int64_t>(gen.next_below(4));
        if (dims < 5 && gen.next_below(3) == 0) target.insert(target.begin(), 1 + static_cast<int64_t>(gen.next_below(3)));
        return {kind, target};
      }
      case Kind::View: return {kind, shape_of(t.numel(), gen)};
      case Kind::Contiguous: return {kind, {}};
    }
  }
}

std::string is_contiguous_hint(const mini::Tensor& x) {
  if (x.numel() == 0) return "a tensor with no elements is contiguous: there is nothing out of order";
  for (size_t d = 0; d < x.shape().size(); ++d)
    if (x.shape()[d] == 1) return "a dim of size 1 never steps, so its stride does not matter";
  return "contiguous: element k of the row-major order lies at offset + k, for every k";
}

// A chain of views from a new tensor (its elements 0, 1, 2, ...: an element
// says which storage position it came from), applied to both. Counts the
// views compared and the refusals seen.
void random_chain(uint64_t seed, int& views, int& refused) {
  ember::Generator gen(100 + seed);
  const ember::Shape shape = random_shape(gen);
  std::vector<double> values(static_cast<size_t>(count(shape)));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  mini::Tensor x(values, shape);
  ember::Tensor ex = ember::tensor(values, shape);
  std::string chain = "seed " + std::to_string(seed) + ", a new tensor of shape " + show(shape) + " holding 0, 1, 2, ...";
  const int steps = 1 + static_cast<int>(gen.next_below(6));
  for (int s = 0; s < steps; ++s) {
    ViewOp op = random_view(ex, gen);
    if (op.kind == Kind::View && !ex.is_contiguous()) {
      // mini refuses it (ember may not: its view is more lenient); then contiguous() first.
      yours::expect_refusal([&] { op.apply(x); }, {"view"}, "x." + op.text() + ", x not contiguous",
                            "view must refuse a tensor that is not contiguous: its elements are not in row-major "
                            "order in the storage, so no strides of the new shape would reach them",
                            "\n  x: " + describe(layout(x)) + "\n  x came from: " + chain);
      ++refused;
      const ViewOp first{Kind::Contiguous, {}};
      const mini::Tensor y = first.apply(x);
      const ember::Tensor ey = first.apply(ex);
      compare_view(first, x, y, ex, ey, chain);
      x = y;
      ex = ey;
      chain += ", then " + first.text();
    }
    const mini::Tensor y = op.apply(x);
    const ember::Tensor ey = op.apply(ex);
    compare_view(op, x, y, ex, ey, chain);
    ++views;
    x = y;
    ex = ey;
    chain += ", then " + op.text();
    if (x.is_contiguous() != ex.is_contiguous())
      fail("x.is_contiguous() is " + std::string(x.is_contiguous() ? "true" : "false") + " for a tensor of " +
               describe(layout(x)) + ", but should be " + (ex.is_contiguous() ? "true" : "false") +
               "\n  x came from: " + chain,
           is_contiguous_hint(x));
  }
}

void each_view() {
  ember::Generator gen(4);
  const Kind kinds[] = {Kind::Transpose, Kind::Permute, Kind::Slice, Kind::Expand, Kind::View, Kind::Contiguous};
  for (Kind kind : kinds)
    for (int trial = 0; trial < 30; ++trial) {
      // A new tensor, transposed one time in two (a tensor that is not contiguous).
      ember::Shape shape = random_shape(gen);
      if (kind == Kind::Transpose || kind == Kind::Slice) shape.push_back(2 + static_cast<int64_t>(gen.next_below(3)));
      std::vector<double> values(static_cast<size_t>(count(shape)));
      for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
      mini::Tensor x(values, shape);
      ember::Tensor ex = ember::tensor(values, shape);
      std::string chain = "a new tensor of shape " + show(shape) + " holding 0, 1, 2, ...";
      if (kind != Kind::View && shape.size() >= 2 && trial % 2 == 1) {
        x = mini::Tensor(x.storage(), {shape[1], shape[0]}, {1, shape[1]}, 0);  // its transpose, made by hand
        ex = ex.transpose(0, 1);
        chain += ", transposed";
        if (shape.size() > 2) continue;  // (by hand only for 2 dims)
      }
      ViewOp op{kind, {}};
      do op = random_view(ex, gen);
      while (op.kind != kind);
      compare_view(op, x, op.apply(x), ex, op.apply(ex), chain);
    }
}

void shares_storage() {
  mini::Tensor x({0, 1, 2, 3, 4, 5}, {2, 3});
  const mini::Tensor t = x.transpose(0, 1);
  t.at({2, 1}) = 50;
  check::expect(x.at({1, 2}) == 50, "after x.transpose(0, 1).at({2, 1}) = 50, x.at({1, 2}) is " +
                                        check::num(x.at({1, 2})) + ", not 50",
                "a view shares its storage: a write through it is a write into the tensor it views");
  x.at({0, 1}) = 10;
  const mini::Tensor s = x.slice(1, 1, 3);
  check::expect(s.at({0, 0}) == 10, "after x.at({0, 1}) = 10, x.slice(1, 1, 3).at({0, 0}) is " +
                                        check::num(s.at({0, 0})) + ", not 10");
  const mini::Tensor e = x.slice(0, 0, 1).expand({4, 3});
  x.at({0, 2}) = 7;
  for (int64_t i = 0; i < 4; ++i)
    check::expect(e.at({i, 2}) == 7, "after x.at({0, 2}) = 7, x.slice(0, 0, 1).expand({4, 3}).at({" +
                                         std::to_string(i) + ", 2}) is " + check::num(e.at({i, 2})) + ", not 7");
}

void refusals() {
  const mini::Tensor x({0, 1, 2, 3, 4, 5}, {2, 3});
  const mini::Tensor t = x.transpose(0, 1);
  yours::expect_refusal([&] { t.view({6}); }, {"view", "(3, 2)", "(6)"},
                        "x.transpose(0, 1).view({6}) (x of shape (2, 3))",
                        "a transposed tensor is not contiguous: view must refuse it, as ember's does");
  yours::expect_refusal([&] { x.view({4}); }, {"view", "(2, 3)", "(4)"}, "x.view({4}) (x of shape (2, 3))",
                        "a view has as many elements as the tensor: 6 is not 4");
  yours::expect_refusal([&] { x.expand({2, 4}); }, {"expand", "(2, 3)", "(2, 4)"}, "x.expand({2, 4}) (x of shape (2, 3))",
                        "only a dim of size 1 can be expanded: a size 3 cannot become 4");
  yours::expect_refusal([&] { x.permute({0, 0}); }, {"permute"}, "x.permute({0, 0})",
                        "dims must name each dim once");
  yours::expect_refusal([&] { x.transpose(0, 2); }, {"transpose"}, "x.transpose(0, 2) (x has 2 dims)",
                        "dim 2 does not exist in a tensor of 2 dims");
  yours::expect_refusal([&] { x.slice(1, 2, 4); }, {"slice"}, "x.slice(1, 2, 4) (dim 1 has size 3)",
                        "stop 4 is past the end of a dim of size 3");
  yours::expect_refusal([&] { x.position({2, 0}); }, {}, "x.position({2, 0}) (x of shape (2, 3))",
                        "index 2 is past the end of dim 0, of size 2: reading there would read another element, or "
                        "outside the storage");
  yours::expect_refusal([&] { x.position({1}); }, {}, "x.position({1}) (x has 2 dims)",
                        "an index has one position per dim");
}

check::Exercise strided() {
  using yours::step;
  return {"2", "Strided tensors", "docs/book/build_your_own/02_strided.md", {
    step("numel, contiguous strides and unravel, on 200 shapes with dims of size 1 and 0", shape_numbers),
    step("a new tensor: its layout, and each element at its position", new_tensor),
    step("position() and at() on 200 layouts made by hand (strides of 0, an offset)", position_by_hand),
    step("each view alone: transpose, permute, slice, expand, view, contiguous", each_view),
    step("a view shares its storage: a write through one is seen through the other", shares_storage),
    step("100 random chains of views, side by side with ember's", [] {
      int views = 0, refused = 0;
      for (uint64_t seed = 0; seed < 100; ++seed) random_chain(seed, views, refused);
      check::note(std::to_string(views) + " views agree with ember's; " + std::to_string(refused) +
                  " views of a tensor that is not contiguous were refused");
    }),
    step("what must be refused is refused, with a message naming the op and the shapes", refusals),
  }};
}

const yours::Stage stage{2, strided};

}  // namespace
